#include "scratch.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <system_error>

namespace smtlab::test {

std::filesystem::path scratch_root() {
  return std::filesystem::temp_directory_path() / ("smtlab-test-" + std::to_string(::getpid()));
}

std::filesystem::path scratch_path(const std::string& name) {
  static std::atomic<int> serial{0};
  auto path = scratch_root() / (std::to_string(++serial) + "-" + name);
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path.parent_path());
  return path;
}

std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = scratch_path(name);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string finish_scratch(bool passed) {
  const auto root = scratch_root();
  std::error_code ec;
  if (!std::filesystem::exists(root, ec)) return "";
  const char* keep = std::getenv("SMTLAB_KEEP_TEST_DIRS");
  if (passed && (keep == nullptr || *keep == '\0')) {
    std::filesystem::remove_all(root, ec);
    if (!ec) return "";
  }
  return root.string();
}

}  // namespace smtlab::test
