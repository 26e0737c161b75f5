#pragma once
// Progress for long work: "[  12.3s] step ..." lines on stderr.
#include <chrono>
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

// A line on stderr, prefixed with "smtlab: ".
void note(const std::string& message);

}  // namespace smtlab
