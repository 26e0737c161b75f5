#pragma once
// The boot initramfs of a kernel (see /tmp/briefs/protocol.md "Boot path"): /init, which is the
// static guest agent itself (guest/boot_init.hpp: it mounts the root disk and becomes the agent,
// no shell, no other program), exactly the modules that kernel needs to reach its root disk and
// the results channel (virtio_pci, virtio_blk, virtio_console, ext4 and their dependencies and
// pre-softdeps, decompressed, skipping what is built in) with /lib/modules/load-order listing
// them in load order, and /dev/console. An uncompressed newc cpio, deterministic (sorted entries,
// fixed mtimes), cached (kind "initramfs").
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "kernel/kernel.hpp"

namespace smtlab::image {

struct Initramfs {
  std::filesystem::path path;  // the cpio archive in the cache
  std::string digest;          // cache key: kernel digest, agent, module list
  bool cache_hit = false;
  std::uint64_t size = 0;
  std::vector<std::string> modules;  // loaded by /init, in order ("virtio_blk", ...)
};

// Builds (or finds) the base initramfs. `agent_binary` is the guest agent; it must be a static
// executable (smtlab::Error otherwise).
Initramfs prepare_initramfs(const kernel::KernelArtifact& kernel, const std::filesystem::path& agent_binary,
                            cache::Cache& cache);

// Writes `out` = the base initramfs bytes followed by a newc cpio holding /job.json and
// /random-seed (32 bytes from the host's getrandom(), which the agent credits to the guest's RNG:
// a small guest has no entropy source, and until its RNG is ready the kernel cannot hash pointers,
// so e.g. PR_SCHED_CORE_GET reports every cookie as 0). Linux unpacks concatenated archives in
// order. Written through a temporary file + rename.
void write_initrd_with_job(const std::filesystem::path& base, const std::string& job_json,
                           const std::filesystem::path& out);

// The text of /lib/modules/load-order: one module name per line, in load order.
std::string module_list(const std::vector<std::string>& modules);

// The modules (in load order) a kernel needs for the boot path; empty when all are built in.
// Throws smtlab::Error when the kernel can reach neither the disk nor the results port.
std::vector<std::string> boot_modules(const kernel::KernelArtifact& kernel);

}  // namespace smtlab::image
