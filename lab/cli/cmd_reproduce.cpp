// smtlab reproduce RESULTS_DIR: the same recipe with the same pinned artifacts and the same cells
// (iterations included), then the comparison of the original against the reproduction.
#include <iostream>
#include <iterator>
#include <set>

#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "cli/run_end.hpp"
#include "plan/plan.hpp"
#include "recipe/recipe_loader.hpp"
#include "results/results.hpp"
#include "run/runner.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"
#include "util/utc.hpp"
#include "vm/interrupt.hpp"

namespace smtlab::cli {

namespace fs = std::filesystem;

namespace {

// "results/x/" (and "results/x/.") -> "results/x"; ".", ".." and "x/.." -> the absolute directory,
// so that a name can be derived from the last component.
fs::path directory_path(const std::string& text) {
  auto strip = [](fs::path p) { return !p.has_filename() && p.has_relative_path() ? p.parent_path() : p; };
  fs::path p = strip(fs::path(text).lexically_normal());
  if (p.filename() == "." || p.filename() == "..") p = strip(fs::absolute(p).lexically_normal());
  return p;
}

// True when `inner` is `outer` or below it (symbolic links resolved as far as the paths exist).
bool within(const fs::path& inner, const fs::path& outer) {
  const fs::path i = fs::weakly_canonical(inner), o = fs::weakly_canonical(outer);
  auto ii = i.begin();
  for (auto oi = o.begin(); oi != o.end(); ++oi, ++ii)
    if (oi->empty() && std::next(oi) == o.end()) return true;  // a trailing separator
    else if (ii == i.end() || *ii != *oi) return false;
  return true;
}

}  // namespace

void add_reproduce_command(CLI::App& app) {
  struct Options {
    std::string dir, output, connect, remote_dir;
    bool resume = false, retry_failed = false;
    CompareFlags compare;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("reproduce", "Re-run a results directory's recipe with the same pinned kernels and image");
  cmd->add_option("dir", opt->dir, "Results directory to reproduce")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", opt->output,
                  "Results directory of the reproduction (default: <dir>-reproduced-<UTC time>, next to <dir>)");
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
    const fs::path dir = directory_path(opt->dir);  // "r/orig/" is r/orig, its reproduction r/orig-reproduced-...
    const std::string dir_text = dir.string();
    auto original = results::load_results(dir);
    const auto& m = original.manifest;
    const nlohmann::json recipe_entry = m.value("recipe", nlohmann::json::object());
    auto file = recipe_entry.is_object() ? recipe_entry.value("file", std::string()) : std::string();
    auto sha = recipe_entry.is_object() ? recipe_entry.value("sha256", std::string()) : std::string();
    if (file.empty() || !fs::exists(file))
      throw Error("the recipe of " + dir_text + " (" + file + ") is not on this machine",
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
    ro.output = opt->output.empty() ? dir.parent_path() / (dir.filename().string() + "-reproduced-" + utc_now("%Y%m%d-%H%M%S"))
                                    : fs::path(opt->output);
    if (within(ro.output, dir))
      throw UsageError("the reproduction's directory " + ro.output.string() + " is inside the original results " +
                           dir_text,
                       "give -o a directory outside it (the default is next to it: " + dir_text + "-reproduced-<time>)");
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
    // The same cells: iterations are part of a cell's id, and a run made with --iterations N
    // recorded N for every cell (without it, each cell has its benchmark's, which the plan gives).
    std::set<int> iterations;
    for (const auto& cell : original.cells)
      if (cell.entry.is_object() && cell.entry.contains("iterations") && cell.entry["iterations"].is_number_integer())
        iterations.insert(cell.entry["iterations"].get<int>());
    if (iterations.size() == 1 && *iterations.begin() > 0) ro.plan.iterations = *iterations.begin();
    std::set<std::string> planned;
    for (const auto& cell : plan::make_plan(recipe, ro.plan).cells) planned.insert(cell.id);
    std::string missing;
    for (const auto& cell : original.cells)
      if (!planned.count(cell.id)) missing += (missing.empty() ? "" : ", ") + cell.id;
    if (!missing.empty())
      throw Error("cell(s) " + missing + " of " + dir_text + " are not cells of " + file + " any more",
                  "a file their definition covers (a kernel definition, config fragment or patch) changed since the "
                  "run: check out the commit the run was made from");
    for (const auto& cell : original.cells) ro.plan.filters.push_back(cell.id);
    // A --baseline that names no column of the original and the reproduction is refused before
    // the reproduction runs (the other comparison flags were checked while parsing).
    if (!opt->compare.baseline.empty()) check_baseline({original, results_to_be(recipe, ro)}, opt->compare);
    auto summary = run::run_recipe(recipe, ro);
    // The same end as run's: failed cells exit 4, an interrupt 130 with the command that finishes it.
    RunEnd end;
    end.what = "reproduction: ";
    end.again = "smtlab reproduce " + shell_word(dir_text);
    if (!opt->connect.empty()) end.again += " --connect " + shell_word(opt->connect);
    if (!opt->remote_dir.empty()) end.again += " --remote-dir " + shell_word(opt->remote_dir);
    end.again += " -o " + shell_word(summary.dir.string());
    end.compare = {dir, summary.dir};
    exit_status() = finish_run(summary, end, opt->compare);
  });
}

}  // namespace smtlab::cli
