#include "recipe/recipe_error.hpp"

namespace smtlab::recipe {

RecipeError::RecipeError(SourceLocation where, std::string message, std::string hint)
    : Error(where.str() + ": error: " + message, std::move(hint)),
      where_(std::move(where)),
      message_(std::move(message)) {}

}  // namespace smtlab::recipe
