#pragma once
// Test support for VM tests: a Debian 6.12 cloud kernel (fetched once into the cache), tiny
// busybox initramfs images, scratch directories.
#include <filesystem>
#include <string>

#include "vm/topology_check.hpp"

namespace smtlab::vm::test {

// vmlinuz of the newest linux-image-6.12.*+deb12-cloud-amd64-unsigned (apt-get download +
// dpkg-deb -x into cache_dir()/vm-test on first use).
std::filesystem::path debian_612_kernel();
// Same for a series: "6.12" or "6.1" (linux-image-6.1.0-NN-cloud-amd64-unsigned).
std::filesystem::path debian_cloud_kernel(const std::string& series);

// A newc initramfs with /bin/busybox (+ applet links made at boot) and /init = `init_script`
// (a busybox sh script; omitted when empty).
std::filesystem::path make_initramfs(const std::filesystem::path& dir, const std::string& init_script);

// The /init used by the boot tests: prints "smtlab-test: ..." lines (kernel release, online
// CPUs, smt/active, per-CPU core id, package id and siblings) and writes "results-line <release>" to the
// org.smtlab.results.0 port, then powers off.
std::string topology_init_script();

// A fresh, empty, short directory for one test (the shared tests/scratch.hpp: removed when the
// test process passes, kept when it fails).
std::filesystem::path scratch_dir(const std::string& name);

// The topology the test /init printed ("smtlab-test: ..." lines), for check_guest_topology.
GuestTopology parse_test_topology(const std::string& console);

// qemu-system processes mentioning `root` (checked with pgrep -f).
int pgrep_qemu_under(const std::filesystem::path& root);

}  // namespace smtlab::vm::test
