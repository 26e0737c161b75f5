#pragma once
// Where each vCPU of a guest was, from QEMU's "info registers -a": for a guest that stopped making
// progress (a boot or cell timeout), the first thing a kernel developer asks.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace smtlab::vm {

struct VcpuState {
  int cpu = 0;
  uint64_t rip = 0;
  int cpl = 0;          // 0: kernel, 3: user space
  bool halted = false;  // in HLT (idle)
  bool interrupts_enabled = true;  // RFLAGS.IF
};

// Parses "CPU#<n>" sections and their RIP= (EIP= before long mode), CPL= and HLT= fields;
// sections without an instruction pointer are left out, anything else is ignored.
std::vector<VcpuState> parse_vcpu_registers(const std::string& text);

// "vCPU 0 idle (HLT) at ffffffff81c0a1e4, vCPU 1 in the kernel at ffffffff8110f2a0, vCPU 2 in user space".
std::string describe(const std::vector<VcpuState>& vcpus);

// Two samples of a guest's vCPUs, taken seconds apart, in which every vCPU is running (not in
// HLT) with interrupts off at the same instruction: nothing can move it on (a hard lockup). Under
// TCG, QEMU 7.2 now and then leaves every vCPU re-executing a kernel instruction that another
// vCPU has just patched (a static branch at boot) for minutes.
bool locked_up(const std::vector<VcpuState>& before, const std::vector<VcpuState>& after);

// Every vCPU running (not in HLT) with interrupts off: none of them can take a timer tick.
bool spinning_with_interrupts_off(const std::vector<VcpuState>& vcpus);

// Watches a guest that should be printing on its console (booting): once the console has been
// silent for `quiet`, samples the vCPUs every `apart`, and reports a lock-up when
//  - two samples in a row are locked_up(), or
//  - the kernel has printed something and every sample over `spinning` (at least three samples
//    for a `spinning` of twice `apart`) is spinning_with_interrupts_off(). Seen under TCG: a
//    Debian 6.1 boot stopped after "sched_clock: Marking stable", vCPUs 1-3 on one instruction
//    and vCPU 0 looping elsewhere, all with interrupts off, until the boot timeout (300 s).
// The registers are only asked for after the silence, so a healthy boot costs nothing.
class LockupWatch {
 public:
  using Clock = std::chrono::steady_clock;
  LockupWatch(std::chrono::milliseconds quiet, std::chrono::milliseconds apart, std::chrono::milliseconds spinning)
      : quiet_(quiet), apart_(apart), spinning_(spinning) {}
  // `console_bytes`: the console's size now; `registers`: QEMU's "info registers -a" text (empty
  // when it cannot be had). Returns, once, how the vCPUs locked up and where they are
  // ("every vCPU ... for 5 s: vCPU 0 in the kernel at ..., ...").
  std::optional<std::string> check(Clock::time_point now, uint64_t console_bytes,
                                   const std::function<std::string()>& registers);
  const std::string& last_registers() const { return last_text_; }

 private:
  std::chrono::milliseconds quiet_, apart_, spinning_;
  uint64_t bytes_ = 0;
  std::optional<Clock::time_point> changed_, sampled_, spinning_since_;
  std::vector<VcpuState> last_;
  std::string last_text_;
  bool reported_ = false;
};

}  // namespace smtlab::vm
