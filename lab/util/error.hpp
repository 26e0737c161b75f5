#pragma once
// Errors that carry context up to a message a user can act on.
#include <stdexcept>
#include <string>

namespace smtlab {

// An error a user can act on: `what()` says what went wrong; `hint()` what to do about it.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, std::string hint = {});
  const std::string& hint() const noexcept { return hint_; }
  // Returns a copy whose message is "context: original message".
  Error within(const std::string& context) const;

 private:
  std::string hint_;
};

// "message\n  hint: ..." as printed by the CLI.
std::string describe(const std::exception& e);

}  // namespace smtlab
