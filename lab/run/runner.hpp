#pragma once
// `smtlab run`: a recipe's cells, in plan order, into a results directory. A failed cell is
// recorded and the run goes on; an interrupt stops after tearing the current cell down, keeping
// everything measured; --resume finishes the cells that did not finish.
#include <filesystem>
#include <string>

#include <map>

#include "plan/plan.hpp"
#include "run/artifacts.hpp"
#include "recipe/recipe.hpp"

namespace smtlab::run {

struct RunOptions {
  std::filesystem::path output;  // empty: $SMTLAB_RESULTS (or ./results) / <recipe>-<UTC time>
  plan::PlanOptions plan;
  bool resume = false;          // output must hold an unfinished run of the same recipe
  bool retry_failed = false;    // with resume: failed cells run again, each failed attempt kept
                                // under attempts/<cell>/<n>/ (ResultsWriter::archive_attempt)
  std::string connect;          // libvirt URI; empty: the embedded driver
  std::filesystem::path remote_dir;  // remote URIs: staging directory there; empty: vm::kDefaultRemoteDir
  bool live_progress = false;   // a redrawn status line (terminals)
  // Reproduction: exact Debian package versions per kernel name, and the sha256 / digest the
  // artifacts must have (the run refuses to start otherwise).
  std::map<std::string, KernelPin> kernel_pins;
  std::map<std::string, std::string> expect_kernel_sha256;
  std::string expect_image_digest;
};

struct RunSummary {
  std::filesystem::path dir;
  int cells = 0, ok = 0, failed = 0, skipped = 0;  // skipped: already finished (resume)
  bool interrupted = false;
  std::string accel;  // "kvm" | "tcg"
};

RunSummary run_recipe(const recipe::Recipe& recipe, const RunOptions& options);

// The default results directory for a recipe started now.
std::filesystem::path default_results_dir(const recipe::Recipe& recipe);

}  // namespace smtlab::run
