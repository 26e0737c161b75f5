#pragma once
// Internal to the plan module: cell definitions with file digests computed once per plan.
#include <filesystem>
#include <map>
#include <string>

#include "plan/plan.hpp"

namespace smtlab::plan::detail {

using DigestCache = std::map<std::filesystem::path, std::string>;

nlohmann::json cell_definition(const Cell& cell, DigestCache& digests);

}  // namespace smtlab::plan::detail
