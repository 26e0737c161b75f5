#include "bench/hackbench.hpp"

#include <cstdlib>
#include <sstream>

#include "bench/spawn.hpp"
#include "util/error.hpp"

namespace smtlab::bench {

std::vector<std::string> hackbench_argv(const HackbenchOptions& o, int groups) {
  std::vector<std::string> a = {o.program, "-g", std::to_string(groups), "-l", std::to_string(o.loops),
                                "-f", std::to_string(o.fds)};
  if (o.threads) a.push_back("-T");
  if (o.pipes) a.push_back("-p");
  return a;
}

std::optional<double> parse_hackbench_time(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  std::optional<double> t;
  while (std::getline(in, line)) {
    auto p = line.find("Time:");
    if (p == std::string::npos) continue;
    const char* s = line.c_str() + p + 5;
    char* end = nullptr;
    double v = std::strtod(s, &end);
    if (end != s && v >= 0) t = v;
  }
  return t;
}

void run_hackbench(const HackbenchOptions& o, Observer& observer) {
  for (int g : o.groups)
    for (int it = 1; it <= o.iterations; ++it) {
      observer.before_iteration("hackbench-g" + std::to_string(g) + "-" + std::to_string(it));
      observer.event("iteration-start", {{"benchmark", "hackbench"}, {"groups", g}, {"iteration", it}});
      std::string out;
      SpawnOptions so;
      so.coresched = o.coresched;
      so.timeout_s = o.timeout_s;
      so.on_line = [&](int, std::string_view line) {
        if (out.size() < (1 << 16)) out.append(line).append("\n");
      };
      auto argv = hackbench_argv(o, g);
      spawn_checked(argv, so);
      auto t = parse_hackbench_time(out);
      if (!t) throw Error("hackbench printed no \"Time:\" line (output: " + out.substr(0, 300) + ")");
      observer.event("iteration-end", {{"benchmark", "hackbench"}, {"groups", g}, {"iteration", it}});
      observer.sample({"hackbench", it, false, "time-" + std::to_string(g), *t, "s", "lower"});
    }
}

}  // namespace smtlab::bench
