#include "util/log.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <mutex>

namespace smtlab {

Steps::Steps(std::string what) : what_(std::move(what)), start_(std::chrono::steady_clock::now()) {}

double Steps::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Steps::step(const std::string& message) {
  fmt::print(stderr, "[{:7.1f}s] {}: {}\n", elapsed_s(), what_, message);
  std::fflush(stderr);
}

namespace {
std::mutex note_mutex;
std::function<void(const std::string&)> note_sink;
}  // namespace

void note(const std::string& message) {
  std::lock_guard lock(note_mutex);
  if (note_sink) {
    note_sink(message);
    return;
  }
  fmt::print(stderr, "smtlab: {}\n", message);
  std::fflush(stderr);
}

void set_note_sink(std::function<void(const std::string&)> sink) {
  std::lock_guard lock(note_mutex);
  note_sink = std::move(sink);
}

}  // namespace smtlab
