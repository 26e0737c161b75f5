#include "util/log.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace smtlab {

Steps::Steps(std::string what) : what_(std::move(what)), start_(std::chrono::steady_clock::now()) {}

double Steps::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Steps::step(const std::string& message) {
  fmt::print(stderr, "[{:7.1f}s] {}: {}\n", elapsed_s(), what_, message);
  std::fflush(stderr);
}

void note(const std::string& message) {
  fmt::print(stderr, "smtlab: {}\n", message);
  std::fflush(stderr);
}

}  // namespace smtlab
