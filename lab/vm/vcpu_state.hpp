#pragma once
// Where each vCPU of a guest was, from QEMU's "info registers -a": for a guest that stopped making
// progress (a boot or cell timeout), the first thing a kernel developer asks.
#include <cstdint>
#include <string>
#include <vector>

namespace smtlab::vm {

struct VcpuState {
  int cpu = 0;
  uint64_t rip = 0;
  int cpl = 0;          // 0: kernel, 3: user space
  bool halted = false;  // in HLT (idle)
};

// Parses "CPU#<n>" sections and their RIP= (EIP= before long mode), CPL= and HLT= fields;
// sections without an instruction pointer are left out, anything else is ignored.
std::vector<VcpuState> parse_vcpu_registers(const std::string& text);

// "vCPU 0 idle (HLT) at ffffffff81c0a1e4, vCPU 1 in the kernel at ffffffff8110f2a0, vCPU 2 in user space".
std::string describe(const std::vector<VcpuState>& vcpus);

}  // namespace smtlab::vm
