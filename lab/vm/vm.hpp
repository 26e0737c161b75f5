#pragma once
// The vm module: guests through libvirt's C API. Nothing here knows recipes or results.
//
//   connection.hpp      Connection::open("" | URI): embedded QEMU driver by default (own state
//                       dir, qemu.conf, event loop thread, guardian), KVM/TCG choice, versions,
//                       host CPU topology.
//   domain_xml.hpp      DomainSpec (value) -> domain XML; escaping, name validation, unique names.
//   pinning.hpp         plan_pinning(): none | vcpu | core (sibling-aware) | shared -> cpusets.
//   domain.hpp          Domain (RAII, lifecycle events, wait_stopped, destroy-and-wait-gone),
//                       DomainGroup (start together, tear down together).
//   topology_check.hpp  check_guest_topology(): what the guest saw vs what was asked.
//   console.hpp         panic / oops / BUG / smtlab-init error scanning, tail, bounded reads.
//   file_follower.hpp   line-by-line reading of files QEMU appends to (results channel).
//   control_channel.hpp "go <barrier>" lines to a guest's control port.
//   interrupt.hpp       SIGINT/SIGTERM/SIGHUP -> flag + fd; a second signal exits at once.
//   guardian.hpp        child process that kills our QEMUs if smtlab dies (kill -9).
//   embed_root.hpp      per-process embedded root slots, reap_stale() of crashed runs.
//   doctor.hpp          host_checks() for `smtlab doctor`.
//   staging.hpp         remote hosts: Staging (a storage pool there; kernel and image uploaded
//                       once, per-VM initrd and qcow2 overlay for one cell), names and volume XML.
//   stream_pump.hpp     remote hosts: a console or channel stream copied into a local file.
#include "vm/connection.hpp"
#include "vm/console.hpp"
#include "vm/control_channel.hpp"
#include "vm/doctor.hpp"
#include "vm/domain.hpp"
#include "vm/domain_xml.hpp"
#include "vm/file_follower.hpp"
#include "vm/interrupt.hpp"
#include "vm/pinning.hpp"
#include "vm/staging.hpp"
#include "vm/stream_pump.hpp"
#include "vm/topology_check.hpp"
