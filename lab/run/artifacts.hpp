#pragma once
// Everything a plan needs before its first boot: the guest image, each variant's kernel and its
// boot initramfs (carrying the guest agent). Cached by content; prepared in parallel.
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/cache.hpp"
#include "image/image.hpp"
#include "image/initramfs.hpp"
#include "kernel/kernel.hpp"
#include "plan/plan.hpp"
#include "recipe/recipe.hpp"

namespace smtlab::run {

struct BootKernel {
  kernel::KernelArtifact kernel;
  image::Initramfs initramfs;
};

struct Artifacts {
  image::ImageArtifact image;
  std::map<std::string, BootKernel> kernels;  // by kernel name
  double prepare_s = 0;
  nlohmann::json manifest() const;  // "kernels", "image" entries for manifest.json
};

// An exact Debian kernel package to use instead of the definition's pattern (reproduction).
struct KernelPin {
  std::string package, version;
};

// The static guest agent shipped next to the smtlab executable (or $SMTLAB_GUEST_AGENT).
std::filesystem::path guest_agent_path();

// Prepares the image and the kernels the plan's cells use (the image concurrently with the
// kernels). Throws smtlab::Error naming the artifact that could not be made.
Artifacts prepare_artifacts(const recipe::Recipe& recipe, const plan::Plan& plan, cache::Cache& cache,
                            const std::map<std::string, KernelPin>& pins = {});

}  // namespace smtlab::run
