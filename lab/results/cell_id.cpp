#include "results/cell_id.hpp"

#include "util/error.hpp"

namespace smtlab::results {

bool valid_cell_id(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void check_cell_id(const std::string& id) {
  if (!valid_cell_id(id))
    throw Error("invalid cell id '" + id.substr(0, 64) + "'",
                "cell ids may contain only letters, digits, '.', '_' and '-' (at most 128)");
}

}  // namespace smtlab::results
