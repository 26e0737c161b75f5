#pragma once
// Cell ids name directories under <dir>/cells/: only [A-Za-z0-9._-], not "." or "..", <= 128.
#include <string>

namespace smtlab::results {

inline constexpr int kSchemaVersion = 1;

bool valid_cell_id(const std::string& id);
// Throws smtlab::Error naming the id when it is not valid.
void check_cell_id(const std::string& id);

}  // namespace smtlab::results
