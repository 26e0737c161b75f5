#pragma once
// The guardian: a small child process that outlives a killed smtlab. The embedded driver runs
// inside smtlab, so when smtlab dies by SIGKILL nothing destroys its guests; the guardian holds
// the read end of a pipe whose write end only smtlab holds, and on EOF kills (SIGKILL) every
// qemu-system process whose command line mentions the embedded root, then exits.
#include <filesystem>

namespace smtlab::vm {

// Forks the guardian for `root` (once per process and root; later calls are no-ops). Safe in
// a multi-threaded process: after fork the child makes only raw system calls. The child
// ignores SIGINT/SIGTERM/SIGHUP and leaves the terminal's process group, so Ctrl-C reaches
// smtlab (which tears down) but never the guardian.
void start_guardian(const std::filesystem::path& root);

// PID of the guardian, or -1 when none was started.
int guardian_pid();

}  // namespace smtlab::vm
