#pragma once
// A topology's noise VMs (roles: [benchmark, noise]) make the overcommit its benchmark is measured
// under: one that stops, or whose agent ends its noise job, before the benchmark ended leaves a
// cell that was not measured under its topology. guest_session fails such a cell.
#include <string>

namespace smtlab::run {

// What the host has seen of one noise VM.
struct NoiseVmSeen {
  int vm = 0;
  bool stopped = false;   // its domain is no longer running
  std::string stop_info;  // how it stopped (vm::StopInfo::describe), when stopped
  bool ended = false;     // its agent sent its job's "end" record
  bool end_ok = false;    // ... with status ok
  std::string last_error; // its agent's last error record ("": none)
};

// "" while the noise VM runs its noise; otherwise the cell's error, saying when (`at_s`: seconds
// since the guests started) and what the guest said.
std::string noise_vm_lost(const NoiseVmSeen& seen, double at_s);

}  // namespace smtlab::run
