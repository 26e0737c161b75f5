#pragma once
// Guest images: a recipe::ImageSpec built with mmdebstrap into ext4 (no partition table) and a
// qcow2 base image, reproducibly (SOURCE_DATE_EPOCH, sorted packages, fixed UUID and hash seed),
// cached (kind "image": <entry>/base.qcow2 + meta.json). Runs use qcow2 overlays on the base.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "cache/cache.hpp"
#include "recipe/recipe.hpp"
#include "util/log.hpp"

namespace smtlab::image {

struct ImageArtifact {
  std::string name;
  std::filesystem::path qcow2;  // the base image (never modified; use create_overlay)
  std::string digest;           // cache key: suite, variant, mirror, packages, files' content, size
  std::uint64_t size = 0;       // bytes of base.qcow2
  std::uint64_t fs_size_mib = 0;  // size of the ext4 file system the guest sees
  bool cache_hit = false;
  std::filesystem::path dir;  // the cache entry
  std::string sha256;  // of base.qcow2 (as the cache entry records it)
  // Each installed Debian package's version (dpkg_status.hpp), recorded when the image was built
  // (empty for cache entries built before it was).
  std::map<std::string, std::string> installed;
};

// Builds (or finds) the image. Needs root (mmdebstrap --mode=root keeps file ownership for mke2fs -d).
ImageArtifact prepare_image(const recipe::ImageSpec& spec, cache::Cache& cache, Steps& steps);

// qemu-img create -f qcow2 -b BASE -F qcow2 OVERLAY (the base is never written to).
void create_overlay(const std::filesystem::path& base, const std::filesystem::path& overlay);

// "image bench: 612.4 MiB qcow2 (4096 MiB ext4), digest 1a2b3c4d5e6f, gcc-12 12.2.0-14, cache miss"
// (the gcc packages when the image recorded what it installed)
std::string summary(const ImageArtifact& image);

}  // namespace smtlab::image
