#pragma once
// hackbench from Debian's rt-tests: `hackbench -g G -l L -f F [-T] [-p]` per group count,
// "Time: S" parsed into sample time-G (s, lower is better).
#include <optional>
#include <string>
#include <vector>

#include "bench/observer.hpp"

namespace smtlab::bench {

struct HackbenchOptions {
  std::vector<int> groups{1};
  int loops = 100;
  int fds = 20;
  bool threads = false;  // -T
  bool pipes = false;    // -p
  int iterations = 3;
  bool coresched = false;
  std::string program = "hackbench";
  double timeout_s = 3600;
};

std::vector<std::string> hackbench_argv(const HackbenchOptions& o, int groups);
// The seconds from hackbench's "Time: S" line, if any.
std::optional<double> parse_hackbench_time(const std::string& output);
// Runs every group count for every iteration; throws smtlab::Error when hackbench is missing,
// fails, or prints no Time line.
void run_hackbench(const HackbenchOptions& options, Observer& observer);

}  // namespace smtlab::bench
