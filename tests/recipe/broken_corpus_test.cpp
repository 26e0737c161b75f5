// Every file in tests/recipe/broken/ is a recipe with one mistake. Its first two lines say the exact
// error a user must see:
//   # expect: LINE:COLUMN: error: MESSAGE          (the error is in this file)
//   # expect-file: PATH | expect: LINE:COLUMN: ... (the error is in a file this one references)
//   # hint: HINT                                   ("(none)": no hint)
// The recipes are loaded from their own directory, as a user would run `smtlab plan x.yaml` there.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "recipe/recipe_loader.hpp"
#include "checkout.hpp"

namespace fs = std::filesystem;
using namespace smtlab::recipe;

namespace {

struct Expectation {
  std::string what, hint;
};

Expectation expectation_of(const fs::path& file) {
  std::ifstream in(file);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  Expectation e;
  const std::string expect = "# expect: ", expect_file = "# expect-file: ", hint = "# hint: ";
  if (first.rfind(expect, 0) == 0) {
    e.what = file.filename().string() + ":" + first.substr(expect.size());
  } else if (first.rfind(expect_file, 0) == 0) {
    std::string rest = first.substr(expect_file.size());
    auto bar = rest.find(" | expect: ");
    REQUIRE(bar != std::string::npos);
    e.what = rest.substr(0, bar) + ":" + rest.substr(bar + 11);
  } else {
    FAIL(file.string() + ": first line must be '# expect: ...' or '# expect-file: ... | expect: ...'");
  }
  REQUIRE(second.rfind(hint, 0) == 0);
  e.hint = second.substr(hint.size());
  if (e.hint == "(none)") e.hint.clear();
  return e;
}

}  // namespace

TEST_CASE("each broken recipe fails with its exact located error and hint") {
  const fs::path dir = smtlab::test::source_dir() / "tests/recipe/broken";
  std::vector<fs::path> files;
  for (const auto& de : fs::directory_iterator(dir))
    if (de.is_regular_file() && de.path().extension() == ".yaml") files.push_back(de.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 15);
  const fs::path saved = fs::current_path();
  fs::current_path(dir);
  for (const auto& file : files) {
    Expectation want = expectation_of(file);
    INFO(file.filename().string());
    bool threw = false;
    try {
      load_recipe(file.filename());
    } catch (const RecipeError& e) {
      threw = true;
      CHECK(std::string(e.what()) == want.what);
      CHECK(e.hint() == want.hint);
      CHECK(e.where().line > 0);
      CHECK(e.where().column > 0);
    }
    CHECK(threw);
  }
  fs::current_path(saved);
}
