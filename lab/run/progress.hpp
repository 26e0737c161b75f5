#pragma once
// Progress of a run: a live line on a terminal (cell k/n, iteration, elapsed, ETA), plain log
// lines otherwise (CI logs, pipes).
#include <chrono>
#include <string>

namespace smtlab::run {

class Progress {
 public:
  Progress(int cells, bool live);
  void start_cell(int k, const std::string& label);  // k is 1-based
  void iteration(const std::string& what);           // "kernbench -j4 iteration 2"
  void tick();                                       // redraws the live line (throttled)
  // state: ok, FAILED, interrupted; `cells`: how many cells this finished (a shared boot's group).
  void end_cell(const std::string& state, const std::string& detail, int cells = 1);
  void message(const std::string& text);             // a log line that does not break the live line

 private:
  void draw(bool force);
  int cells_;
  bool live_;
  int current_ = 0;
  int done_ = 0;
  double done_seconds_ = 0;
  std::string label_, iteration_;
  std::chrono::steady_clock::time_point run_start_, cell_start_, last_draw_;
};

// "1:02:03" / "4:05".
std::string clock_time(double seconds);

}  // namespace smtlab::run
