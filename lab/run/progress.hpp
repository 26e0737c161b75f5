#pragma once
// Progress of a run: a live line on a terminal (cell k/n, iteration, elapsed, ETA), plain log
// lines otherwise (CI logs, pipes). Several boots may run at once (recipe parallel): each is
// named by k, the 1-based plan position of its first cell. Thread-safe.
#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace smtlab::run {

class Progress {
 public:
  Progress(int cells, bool live);
  void start_cell(int k, const std::string& label);
  void iteration(int k, const std::string& what);    // "-j4 iteration 2"
  void tick();                                       // redraws the live line (throttled)
  // state: ok, FAILED, interrupted; `cells`: how many cells this finished (a shared boot's group).
  void end_cell(int k, const std::string& state, const std::string& detail, int cells = 1);
  void message(const std::string& text);             // a log line that does not break the live line

 private:
  using Clock = std::chrono::steady_clock;
  struct Running {
    std::string label, iteration;
    Clock::time_point start;
  };
  void draw(bool force);  // with mutex_ held
  std::mutex mutex_;
  int cells_;
  bool live_;
  int done_ = 0;
  std::map<int, Running> running_;
  Clock::time_point run_start_, last_draw_;
};

// "1:02:03" / "4:05".
std::string clock_time(double seconds);

}  // namespace smtlab::run
