#include "protocol/job_route.hpp"

#include <algorithm>

namespace smtlab::protocol {

JobRouter::JobRouter(std::vector<std::string> cells) : cells_(std::move(cells)) {}

int JobRouter::route(const Record& record, std::string* why) {
  auto reject = [&](std::string text) {
    if (why) *why = std::move(text);
    return -1;
  };
  const auto& b = record.body;
  if (!b.is_object() || !b.contains("cell")) return current_;
  const auto& c = b["cell"];
  if (!c.is_string()) return reject("field \"cell\" is not a string");
  const auto& cell = c.get_ref<const std::string&>();
  auto it = std::find(cells_.begin(), cells_.end(), cell);
  if (it == cells_.end())
    return reject("names cell \"" + cell.substr(0, 32) + "\", which is not one of this boot's " +
                  std::to_string(cells_.size()) + " cells");
  int index = static_cast<int>(it - cells_.begin());
  if (b.contains("job") && !(b["job"].is_number_integer() && b["job"].get<int64_t>() == index))
    return reject("field \"job\" " + b["job"].dump().substr(0, 32) + " disagrees with cell " + cell + " (job " +
                  std::to_string(index) + ")");
  if (index < current_)
    return reject("belongs to job " + std::to_string(index) + " (cell " + cell + ") but job " +
                  std::to_string(current_) + " already started");
  current_ = index;
  return index;
}

}  // namespace smtlab::protocol
