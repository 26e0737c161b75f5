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

// Watches a guest that should be printing on its console (booting): once the console has been
// silent for `quiet`, samples the vCPUs every `apart`; reports a lock-up from two samples in a
// row. The registers are only asked for after the silence, so a healthy boot costs nothing.
class LockupWatch {
 public:
  using Clock = std::chrono::steady_clock;
  LockupWatch(std::chrono::milliseconds quiet, std::chrono::milliseconds apart) : quiet_(quiet), apart_(apart) {}
  // `console_bytes`: the console's size now; `registers`: QEMU's "info registers -a" text (empty
  // when it cannot be had). Returns the locked-up vCPUs' description, once.
  std::optional<std::string> check(Clock::time_point now, uint64_t console_bytes,
                                   const std::function<std::string()>& registers);
  const std::string& last_registers() const { return last_text_; }

 private:
  std::chrono::milliseconds quiet_, apart_;
  uint64_t bytes_ = 0;
  std::optional<Clock::time_point> changed_, sampled_;
  std::vector<VcpuState> last_;
  std::string last_text_;
  bool reported_ = false;
};

}  // namespace smtlab::vm
