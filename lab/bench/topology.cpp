#include "bench/topology.hpp"

#include "bench/procfs.hpp"
#include "util/cpulist.hpp"

namespace smtlab::bench {

using nlohmann::json;

namespace {
std::string trimmed(const std::optional<std::string>& s) {
  if (!s) return "";
  auto b = s->find_first_not_of(" \t\n");
  auto e = s->find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s->substr(b, e - b + 1);
}
json int_or_null(const std::optional<std::string>& s) {
  auto t = trimmed(s);
  try {
    size_t used = 0;
    int v = std::stoi(t, &used);
    if (used == t.size()) return v;
  } catch (...) {
  }
  return nullptr;
}
}  // namespace

json topology_report(const std::string& root) {
  std::string online = trimmed(read_proc(root + "/online", 4096));
  json out = {{"online", online}, {"smt_active", int_or_null(read_proc(root + "/smt/active", 64))},
              {"cpus", json::array()}};
  std::vector<int> cpus;
  try {
    cpus = parse_cpulist(online);
  } catch (const std::exception& e) {
    out["error"] = std::string("cannot parse ") + root + "/online: " + e.what();
  }
  for (int cpu : cpus) {
    std::string t = root + "/cpu" + std::to_string(cpu) + "/topology/";
    auto siblings = read_proc(t + "thread_siblings_list", 4096);
    out["cpus"].push_back({{"cpu", cpu},
                           {"core_id", int_or_null(read_proc(t + "core_id", 64))},
                           {"package_id", int_or_null(read_proc(t + "physical_package_id", 64))},
                           {"die_id", int_or_null(read_proc(t + "die_id", 64))},
                           {"siblings", siblings ? json(trimmed(siblings)) : json(nullptr)}});
  }
  return out;
}

}  // namespace smtlab::bench
