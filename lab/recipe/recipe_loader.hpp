#pragma once
// Reading recipes, kernel definitions and image definitions from YAML, with validation.
// Every problem is a RecipeError whose what() is "FILE:LINE:COLUMN: error: WHAT" and whose hint()
// says what is allowed or what to do. Relative paths in a file resolve against that file's
// directory; files are shown in messages as the caller named them (joined lexically for files
// that other files reference).
#include <filesystem>

#include "recipe/recipe.hpp"
#include "recipe/recipe_error.hpp"

namespace smtlab::recipe {

// Loads and validates a recipe with every kernel and image file it references. Throws RecipeError.
Recipe load_recipe(const std::filesystem::path& file);

// Loads one kernel definition (kernels/*.yaml). Throws RecipeError.
KernelSpec load_kernel_spec(const std::filesystem::path& file);

// Loads one guest image definition (images/*.yaml). Throws RecipeError.
ImageSpec load_image_spec(const std::filesystem::path& file);

}  // namespace smtlab::recipe
