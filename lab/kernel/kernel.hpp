#pragma once
// Kernels for the guests: a recipe::KernelSpec turned into a cached, bootable artifact.
//   debian: a Debian linux-image package, resolved to its newest (or pinned) version, downloaded
//           with apt, unpacked (vmlinuz, config, lib/modules/<release> with modules.dep).
//   source: a kernel tree + base config + fragments + patches, built out of tree (O=).
//   path:   a prebuilt bzImage (+ optional modules directory).
// Every artifact lives in the cache (kind "kernel"): <entry>/vmlinuz, config (when known),
// modules/ (when there are modules; this is lib/modules/<release>), meta.json.
#include <cstdint>
#include <filesystem>
#include <string>

#include "cache/cache.hpp"
#include "recipe/recipe.hpp"
#include "util/log.hpp"

namespace smtlab::kernel {

struct KernelArtifact {
  std::string name;  // the spec's name
  recipe::KernelSource source = recipe::KernelSource::debian;
  std::string package;  // debian: exact package name; source "debian:" trees: linux-source-X
  std::string version;  // that package's version
  std::string release;  // uname -r of the kernel
  std::filesystem::path vmlinuz;
  // What QEMU loads (-kernel): the cached PVH vmlinux when the kernel has a PVH entry, else
  // vmlinuz (see kernel/boot_entry.hpp). boot_entry is "pvh" or "bzimage"; boot_entry_why says why
  // a bzImage is booted.
  std::filesystem::path boot_image;
  std::string boot_entry = "bzimage";
  std::string boot_entry_why;
  std::filesystem::path config;       // empty when unknown (path kernels without one)
  std::filesystem::path modules_dir;  // lib/modules/<release>; empty when the kernel has none
  std::string sha256;  // of the downloaded .deb / the source tarball / the given bzImage
  std::string digest;  // the cache key: covers every input
  bool cache_hit = false;
  std::filesystem::path dir;  // the cache entry
  std::uint64_t size = 0;     // bytes in the cache entry
};

// Resolves, fetches or builds the kernel (or finds it in the cache). Prints progress on `steps`.
// Throws smtlab::Error with an actionable message (stale apt lists, a patch that does not apply,
// a fragment option that did not stick, a build failure with the log's tail and its path).
KernelArtifact prepare_kernel(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps);

// "kernel debian-6.12: 6.12.118+deb12-cloud-amd64 (linux-image-...=6.12.118-1~deb12u1), 78.3 MiB,
//  digest 3f2a9c01d4e5, cache hit, PVH entry": the CLI's summary line.
std::string summary(const KernelArtifact& k);

// The value of one option in a kernel config file ("y", "m", "\"text\"", ...; "" when unset).
std::string config_value(const std::filesystem::path& config, const std::string& option);

}  // namespace smtlab::kernel
