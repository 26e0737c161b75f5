#pragma once
// Debian package names that more than one module picks out of an image's installed packages.
#include <algorithm>
#include <string_view>

namespace smtlab {

// The guest's C compiler, what kernbench's times depend on: "gcc", or "gcc-<major>" ("gcc-12";
// not "gcc-12-base" or "libgcc-s1").
inline bool is_gcc_package(std::string_view name) {
  if (name == "gcc") return true;
  if (name.size() <= 4 || name.substr(0, 4) != "gcc-") return false;
  return std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace smtlab
