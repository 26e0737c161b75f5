
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "kernel/patches.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;

namespace {
fs::path fake_tree() {
  fs::path d = smtlab::test::scratch_dir("patches");
  fs::create_directories(d / "tree/kernel");
  std::ofstream(d / "tree/kernel/version.c") << "line one\nline two\nline three\nline four\n";
  return d;
}
void put(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }
}  // namespace

TEST_CASE("patches apply in order") {
  auto d = fake_tree();
  put(d / "0001-a.patch",
      "--- a/kernel/version.c\n+++ b/kernel/version.c\n@@ -1,4 +1,5 @@\n line one\n+line one and a half\n line two\n"
      " line three\n line four\n");
  put(d / "0002-b.patch",
      "--- a/kernel/version.c\n+++ b/kernel/version.c\n@@ -3,3 +3,3 @@\n line two\n-line three\n+line 3\n line four\n");
  smtlab::kernel::apply_patches(d / "tree", {d / "0001-a.patch", d / "0002-b.patch"});
  CHECK(smtlab::read_file(d / "tree/kernel/version.c") ==
        "line one\nline one and a half\nline two\nline 3\nline four\n");
}

TEST_CASE("a patch that does not apply stops naming the file and the failing hunk") {
  auto d = fake_tree();
  put(d / "0001-good.patch",
      "--- a/kernel/version.c\n+++ b/kernel/version.c\n@@ -1,2 +1,2 @@\n-line one\n+line 1\n line two\n");
  put(d / "0002-stale.patch",
      "--- a/kernel/version.c\n+++ b/kernel/version.c\n@@ -3,2 +3,2 @@\n-line tree\n+line 3\n line four\n");
  try {
    smtlab::kernel::apply_patches(d / "tree", {d / "0001-good.patch", d / "0002-stale.patch"});
    FAIL("expected an error");
  } catch (const smtlab::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("0002-stale.patch does not apply") != std::string::npos);
    CHECK(msg.find("Hunk #1 FAILED") != std::string::npos);
    CHECK(msg.find("0001-good") == std::string::npos);
  }
  // The good patch applied, the stale one left no trace (no .rej, no partial change).
  CHECK(smtlab::read_file(d / "tree/kernel/version.c") == "line 1\nline two\nline three\nline four\n");
  CHECK_FALSE(fs::exists(d / "tree/kernel/version.c.rej"));
}

TEST_CASE("a missing patch file is an error naming it") {
  auto d = fake_tree();
  CHECK_THROWS_WITH(smtlab::kernel::apply_patches(d / "tree", {d / "nope.patch"}), Catch::Contains("nope.patch"));
}
