// smtlab kernel build FILE
#include <iostream>

#include "cli/commands.hpp"
#include "kernel/kernel.hpp"
#include "recipe/recipe_loader.hpp"

namespace smtlab::cli {

void add_kernel_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("kernel", "Kernel variants: fetch or build them into the cache");
  cmd->require_subcommand(1);
  auto* build = cmd->add_subcommand("build", "Fetch (debian), build (source) or take (path) a kernel; a cache hit when nothing changed");
  build->add_option("file", *file, "Kernel definition (kernels/*.yaml)")->required()->check(CLI::ExistingFile);
  build->callback([file] {
    auto spec = recipe::load_kernel_spec(*file);
    cache::Cache cache;
    Steps steps("kernel " + spec.name);
    auto artifact = kernel::prepare_kernel(spec, cache, steps);
    std::cout << kernel::summary(artifact) << "\n";
  });
}

}  // namespace smtlab::cli
