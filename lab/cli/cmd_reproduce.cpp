// smtlab reproduce RESULTS_DIR: the same recipe with the same pinned artifacts, then the
// comparison of the original against the reproduction.

#include <iostream>

#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "cli/run_end.hpp"
#include "recipe/recipe_loader.hpp"
#include "results/results.hpp"
#include "run/runner.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"
#include "vm/interrupt.hpp"

namespace smtlab::cli {

void add_reproduce_command(CLI::App& app) {
  struct Options {
    std::string dir, output, connect, remote_dir;
    bool resume = false, retry_failed = false;
    CompareFlags compare;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("reproduce", "Re-run a results directory's recipe with the same pinned kernels and image");
  cmd->add_option("dir", opt->dir, "Results directory to reproduce")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", opt->output, "Results directory of the reproduction (default: <dir>-reproduced-<time>)");
  cmd->add_option("--connect", opt->connect, "libvirt URI (default: the embedded QEMU driver)");
  cmd->add_option("--remote-dir", opt->remote_dir,
                  "with a remote --connect: the staging directory on that host (default /var/lib/smtlab/staging)");
  auto* resume = cmd->add_flag("--resume", opt->resume,
                               "Finish an interrupted reproduction in -o DIR without redoing finished cells");
  cmd->add_flag("--retry-failed", opt->retry_failed,
                "With --resume: run the failed cells again too (each failed attempt is kept in DIR/attempts/<cell>/<n>/)")
      ->needs(resume);
  add_compare_flags(cmd, opt->compare, false);
  cmd->callback([opt] {
    vm::install_interrupt_handlers();
    if (opt->resume && opt->output.empty())
      throw UsageError("--resume needs the directory of the reproduction to finish", "add -o DIR");
    auto original = results::load_results(opt->dir);
    const auto& m = original.manifest;
    auto file = m["recipe"].value("file", std::string());
    auto sha = m["recipe"].value("sha256", std::string());
    if (file.empty() || !std::filesystem::exists(file))
      throw Error("the recipe of " + opt->dir + " (" + file + ") is not on this machine",
                  "check out the repository the run was made from, at the same commit");
    auto recipe = recipe::load_recipe(file);
    if (recipe.sha256 != sha)
      throw Error(file + " changed since the run (sha256 " + recipe.sha256.substr(0, 12) + ", the run used " +
                      sha.substr(0, 12) + ")",
                  "check out the commit the run was made from");
    run::RunOptions ro;
    ro.resume = opt->resume;
    ro.retry_failed = opt->retry_failed;
    ro.connect = opt->connect;
    ro.remote_dir = opt->remote_dir;
    ro.output = opt->output.empty() ? std::filesystem::path(opt->dir + "-reproduced") : std::filesystem::path(opt->output);
    // Pin every kernel to the exact package version the original run used; the run then
    // refuses when the downloaded package's sha256 differs.
    for (const auto& [name, spec] : recipe.kernels) {
      if (!m.contains("kernels") || !m["kernels"].contains(name)) continue;
      const auto& k = m["kernels"][name];
      if (spec.source == recipe::KernelSource::debian)
        ro.kernel_pins[name] = {k.value("package", spec.package), k.value("version", spec.version)};
      ro.expect_kernel_sha256[name] = k.value("sha256", std::string());
    }
    if (m.contains("image")) ro.expect_image_digest = m["image"].value("digest", std::string());
    for (const auto& cell : original.cells) ro.plan.filters.push_back(cell.id);
    // A --baseline that names no column of the original and the reproduction is refused before
    // the reproduction runs (the other comparison flags were checked while parsing).
    if (!opt->compare.baseline.empty()) check_baseline({original, results_to_be(recipe, ro)}, opt->compare);
    auto summary = run::run_recipe(recipe, ro);
    // The same end as run's: failed cells exit 4, an interrupt 130 with the command that finishes it.
    RunEnd end;
    end.what = "reproduction: ";
    end.again = "smtlab reproduce " + opt->dir + " -o " + summary.dir.string();
    end.compare = {opt->dir, summary.dir};
    exit_status() = finish_run(summary, end, opt->compare);
  });
}

}  // namespace smtlab::cli
