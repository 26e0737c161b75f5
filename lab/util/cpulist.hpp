#pragma once
// Linux CPU list syntax ("0-3,8,10-11"), as in sysfs and taskset.
#include <string>
#include <string_view>
#include <vector>

namespace smtlab {

// Sorted, unique CPU numbers; throws smtlab::Error on malformed text (bounded: at most 4096 CPUs).
std::vector<int> parse_cpulist(std::string_view text);
// The shortest list form: {0,1,2,5} -> "0-2,5".
std::string format_cpulist(const std::vector<int>& cpus);

}  // namespace smtlab
