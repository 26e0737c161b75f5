#include "run/progress.hpp"

#include <fmt/core.h>

#include <cstdio>

#include "util/log.hpp"
#include "util/utf8.hpp"

namespace smtlab::run {

std::string clock_time(double seconds) {
  long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string sample_text(const std::string& metric, double value, const std::string& unit) {
  std::string text = fmt::format("{} {:.2f}", printable_line(metric, 64), value);
  if (!unit.empty() && unit != metric) text += " " + printable_line(unit, 32);
  return text;
}

Progress::Progress(int cells, bool live, std::FILE* out)
    : cells_(cells), live_(live), out_(out), run_start_(Clock::now()), last_draw_(run_start_) {
  if (live_) set_note_sink([this](const std::string& text) { message(text); });
}

Progress::~Progress() {
  if (live_) set_note_sink({});
}

void Progress::start_cell(int k, const std::string& label) {
  std::lock_guard lock(mutex_);
  running_[k] = Running{label, "", Clock::now()};
  if (live_) fmt::print(out_, "\r\033[K");
  if (!live_ || running_.size() > 1) fmt::print(out_, "smtlab: cell {}/{} {}: starting\n", k, cells_, label);
  draw(true);
}

void Progress::iteration(int k, const std::string& what) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(k);
  if (it != running_.end()) it->second.iteration = what;
  if (!live_) fmt::print(out_, "smtlab: cell {}/{}: {}\n", k, cells_, what);
  draw(true);
}

void Progress::measured(int k, const std::string& what) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(k);
  const std::string iteration = it == running_.end() ? std::string() : it->second.iteration;
  if (live_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "smtlab: cell {}/{}: {}{}\n", k, cells_, iteration.empty() ? "" : iteration + ": ", what);
  draw(true);
}

void Progress::tick() {
  std::lock_guard lock(mutex_);
  draw(false);
}

void Progress::end_cell(int k, const std::string& state, const std::string& detail, int cells,
                        const std::string& after) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(k);
  auto now = Clock::now();
  double secs = it == running_.end() ? 0 : std::chrono::duration<double>(now - it->second.start).count();
  std::string label = it == running_.end() ? std::string() : it->second.label;
  if (it != running_.end()) running_.erase(it);
  done_ += cells;
  if (live_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "smtlab: cell {}/{} {}: {} in {}{}\n{}", k, cells_, label, state, clock_time(secs),
             detail.empty() ? "" : " (" + detail + ")", after);
  draw(true);
  std::fflush(out_);
}

void Progress::message(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (live_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "smtlab: {}\n", text);
  draw(true);
}

void Progress::draw(bool force) {
  if (!live_ || running_.empty()) return;
  auto now = Clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(500)) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - run_start_).count();
  // The run so far per finished cell, times the cells left (boots that overlap count once).
  std::string eta = done_ > 0 ? clock_time(elapsed / done_ * (cells_ - done_)) : "?";
  const auto& [k, first] = *running_.begin();
  std::string more = running_.size() > 1 ? fmt::format(" (+{} running)", running_.size() - 1) : "";
  fmt::print(out_, "\r\033[K[cell {}/{}] {}  {}{}  elapsed {}  ETA {}", k, cells_, first.label, first.iteration, more,
             clock_time(elapsed), eta);
  std::fflush(out_);
}

}  // namespace smtlab::run
