// smtlab run RECIPE [-o DIR] [--cells FILTER] [--iterations N] [--resume [--retry-failed]] [--connect URI] [--remote-dir DIR] [--shard K/N]
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "cli/run_end.hpp"
#include "recipe/recipe_loader.hpp"
#include "run/runner.hpp"
#include "util/error.hpp"
#include "vm/interrupt.hpp"

namespace smtlab::cli {

// "2/4" -> {1, 4} (0-based index).
static std::pair<int, int> parse_shard(const std::string& text) {
  auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      int k = std::stoi(text.substr(0, slash)), n = std::stoi(text.substr(slash + 1));
      if (n >= 1 && k >= 1 && k <= n) return {k - 1, n};
    }
  } catch (const std::exception&) {
  }
  throw Error("--shard " + text + " is not K/N with 1 <= K <= N", "for example --shard 1/4");
}

void add_run_command(CLI::App& app) {
  struct Options {
    std::string recipe, output, connect, shard, remote_dir;
    std::vector<std::string> cells;
    int iterations = 0;
    bool resume = false, retry_failed = false, no_compare = false;
    CompareFlags compare;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("run", "Run a recipe's cells into a results directory, then print the comparison");
  cmd->add_option("recipe", opt->recipe, "Recipe file (YAML)")->required();
  cmd->add_option("-o,--output", opt->output, "Results directory (default: results/<recipe>-<UTC time>)");
  cmd->add_option("--cells", opt->cells, "Only cells matching: an id prefix, variant=X, topology=Y or benchmark=Z (repeat)")
      ->allow_extra_args(false);
  cmd->add_option("--iterations", opt->iterations, "Override every benchmark's iterations")->check(CLI::Range(1, 1000));
  auto* resume =
      cmd->add_flag("--resume", opt->resume, "Finish an interrupted run in -o DIR without redoing finished cells");
  cmd->add_flag("--retry-failed", opt->retry_failed,
                "With --resume: run the failed cells again too (each failed attempt is kept in DIR/attempts/<cell>/<n>/)")
      ->needs(resume);
  cmd->add_option("--connect", opt->connect, "libvirt URI (default: the embedded QEMU driver, no daemon)");
  cmd->add_option("--remote-dir", opt->remote_dir,
                  "Remote libvirt hosts: directory of the staging pool there (default /var/lib/smtlab/staging)");
  cmd->add_option("--shard", opt->shard, "Run only shard K of N of the cells (K/N), for fan-out over machines")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              parse_shard(text);
              return {};
            } catch (const Error&) {
              return text + " is not K/N with 1 <= K <= N (for example 1/4)";
            }
          },
          ""));
  cmd->add_flag("--no-compare", opt->no_compare, "Do not print the comparison at the end");
  add_compare_flags(cmd, opt->compare, false);
  add_regression_flag(cmd, opt->compare);
  cmd->callback([opt] {
    vm::install_interrupt_handlers();
    if (opt->resume && opt->output.empty())
      throw UsageError("--resume needs the results directory of the run to finish", "add -o DIR");
    auto recipe = recipe::load_recipe(opt->recipe);
    run::RunOptions ro;
    ro.output = opt->output;
    ro.plan.filters = opt->cells;
    ro.plan.iterations = opt->iterations;
    if (!opt->shard.empty()) std::tie(ro.plan.shard_index, ro.plan.shard_count) = parse_shard(opt->shard);
    ro.resume = opt->resume;
    ro.retry_failed = opt->retry_failed;
    ro.connect = opt->connect;
    ro.remote_dir = opt->remote_dir;
    ro.live_progress = ::isatty(2);
    // Everything about the comparison that can be checked is checked before the first cell runs
    // (a typo must not cost the run): the flags' values while parsing, the baseline here against
    // the columns the results will have (hence the directory's name now, as run_recipe would).
    if (ro.output.empty()) ro.output = run::default_results_dir(recipe);
    if (!opt->no_compare && !opt->compare.baseline.empty()) check_baseline({results_to_be(recipe, ro)}, opt->compare);
    auto summary = run::run_recipe(recipe, ro);
    RunEnd end;
    // Resuming needs the same cells (and connection): the hints repeat what selected them.
    end.again = "smtlab run " + shell_word(opt->recipe);
    for (const auto& c : opt->cells) end.again += " --cells " + shell_word(c);
    if (opt->iterations > 0) end.again += " --iterations " + std::to_string(opt->iterations);
    if (!opt->shard.empty()) end.again += " --shard " + shell_word(opt->shard);
    if (!opt->connect.empty()) end.again += " --connect " + shell_word(opt->connect);
    if (!opt->remote_dir.empty()) end.again += " --remote-dir " + shell_word(opt->remote_dir);
    end.again += " -o " + shell_word(summary.dir.string());
    if (!opt->no_compare) end.compare = {summary.dir};
    exit_status() = finish_run(summary, end, opt->compare);
  });
}

}  // namespace smtlab::cli
