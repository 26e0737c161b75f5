#pragma once
// Paths shared by the fault suite's tests: its recipes, and results directories under one root
// that the suite's last test searches QEMU command lines for.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace smtlab::test {

inline const std::filesystem::path kFaultsRoot = "/tmp/smtlab-faults";

inline std::string faults_recipe(const std::string& name) {
  return std::string(SMTLAB_SOURCE_DIR) + "/tests/faults/recipes/" + name;
}

// An empty directory for one test: /tmp/smtlab-faults/<name>-<pid>.
inline std::filesystem::path suite_dir(const std::string& name) {
  auto dir = kFaultsRoot / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace smtlab::test
