// smtlab image build FILE
#include <iostream>

#include "cache/cache.hpp"
#include "cli/commands.hpp"
#include "image/image.hpp"
#include "recipe/recipe_loader.hpp"
#include "util/log.hpp"

namespace smtlab::cli {

void add_image_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("image", "Guest images: build them into the cache");
  cmd->require_subcommand(1);
  auto* build = cmd->add_subcommand("build", "Build a guest image (mmdebstrap, ext4, qcow2); a cache hit when nothing changed");
  build->add_option("file", *file, "Image definition (images/*.yaml)")->required()->check(CLI::ExistingFile);
  build->callback([file] {
    auto spec = recipe::load_image_spec(*file);
    cache::Cache cache;
    Steps steps("image " + spec.name);
    auto artifact = image::prepare_image(spec, cache, steps);
    std::cout << image::summary(artifact) << "\n";
  });
}

}  // namespace smtlab::cli
