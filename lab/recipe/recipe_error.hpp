#pragma once
// The error of a recipe, kernel or image file: where it is, what is wrong, what is allowed.
#include <string>

#include "recipe/recipe.hpp"
#include "util/error.hpp"

namespace smtlab::recipe {

class RecipeError : public smtlab::Error {
 public:
  // what() becomes "FILE:LINE:COLUMN: error: MESSAGE".
  RecipeError(SourceLocation where, std::string message, std::string hint = {});
  const SourceLocation& where() const noexcept { return where_; }
  const std::string& message() const noexcept { return message_; }  // without the location

 private:
  SourceLocation where_;
  std::string message_;
};

}  // namespace smtlab::recipe
