#pragma once
// The variant's kernel settings, applied in the guest: each written, then read back.
#include <string>

namespace smtlab::bench {

struct SettingResult {
  std::string kind;  // "sysctl" | "sched"
  std::string key;
  std::string requested;
  std::string value;  // as read back (whitespace trimmed)
  std::string path;
};

// "kernel.sched_autogroup_enabled" -> <proc_sys>/kernel/sched_autogroup_enabled. Throws
// smtlab::Error (naming the kernel and the path) when the file does not exist or the write fails.
SettingResult apply_sysctl(const std::string& key, const std::string& value,
                           const std::string& proc_sys = "/proc/sys");

// A scheduler tunable under <debugfs>/sched/<key> (e.g. base_slice_ns on 6.12,
// min_granularity_ns on 6.1). Mounts debugfs at <debugfs> first when it is the default path and
// not mounted. Throws smtlab::Error listing the tunables this kernel has when the key is absent.
SettingResult apply_sched_tunable(const std::string& key, const std::string& value,
                                  const std::string& debugfs = "/sys/kernel/debug");

// Mounts debugfs at /sys/kernel/debug unless already there; returns "" or what went wrong.
std::string ensure_debugfs();

}  // namespace smtlab::bench
