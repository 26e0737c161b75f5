// libFuzzer target: the recipe parser (smtlab::recipe::load_recipe).
// The input is written as recipes/input.yaml in a private scratch tree whose kernels/, images/ and
// recipes/files/ are links into the source tree, so the shipped relative references resolve.
// Allowed outcomes: a Recipe, or a RecipeError / smtlab::Error / YAML::Exception. Anything else
// (another exception type, a crash, a sanitizer report) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include <yaml-cpp/exceptions.h>

#include "recipe/recipe_error.hpp"
#include "recipe/recipe_loader.hpp"
#include "util/error.hpp"

#ifndef SMTLAB_SOURCE_DIR
#error "build with -DSMTLAB_SOURCE_DIR=\"...\" (fuzz/build does)"
#endif

namespace fs = std::filesystem;

namespace {

fs::path g_root;
fs::path g_input;

void remove_scratch() {
  std::error_code ec;
  if (!g_root.empty()) fs::remove_all(g_root, ec);
}

void make_scratch() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/smtlab-fuzz-recipe.XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("recipe_fuzz: mkdtemp");
    std::abort();
  }
  g_root = templ;
  const fs::path src = SMTLAB_SOURCE_DIR;
  fs::create_directories(g_root / "recipes");
  fs::create_directory_symlink(src / "kernels", g_root / "kernels");
  fs::create_directory_symlink(src / "images", g_root / "images");
  fs::create_directory_symlink(src / "tests/recipe/broken/files", g_root / "recipes/files");
  g_input = g_root / "recipes/input.yaml";
  std::atexit(remove_scratch);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_root.empty()) make_scratch();
  {
    std::ofstream out(g_input, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) {
      std::fprintf(stderr, "recipe_fuzz: cannot write %s\n", g_input.c_str());
      std::abort();
    }
  }
  try {
    smtlab::recipe::Recipe r = smtlab::recipe::load_recipe(g_input);
    (void)r;
  } catch (const smtlab::Error&) {  // RecipeError included: the expected refusal
  } catch (const YAML::Exception& e) {
    static bool said = false;  // allowed by the brief, but worth knowing about
    if (!said) std::fprintf(stderr, "recipe_fuzz: note: YAML::Exception escaped load_recipe: %s\n", e.what());
    said = true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "recipe_fuzz: unexpected exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "recipe_fuzz: unexpected non-std exception\n");
    std::abort();
  }
  return 0;
}
