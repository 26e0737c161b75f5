#include "vm/vcpu_state.hpp"

#include <cstdio>
#include <sstream>

namespace smtlab::vm {

namespace {

// The hex or decimal value after "KEY=" in a line, if the key is there as a whole word.
bool field(const std::string& line, const std::string& key, int base, uint64_t& value) {
  for (size_t at = line.find(key + "="); at != std::string::npos; at = line.find(key + "=", at + 1)) {
    if (at > 0 && line[at - 1] != ' ') continue;
    const char* start = line.c_str() + at + key.size() + 1;
    char* end = nullptr;
    unsigned long long v = std::strtoull(start, &end, base);
    if (end == start) return false;
    value = v;
    return true;
  }
  return false;
}

}  // namespace

std::vector<VcpuState> parse_vcpu_registers(const std::string& text) {
  std::vector<VcpuState> out;
  std::istringstream in(text);
  std::string line;
  bool in_cpu = false, have_rip = false;
  VcpuState cur;
  auto flush = [&] {
    if (in_cpu && have_rip) out.push_back(cur);
    in_cpu = have_rip = false;
  };
  while (std::getline(in, line)) {
    if (line.rfind("CPU#", 0) == 0) {
      flush();
      cur = VcpuState{};
      char* end = nullptr;
      long n = std::strtol(line.c_str() + 4, &end, 10);
      if (end == line.c_str() + 4 || n < 0 || n > 4095) continue;
      cur.cpu = static_cast<int>(n);
      in_cpu = true;
      continue;
    }
    if (!in_cpu) continue;
    uint64_t v = 0;
    if (field(line, "RIP", 16, v) || field(line, "EIP", 16, v)) {  // EIP: not (yet) in long mode
      cur.rip = v;
      have_rip = true;
    }
    if (field(line, "CPL", 10, v)) cur.cpl = static_cast<int>(v);
    if (field(line, "HLT", 10, v)) cur.halted = v != 0;
  }
  flush();
  return out;
}

std::string describe(const std::vector<VcpuState>& vcpus) {
  std::string out;
  for (const auto& v : vcpus) {
    char rip[32];
    std::snprintf(rip, sizeof rip, "%016llx", static_cast<unsigned long long>(v.rip));
    out += out.empty() ? "" : ", ";
    out += "vCPU " + std::to_string(v.cpu) +
           (v.halted ? " idle (HLT) at " : v.cpl == 3 ? " in user space at " : " in the kernel at ") + rip;
  }
  return out;
}

}  // namespace smtlab::vm
