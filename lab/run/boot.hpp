#pragma once
// `smtlab boot RECIPE --cell ID -- CMD...`: boots one cell's guests, runs CMD in each, streams
// the output (VM 0 plain, others prefixed), reports the topology each guest saw, tears down.
#include <string>
#include <vector>

#include "recipe/recipe.hpp"

namespace smtlab::run {

struct BootOptions {
  std::vector<std::string> cell;  // cell id prefix / variant=X / topology=Y filters: exactly one cell
  std::vector<std::string> argv;  // empty: uname -r
  std::string connect;
  std::string remote_dir;         // remote URIs: the staging directory there ("": the default)
  bool keep = false;              // keep the console logs and streams (always kept on failure)
};

// Returns VM 0's exit status (or 1 when the guests failed, 130 when interrupted).
int boot_cell(const recipe::Recipe& recipe, const BootOptions& options);

}  // namespace smtlab::run
