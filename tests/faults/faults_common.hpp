#pragma once
// Paths shared by the fault suite's tests: its recipes, and results directories in the test
// processes' scratch roots (<tmp>/smtlab-test-<pid>/), which the suite's last test searches QEMU
// command lines for.
#include <filesystem>
#include <string>

#include "scratch.hpp"
#include "checkout.hpp"

namespace smtlab::test {

// What every fault test's results directory path starts with, whatever process made it.
inline std::string scratch_prefix() { return (std::filesystem::temp_directory_path() / "smtlab-test-").string(); }

inline std::string faults_recipe(const std::string& name) {
  return (source_dir() / "tests/faults/recipes" / name).string();
}

// An empty directory for one test (removed when its process passes).
inline std::filesystem::path suite_dir(const std::string& name) { return scratch_dir("faults-" + name); }

}  // namespace smtlab::test
