#pragma once
// How QEMU enters a guest kernel. A bzImage (every distribution's vmlinuz) decompresses itself in
// the guest before the kernel proper starts: under TCG that is 0.8-1.7 s of emulated zstd/xz/lz4
// per boot. A kernel built with CONFIG_PVH=y is also an ELF vmlinux with a PVH entry note, which
// QEMU loads directly (`-kernel vmlinux`), so the lab unpacks the bzImage's payload once, keeps the
// vmlinux in the cache (kind "vmlinux", keyed by the kernel's digest) and boots that. Kernels
// without the note, payloads it cannot unpack, and SMTLAB_BOOT_ENTRY=bzimage keep the bzImage.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cache/cache.hpp"
#include "kernel/kernel.hpp"
#include "util/log.hpp"

namespace smtlab::kernel {

// Where a bzImage keeps its compressed kernel (boot protocol 2.08+ header fields).
struct BzImagePayload {
  std::string format;              // "gzip", "bzip2", "lzma", "xz", "lzo", "lz4", "zstd"
  std::uint64_t offset = 0;        // in the file
  std::uint64_t length = 0;        // the compressed stream, without the kernel's 4-byte size trailer
  std::uint32_t uncompressed = 0;  // that trailer: the vmlinux's size (mod 2^32)
};

// Parses the header of a bzImage's bytes; throws smtlab::Error when they are not one (or too old a
// boot protocol to name its payload) or the payload's format is unknown.
BzImagePayload bzimage_payload(std::string_view bzimage);

// True when an ELF64 file carries a Xen PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY), i.e. QEMU can
// boot it with -kernel. Reads headers and notes only; false for anything that is not ELF64.
bool has_pvh_entry(const std::filesystem::path& elf);

// Sets k.boot_image / k.boot_entry: the cached PVH vmlinux when the kernel has one (unpacking it on
// a cache miss), else the bzImage with k.boot_entry_why saying why.
void choose_boot_entry(KernelArtifact& k, cache::Cache& cache, Steps& steps);

}  // namespace smtlab::kernel
