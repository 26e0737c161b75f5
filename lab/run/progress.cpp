#include "run/progress.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace smtlab::run {

using Clock = std::chrono::steady_clock;

std::string clock_time(double seconds) {
  long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

Progress::Progress(int cells, bool live)
    : cells_(cells), live_(live), run_start_(Clock::now()), cell_start_(run_start_), last_draw_(run_start_) {}

void Progress::start_cell(int k, const std::string& label) {
  current_ = k;
  label_ = label;
  iteration_.clear();
  cell_start_ = Clock::now();
  if (!live_) fmt::print(stderr, "smtlab: cell {}/{} {}: starting\n", k, cells_, label);
  draw(true);
}

void Progress::iteration(const std::string& what) {
  iteration_ = what;
  if (!live_) fmt::print(stderr, "smtlab: cell {}/{}: {}\n", current_, cells_, what);
  draw(true);
}

void Progress::tick() { draw(false); }

void Progress::end_cell(const std::string& state, const std::string& detail, int cells) {
  double secs = std::chrono::duration<double>(Clock::now() - cell_start_).count();
  done_ += cells;
  done_seconds_ += secs;
  if (live_) fmt::print(stderr, "\r\033[K");
  fmt::print(stderr, "smtlab: cell {}/{} {}: {} in {}{}\n", current_, cells_, label_, state,
             clock_time(secs), detail.empty() ? "" : " (" + detail + ")");
  std::fflush(stderr);
}

void Progress::message(const std::string& text) {
  if (live_) fmt::print(stderr, "\r\033[K");
  fmt::print(stderr, "smtlab: {}\n", text);
  draw(true);
}

void Progress::draw(bool force) {
  if (!live_) return;
  auto now = Clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(500)) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - run_start_).count();
  std::string eta = "?";
  if (done_ > 0) eta = clock_time(done_seconds_ / done_ * (cells_ - done_) -
                                  std::chrono::duration<double>(now - cell_start_).count());
  fmt::print(stderr, "\r\033[K[cell {}/{}] {}  {}  elapsed {}  ETA {}", current_, cells_, label_, iteration_,
             clock_time(elapsed), eta);
  std::fflush(stderr);
}

}  // namespace smtlab::run
