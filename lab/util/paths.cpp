#include "util/paths.hpp"

#include <cstdlib>

namespace smtlab {

std::filesystem::path cache_dir() {
  std::filesystem::path dir;
  if (const char* c = std::getenv("SMTLAB_CACHE"); c && *c) dir = c;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::filesystem::path(x) / "smtlab";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::filesystem::path(h) / ".cache" / "smtlab";
  else dir = "/var/cache/smtlab";
  std::filesystem::create_directories(dir);
  return std::filesystem::absolute(dir);
}

std::filesystem::path project_dir() {
  if (const char* h = std::getenv("SMTLAB_HOME"); h && *h) return h;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (std::filesystem::is_directory(dir / "kernels") && std::filesystem::is_directory(dir / "recipes"))
      return dir;
  }
  return std::filesystem::current_path();
}

}  // namespace smtlab
