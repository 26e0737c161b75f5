#pragma once
// Progress of a run: a live line on a terminal (cell k/n, iteration, elapsed, ETA), plain log
// lines otherwise (CI logs, pipes). Several boots may run at once (recipe parallel): each is
// named by k, the 1-based plan position of its first cell. Thread-safe.
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace smtlab::run {

class Progress {
 public:
  // A live Progress takes smtlab's notes (util/log.hpp) while it exists, and writes them above
  // its line.
  Progress(int cells, bool live, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void start_cell(int k, const std::string& label);
  void iteration(int k, const std::string& what);    // "-j4 iteration 2"
  // What the iteration named last measured ("elsp-4 10.96 s"): a log line in both modes.
  void measured(int k, const std::string& what);
  void tick();                                       // redraws the live line (throttled)
  // state: ok, FAILED, interrupted; `cells`: how many cells this finished (a shared boot's group);
  // `after`: lines that go with the end line (each ending in a newline), written with it.
  void end_cell(int k, const std::string& state, const std::string& detail, int cells = 1,
                const std::string& after = {});
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
  std::FILE* out_;
  int done_ = 0;
  std::map<int, Running> running_;
  Clock::time_point run_start_, last_draw_;
};

// "1:02:03" / "4:05".
std::string clock_time(double seconds);

// A sample as the progress says it: "elsp-2 10.96 s", "msgs/s 3396.10" (no unit that repeats the
// metric's name). The guest's strings are shortened and have their control characters replaced.
std::string sample_text(const std::string& metric, double value, const std::string& unit);

}  // namespace smtlab::run
