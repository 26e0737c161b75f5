#include "run/noise_vm.hpp"

#include <fmt/core.h>

namespace smtlab::run {

std::string noise_vm_lost(const NoiseVmSeen& seen, double at_s) {
  if (!seen.stopped && !seen.ended) return {};
  const std::string what =
      seen.stopped ? "stopped (" + seen.stop_info + ")"
                   : std::string("ended its noise job (status ") + (seen.end_ok ? "ok" : "failed") + ")";
  return fmt::format("VM {} (noise) {} at {:.1f} s, before the benchmark ended: the cell was not measured under its "
                     "topology's overcommit{}",
                     seen.vm, what, at_s, seen.last_error.empty() ? "" : "; its agent said: " + seen.last_error);
}

}  // namespace smtlab::run
