// smtlab boot RECIPE --cell ID [-- CMD ARGS...]
#include "cli/commands.hpp"
#include "recipe/recipe_loader.hpp"
#include "run/boot.hpp"
#include "vm/interrupt.hpp"

namespace smtlab::cli {

void add_boot_command(CLI::App& app) {
  struct Options {
    std::string recipe;
    run::BootOptions boot;
  };
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("boot", "Boot one cell's guest(s), run a command in each, stream its output, tear down");
  cmd->add_option("recipe", opt->recipe, "Recipe file (YAML)")->required();
  cmd->add_option("--cell", opt->boot.cell, "Cell id (prefix) from `smtlab plan`, or filters variant=X topology=Y (repeat)")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--connect", opt->boot.connect, "libvirt URI (default: the embedded QEMU driver)");
  cmd->add_option("--remote-dir", opt->boot.remote_dir,
                  "Remote libvirt hosts: directory of the staging pool there (default /var/lib/smtlab/staging)");
  cmd->add_flag("--keep", opt->boot.keep, "Keep the console logs and result streams");
  cmd->add_option("command", opt->boot.argv, "Command to run in the guest (after --); default: uname -r");
  cmd->callback([opt] {
    vm::install_interrupt_handlers();
    auto recipe = recipe::load_recipe(opt->recipe);
    exit_status() = run::boot_cell(recipe, opt->boot);
  });
}

}  // namespace smtlab::cli
