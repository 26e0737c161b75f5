#pragma once
// Internal to the recipe module: kernel and image definitions from a YAML node, used both for
// their own files and for mappings written inline in a recipe.
#include <string>

#include "recipe/recipe.hpp"
#include "recipe/yaml_reader.hpp"

namespace smtlab::recipe::detail {

KernelSpec parse_kernel(const YamlFile& file, const YAML::Node& node, const std::string& what,
                        const YAML::Node* located);
ImageSpec parse_image(const YamlFile& file, const YAML::Node& node, const std::string& what,
                      const YAML::Node* located);

}  // namespace smtlab::recipe::detail
