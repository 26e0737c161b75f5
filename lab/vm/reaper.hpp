#pragma once
// Reaping the embedded driver's QEMU processes as soon as they exit. libvirt starts each QEMU
// daemonized, so it is re-parented to the nearest "child subreaper" ancestor, or to PID 1; and
// libvirt's teardown (virDomainDestroy, a guest's own power-off) polls, every 200 ms for up to
// 15 s, until that pid no longer exists. An exited QEMU stays a zombie until its new parent
// reaps it: a container whose PID 1 is smtlab itself never does (every teardown then takes 15 s
// and fails), and some sandboxes' PID 1 reaps only every ~2 s (1-1.7 s per guest measured here).
// So smtlab makes itself the subreaper of its QEMUs and reaps exactly those, no other process:
// the registered guests' and the QEMUs libvirt starts to probe capabilities (an exited child
// whose command is qemu-system-*; libvirt waited 15 s for each probe's zombie otherwise).
#include <cstdint>
#include <optional>

namespace smtlab::vm {

// Marks this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER) and starts the reaper
// thread, once per process. Call before the embedded driver starts any QEMU.
void become_qemu_reaper();

// Reaps `pid` as soon as it has exited (checked every 10 ms), if it is then this process's
// child; a pid that is not (another process reaps it) is dropped. No-op before
// become_qemu_reaper() or for pid <= 0.
void reap_when_exited(int pid);

// The CPU time (user + system, all threads, in clock ticks as /proc/<pid>/stat counts them) of a
// registered process the reaper has reaped, from wait4(2); nullopt while it runs or when another
// process reaped it. Its /proc entry is gone by then (or is another process's): accounts of a
// guest's CPU use that end after its QEMU exited read it here.
std::optional<uint64_t> exited_cpu_ticks(int pid);

}  // namespace smtlab::vm
