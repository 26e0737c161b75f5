#pragma once
// `smtlab boot RECIPE --cell ID -- CMD...`: boots one cell's guests, runs CMD in each, streams
// the output (VM 0 plain, others prefixed), reports the topology each guest saw, tears down.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// What `smtlab boot` prints of a guest's topology record: "guest topology: 4 CPUs online, sibling
// groups [ 0-1  2-3 ], SMT active". Guest data: never throws (a CPU whose siblings are null, as
// the agent sends when it cannot read them, shows as "?"), and says at most 16 sibling groups.
std::string describe_topology(const nlohmann::json& record);

}  // namespace smtlab::run
