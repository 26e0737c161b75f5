#pragma once
// The CPU topology the (guest) kernel sees, from sysfs. Offline CPUs have no topology/ files and
// are not listed; /sys/devices/system/cpu/smt/active may be missing (smt_active = null).
#include <string>

#include <nlohmann/json.hpp>

namespace smtlab::bench {

// {"online":"0-3","smt_active":1|0|null,"cpus":[{"cpu":0,"core_id":0,"package_id":0,"die_id":0,
//   "siblings":"0-1"}, ...]} (a missing per-CPU file gives null for that field).
nlohmann::json topology_report(const std::string& cpu_root = "/sys/devices/system/cpu");

}  // namespace smtlab::bench
