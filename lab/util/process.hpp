#pragma once
// Running real tools (qemu-img, mmdebstrap, apt-get, ...) without a shell: argv in, status out.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace smtlab {

struct ProcessOptions {
  std::filesystem::path cwd;                        // empty: inherit
  std::map<std::string, std::string> env;           // added to (or overriding) the environment
  std::optional<std::chrono::milliseconds> timeout;  // killed (SIGKILL, whole group) past this
  bool capture_stdout = true;                       // false: inherit the caller's stdout
  bool capture_stderr = true;                       // false: inherit the caller's stderr
  size_t max_capture = 16 << 20;                    // bytes kept per stream; the rest is dropped
  std::string stdin_data;                           // written to the child's stdin, then closed
};

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
  bool ok() const { return exit_code == 0 && !timed_out; }
};

// Runs argv[0] (searched in PATH) with the arguments as given: no shell, nothing to quote.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Like run_process, but throws smtlab::Error naming the command and the tail of its stderr
// when it does not exit 0.
ProcessResult run_checked(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// The command as a user could paste it into a shell (each argument single-quoted where needed).
std::string shell_quote(const std::vector<std::string>& argv);

// Full path of a program in PATH (or the usual sbin directories), if present.
std::optional<std::filesystem::path> find_program(const std::string& name);

}  // namespace smtlab
