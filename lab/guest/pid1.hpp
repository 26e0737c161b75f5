#pragma once
// PID 1 duties of the agent: the mounts it needs, reaping orphans, powering off.
#include <string>

namespace smtlab::guest {

bool is_pid1();
// Mounts /proc, /sys, /dev (devtmpfs) when missing, and a tmpfs on /tmp; brings `lo` up. Returns
// the problems (one per line), "" when all went well. Never throws.
std::string mount_basics();
// Mounts `source` (of `type`) on `target`, creating the directory; already mounted (EBUSY) is fine.
// Returns "" or "cannot mount <type> on <target>: <reason>".
std::string mount_on(const char* source, const char* target, const char* type, unsigned long flags = 0,
                     const char* data = nullptr);
// Credits the 32-byte seed the host put in the job initramfs (/random-seed; the boot init calls
// this first thing, before the root disk is mounted) to the kernel's RNG with RNDADDENTROPY, so
// the RNG is ready at once (the guest has no entropy source of its own), then deletes it.
// Returns "" or what went wrong; no seed file is not a problem.
std::string credit_random_seed();
// Brings the loopback interface up when it is down (a fresh guest without init scripts has `lo`
// down, and the chat benchmark runs over 127.0.0.1). Returns "" or what went wrong.
std::string ensure_loopback_up();
// sync() and reboot(RB_POWER_OFF) (only when PID 1; otherwise returns).
[[noreturn]] void power_off(int exit_code);
// Progress line on stderr (the console when PID 1): "smtlab-guest: <message>".
void progress(const std::string& message);

}  // namespace smtlab::guest
