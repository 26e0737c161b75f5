#pragma once
// Running the smtlab binary from tests: to completion, or in the background with its stderr in a
// file, so a test can wait for a line and then signal it.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scratch.hpp"  // scratch_dir(): a test's results directories

namespace smtlab::test {

std::string smtlab_binary();
std::string test_recipe(const std::string& name);  // tests/cli/recipes/<name>

struct Finished {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
};
// `env`: added to (or overriding) this process's environment for that run.
Finished run_smtlab(const std::vector<std::string>& args, std::chrono::seconds timeout = std::chrono::seconds(1500),
                    const std::map<std::string, std::string>& env = {});

class Background {
 public:
  explicit Background(const std::vector<std::string>& args);
  ~Background();  // kills it if still running
  pid_t pid() const { return pid_; }
  std::string err() const;  // what it wrote to stderr so far
  bool wait_for_err(const std::string& text, std::chrono::seconds timeout) const;
  int wait(std::chrono::seconds timeout);  // exit status (128 + signal); -1 on timeout

 private:
  pid_t pid_ = -1;
  std::filesystem::path err_file_;
  int status_ = -2;
};

// PIDs of qemu-system processes whose command line contains `needle`.
std::vector<int> qemu_processes(const std::string& needle);
nlohmann::json read_json(const std::filesystem::path& file);

// What a failed run's reader needs first, in a few lines: each cell of the results directory that
// is not ok with its error and the last console lines, then the tail of smtlab's stderr.
std::string run_failure_summary(const std::filesystem::path& results_dir, const std::string& err);

}  // namespace smtlab::test
