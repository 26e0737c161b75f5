#include "util/error.hpp"

namespace smtlab {

Error::Error(std::string message, std::string hint)
    : std::runtime_error(std::move(message)), hint_(std::move(hint)) {}

Error Error::within(const std::string& context) const {
  return Error(context + ": " + what(), hint_);
}

std::string describe(const std::exception& e) {
  std::string out = e.what();
  if (auto* err = dynamic_cast<const Error*>(&e); err && !err->hint().empty())
    out += "\n  hint: " + err->hint();
  return out;
}

}  // namespace smtlab
