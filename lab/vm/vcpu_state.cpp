#include "vm/vcpu_state.hpp"

#include <algorithm>
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
    if (field(line, "RFL", 16, v) || field(line, "EFL", 16, v)) cur.interrupts_enabled = (v & 0x200) != 0;
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

bool locked_up(const std::vector<VcpuState>& before, const std::vector<VcpuState>& after) {
  if (before.empty() || before.size() != after.size()) return false;
  for (size_t i = 0; i < before.size(); ++i) {
    const auto &a = before[i], &b = after[i];
    if (a.cpu != b.cpu || a.rip != b.rip || a.halted || b.halted || a.interrupts_enabled || b.interrupts_enabled)
      return false;
  }
  return true;
}

bool spinning_with_interrupts_off(const std::vector<VcpuState>& vcpus) {
  return !vcpus.empty() && std::all_of(vcpus.begin(), vcpus.end(),
                                       [](const VcpuState& v) { return !v.halted && !v.interrupts_enabled; });
}

std::optional<std::string> LockupWatch::check(Clock::time_point now, uint64_t console_bytes,
                                              const std::function<std::string()>& registers) {
  if (reported_) return std::nullopt;
  if (!changed_ || console_bytes != bytes_) {
    bytes_ = console_bytes;
    changed_ = now;
    sampled_.reset();
    spinning_since_.reset();
    last_.clear();
    return std::nullopt;
  }
  if (now - *changed_ < quiet_ || (sampled_ && now - *sampled_ < apart_)) return std::nullopt;
  std::string text = registers();
  auto vcpus = parse_vcpu_registers(text);
  sampled_ = now;
  const bool stuck = locked_up(last_, vcpus);
  if (!spinning_with_interrupts_off(vcpus) || console_bytes == 0) spinning_since_.reset();
  else if (!spinning_since_) spinning_since_ = now;
  const bool spinning = spinning_since_ && now - *spinning_since_ >= spinning_;
  last_ = std::move(vcpus);
  last_text_ = std::move(text);
  if (!stuck && !spinning) return std::nullopt;
  reported_ = true;
  auto seconds = [](std::chrono::milliseconds d) { return std::to_string(d.count() / 1000) + " s"; };
  const std::string how = stuck ? "every vCPU stayed on one instruction with interrupts off for " + seconds(apart_)
                                : "every vCPU kept running with interrupts off for " + seconds(spinning_);
  return how + ": " + describe(last_);
}

}  // namespace smtlab::vm
