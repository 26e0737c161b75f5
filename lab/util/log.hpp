#pragma once
// Progress for long work: "[  12.3s] step ..." lines on stderr.
#include <chrono>
#include <functional>
#include <string>

namespace smtlab {

class Steps {
 public:
  explicit Steps(std::string what);
  void step(const std::string& message);  // prints the step with the elapsed time
  double elapsed_s() const;

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_;
};

// A line on stderr, prefixed with "smtlab: ", or given to the note sink while one is set.
void note(const std::string& message);

// Where notes go instead of stderr while something owns the terminal's last line (run's live
// progress line, which a plain note would be written into): `sink` gets the message without the
// prefix. An empty function restores stderr. Thread-safe; the sink is not called concurrently.
void set_note_sink(std::function<void(const std::string&)> sink);

}  // namespace smtlab
