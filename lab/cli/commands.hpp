#pragma once
// Each subcommand registers itself on the app; its callback stores the exit status here.
#include <CLI/CLI.hpp>

#include "util/error.hpp"

namespace smtlab::cli {

// Exit statuses users and CI scripts can rely on.
enum Exit : int {
  kOk = 0,
  kError = 1,            // bad input or a failure before anything was measured
  kUsage = 2,            // wrong command-line arguments
  kRegression = 3,       // --fail-on-regression tripped
  kCellsFailed = 4,      // the run finished, but some cells failed (their results are kept)
  kInterrupted = 130,    // stopped by SIGINT/SIGTERM; finish with --resume
};

int& exit_status();

// A command line that cannot work, found by a command's own checks (those CLI11 cannot make, e.g.
// a --baseline that names no column of the plan): main prints it like any error, with its hint,
// and exits kUsage. Throw it before anything is measured.
class UsageError : public Error {
 public:
  using Error::Error;
};

void add_plan_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_kernel_command(CLI::App& app);
void add_image_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_boot_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_reproduce_command(CLI::App& app);

}  // namespace smtlab::cli
