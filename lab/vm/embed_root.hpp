#pragma once
// The embedded QEMU driver's state directory ("root") for this process, and clean-up of what a
// crashed earlier run left behind in it.
#include <filesystem>
#include <string>
#include <vector>

namespace smtlab::vm {

// This process' private root: the first free slot <base>/<n> (n = 0, 1, ...), held with an
// flock on <base>/<n>.lock for the life of the process, so concurrent smtlab processes never
// share one and the QEMU capability cache in a slot is reused by later runs. <base> is
// $SMTLAB_RUN_DIR, else /run/smtlab-<uid> when /run is writable, else
// $XDG_RUNTIME_DIR/smtlab, else /tmp/smtlab-<uid> (mode 0700, must be ours). On first use it
// reaps QEMU processes a dead earlier owner of the slot left (reap_stale), tidies what earlier
// owners left (tidy_slot), and writes <root>/etc/qemu.conf. Thread-safe; the same path on every call.
const std::filesystem::path& process_embed_root();

// Writes <root>/etc/qemu.conf for the embedded driver (file stdio handler; no cgroups; as
// root: run QEMU as root, no relabelling, no security driver). Creates <root> (0700) when missing.
void write_embed_qemu_conf(const std::filesystem::path& root);

// PIDs of live (not zombie) qemu-system processes whose command line mentions `root`/ and that
// see the same file system as this process (same mount namespace and root directory: a guest of
// another container or chroot whose /run has a same-named root is not ours).
std::vector<int> qemu_processes_under(const std::filesystem::path& root);

// SIGKILLs every such process and waits (up to 5 s) until they are gone; then removes the
// root's stale run-time state. Returns how many processes it killed.
int reap_stale(const std::filesystem::path& root);

// For a new owner of a slot, before its driver starts: removes the per-guest files earlier owners
// left (QEMU logs under log/qemu/, domain directories under lib/qemu/), and rotates libvirt.log
// to libvirt.log.old beyond 1 MiB. What libvirt keeps across runs (the QEMU capabilities cache)
// stays. Errors are ignored.
void tidy_slot(const std::filesystem::path& root);

// True when the process `pid` is gone or a zombie.
bool process_gone(int pid);

}  // namespace smtlab::vm
