#pragma once
// Reading a guest's serial console log: bounded reads, and what in it means the guest failed
// (kernel panic, oops, BUG, smtlab-init errors). Console text is untrusted guest output.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::vm {

enum class ConsoleProblem { panic, oops, bug, warning, stall, init_error };
std::string to_string(ConsoleProblem kind);  // "panic", "oops", ...

struct ConsoleFinding {
  ConsoleProblem kind;
  size_t line_number = 0;  // 1-based, within the scanned text
  std::string line;        // the line: valid UTF-8, control characters replaced, at most 512 bytes
};

// Every problem line, in order. panic: "Kernel panic - not syncing" / "---[ end Kernel panic";
// oops: "Oops:" / "general protection fault" / an x86 die() header ("int3: 0000 [#1] ..."); bug:
// "BUG:" / "kernel BUG at"; warning: "WARNING: CPU:" (kernel WARN); stall: "BUG: soft lockup",
// "BUG: workqueue lockup" and RCU "detected stall" lines, which a guest prints when the host did
// not run its vCPUs for many seconds (TCG on a loaded host, overcommit): the kernel goes on, the
// measurement was disturbed; init_error: "smtlab-init: error:".
std::vector<ConsoleFinding> scan_console(std::string_view text);

// True when a finding means the guest cannot be trusted (everything but `warning` and `stall`).
bool is_fatal(const std::vector<ConsoleFinding>& findings);

// The warnings and stalls, one note each ("kernel stall: <line>"), at most `max` of them.
std::vector<std::string> disturbances(const std::vector<ConsoleFinding>& findings, size_t max = 5);

// The int3 oops line among the findings, if any ("Oops: int3: 0000 [#1] ...", or up to Linux 6.1
// "int3: 0000 [#1] ..."): the kernel met an int3 that is none of its own (under TCG: one QEMU kept
// executing after the kernel had patched it away).
std::optional<std::string> int3_oops(const std::vector<ConsoleFinding>& findings);

// The first fatal finding, as "kernel panic: <line>" (or "" when there is none).
std::string first_problem(const std::vector<ConsoleFinding>& findings);

// "watchdog: BUG: soft lockup - CPU#3 stuck for 48s! [true:1024]": CPU 3, stuck for 48 s.
struct SoftLockup {
  int cpu = 0;
  int seconds = 0;
};
std::optional<SoftLockup> parse_soft_lockup(std::string_view line);

// Console text a guest wrote since its agent last said anything: when every one of its `cpus`
// online CPUs is reported in a soft lockup of at least `min_seconds` (the kernel reports one
// after 20 s without scheduling), the whole guest may have frozen. Returns where each was stuck
// (its longest report), "CPU#0 stuck for 48 s at __schedule+0x91/0xa00, CPU#1 ...", or nothing.
std::optional<std::string> every_cpu_stuck(std::string_view text, int cpus, int min_seconds);

// The last `lines` lines (each as valid UTF-8, control characters replaced, at most 4096 bytes),
// without a trailing newline.
std::string console_tail(std::string_view text, size_t lines);

// The last `max_bytes` bytes of the file (the whole file when smaller); "" when it does not
// exist. Starts at a line boundary when it had to cut.
std::string read_console(const std::filesystem::path& file, size_t max_bytes = 1 << 20);

// What the file holds from byte `from` on, at most its last `max_bytes` (then from a line boundary).
std::string read_console_since(const std::filesystem::path& file, uint64_t from, size_t max_bytes = 256 << 10);

}  // namespace smtlab::vm
