#pragma once
// Linux CPU list syntax ("0-3,8,10-11"), as in sysfs and taskset.
#include <string>
#include <string_view>
#include <vector>

namespace smtlab {

// Every CPU number in a list is below this (what parse_cpulist accepts).
inline constexpr int kMaxCpus = 4096;

// Sorted, unique CPU numbers; throws smtlab::Error on malformed text. Bounded for untrusted text:
// every number below kMaxCpus, and overlapping or repeated ranges ("0-4095,0-4095,...") are merged
// before they are expanded, so the work is O(n log n) in the text's length and the result has at
// most kMaxCpus entries.
std::vector<int> parse_cpulist(std::string_view text);
// The shortest list form: {0,1,2,5} -> "0-2,5".
std::string format_cpulist(const std::vector<int>& cpus);

}  // namespace smtlab
