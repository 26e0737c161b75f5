// smtlab plan RECIPE [--json] [--matrix github --shards N] [--cells FILTER]...
#include <iostream>

#include "cli/commands.hpp"
#include "plan/plan.hpp"
#include "plan/schedule.hpp"
#include "recipe/recipe_loader.hpp"

namespace smtlab::cli {

void add_plan_command(CLI::App& app) {
  struct Options {
    std::string recipe;
    bool json = false;
    std::string matrix;
    int shards = 2;
    std::vector<std::string> cells;
    int iterations = 0;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("plan", "Expand a recipe into cells (variant x topology x benchmark) and print them");
  cmd->add_option("recipe", opt->recipe, "Recipe file (YAML)")->required();
  cmd->add_flag("--json", opt->json, "Print the plan as JSON");
  cmd->add_option("--matrix", opt->matrix, "Print a CI fan-out matrix instead (github)")->check(CLI::IsMember({"github"}));
  cmd->add_option("--shards", opt->shards, "With --matrix: how many shards")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--cells", opt->cells, "Only cells matching: an id prefix, variant=X, topology=Y or benchmark=Z (repeat)")
      ->allow_extra_args(false);
  cmd->add_option("--iterations", opt->iterations, "Override every benchmark's iterations")->check(CLI::Range(1, 1000));
  cmd->callback([opt] {
    auto recipe = recipe::load_recipe(opt->recipe);
    plan::PlanOptions po;
    po.filters = opt->cells;
    po.iterations = opt->iterations;
    auto plan = plan::make_plan(recipe, po);
    if (!opt->matrix.empty()) {
      std::cout << plan::github_matrix(plan, opt->shards).dump() << "\n";
    } else if (opt->json) {
      std::cout << plan::plan_to_json(plan).dump(2) << "\n";
    } else {
      std::cout << plan::format_plan_table(plan);
      if (plan.share_boot) {
        size_t boots = plan::boot_groups(plan.cells, true).size();
        std::cout << plan.cells.size() << (plan.cells.size() == 1 ? " cell in " : " cells in ") << boots
                  << (boots == 1 ? " boot" : " boots") << " (share_boot: the cells of one boot run one after the other in it)\n";
      }
      if (plan.parallel) std::cout << plan::format_schedule(plan);
    }
  });
}

}  // namespace smtlab::cli
