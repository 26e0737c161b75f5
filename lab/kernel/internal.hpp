#pragma once
// Shared between the kernel module's source files (not part of its public API).
#include <filesystem>
#include <string>

#include "cache/cache.hpp"
#include "kernel/kernel.hpp"

namespace smtlab::kernel::detail {

struct Meta {
  std::string package, version, release, sha256;
};

// Writes <dir>/meta.json.
void write_meta(const std::filesystem::path& dir, const recipe::KernelSpec& spec, const Meta& meta);
// The artifact of a published cache entry (reads meta.json).
KernelArtifact from_entry(const cache::Entry& entry, const recipe::KernelSpec& spec);

// Moves boot/vmlinuz-*, boot/config-* and lib/modules/<release>/ (with modules.dep made by depmod)
// from an unpacked Debian kernel package in `unpacked` to <out>/vmlinuz, config, modules/.
// Returns the release.
std::string take_debian_kernel(const std::filesystem::path& unpacked, const std::filesystem::path& out);

// The kernel release ("6.12.118+deb12-cloud-amd64") stored in a bzImage's header.
std::string bzimage_release(const std::filesystem::path& bzimage);

KernelArtifact prepare_debian(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps);
KernelArtifact prepare_source(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps);
KernelArtifact prepare_prebuilt(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps);

}  // namespace smtlab::kernel::detail
