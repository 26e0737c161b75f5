#pragma once
// The initramfs's /init: the agent binary itself, started by the kernel as PID 1. It does what a
// shell script would (mount /proc, /sys, /dev; load the boot modules; wait for the root disk;
// mount it; move over to it) without starting a shell or any other program, then carries on as
// the agent in the same process. Errors go to the console as "smtlab-init: error: ..." (the host
// scans for that line) and the guest powers off.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::guest {

// Where the initramfs lists the modules to load, one name per line, in load order.
inline constexpr const char* kModuleListPath = "/lib/modules/load-order";

// The value of `smtlab.root=` in a kernel command line (the last one wins, as in the kernel);
// nullopt when absent or empty. The boot init refuses a value that is not a path.
std::optional<std::string> root_from_cmdline(std::string_view cmdline);

// Parses the module list: names of [A-Za-z0-9_-], one per line, blank lines ignored. Throws
// smtlab::Error naming the line for anything else.
std::vector<std::string> parse_module_list(std::string_view text);

// True when this process is the initramfs's init: PID 1 started as "/init".
bool is_boot_init(const char* argv0);

// Runs the boot, then the agent. Never returns.
[[noreturn]] void run_boot_init();

}  // namespace smtlab::guest
