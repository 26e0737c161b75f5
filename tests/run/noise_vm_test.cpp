#include <catch2/catch.hpp>

#include "run/noise_vm.hpp"

using smtlab::run::noise_vm_lost;
using smtlab::run::NoiseVmSeen;

TEST_CASE("noise VM: one that runs its noise is no problem, one that stopped or ended its job fails the cell") {
  NoiseVmSeen seen;
  seen.vm = 1;
  CHECK(noise_vm_lost(seen, 12.34).empty());

  SECTION("its domain stopped") {
    seen.stopped = true;
    seen.stop_info = "powered off";
    CHECK(noise_vm_lost(seen, 12.34) ==
          "VM 1 (noise) stopped (powered off) at 12.3 s, before the benchmark ended: the cell was not measured under "
          "its topology's overcommit");
  }
  SECTION("its agent ended the noise job, even with status ok, and what it said goes with the error") {
    seen.ended = true;
    seen.end_ok = true;
    CHECK_THAT(noise_vm_lost(seen, 3),
               Catch::StartsWith("VM 1 (noise) ended its noise job (status ok) at 3.0 s, before the benchmark ended"));
    seen.end_ok = false;
    seen.last_error = "the noise stopped: stress-ng exited and could not be started again";
    CHECK_THAT(noise_vm_lost(seen, 3), Catch::Contains("(status failed)") &&
                                           Catch::EndsWith("; its agent said: the noise stopped: stress-ng exited and "
                                                           "could not be started again"));
  }
  SECTION("stopped after its end: the stop is said, with the agent's error") {
    seen.ended = true;
    seen.stopped = true;
    seen.stop_info = "powered off";
    seen.last_error = "boom";
    CHECK_THAT(noise_vm_lost(seen, 5), Catch::StartsWith("VM 1 (noise) stopped (powered off) at 5.0 s") &&
                                           Catch::EndsWith("its agent said: boom"));
  }
}
