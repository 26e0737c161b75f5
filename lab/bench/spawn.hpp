#pragma once
// Running a benchmark's child process with fork/exec and measuring it with wait4(): elapsed,
// user, sys, voluntary and involuntary context switches. Output can be streamed line by line.
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::bench {

struct SpawnOptions {
  std::string cwd;                          // empty: inherit
  std::map<std::string, std::string> env;   // added to (or overriding) the environment
  bool coresched = false;                   // give the child (and its descendants) a new core-sched cookie
  bool capture = true;                      // false: the child inherits stdout/stderr
  bool discard_output = false;              // true: child output goes to /dev/null
  double timeout_s = 0;                     // 0: none; else SIGKILL (whole process group) past it
  // Called per output line (stream 1 = stdout, 2 = stderr) when capture is on. Lines longer
  // than 4 KiB are split.
  std::function<void(int stream, std::string_view line)> on_line;
};

struct SpawnResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  double elapsed_s = 0, user_s = 0, sys_s = 0;
  long vcsw = 0, icsw = 0;   // voluntary / involuntary context switches (child and descendants)
  unsigned long long cookie = 0;  // the core-sched cookie the child ran with (coresched only)
  bool ok() const { return exit_code == 0 && !timed_out; }
};

// Runs argv[0] (PATH-searched) with the arguments verbatim. Throws smtlab::Error when it cannot
// be started (not found, or the core-sched cookie cannot be set: see coresched.hpp).
SpawnResult spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Like spawn, but throws smtlab::Error naming the command and the last output lines on failure.
SpawnResult spawn_checked(const std::vector<std::string>& argv, SpawnOptions options = {});

}  // namespace smtlab::bench
