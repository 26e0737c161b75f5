#pragma once
// libvirt's default event loop, run on a thread of ours while any connection needs it
// (the embedded driver cannot open without it; lifecycle events are delivered by it).
namespace smtlab::vm {

// Registers the default implementation (once per process) and starts the loop thread when
// the first user arrives; release() stops and joins it when the last one leaves.
void event_loop_acquire();
void event_loop_release();

}  // namespace smtlab::vm
