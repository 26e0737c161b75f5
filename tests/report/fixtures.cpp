#include "fixtures.hpp"

#include <cmath>
#include <random>

namespace fixtures {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path temp_dir(const std::string& tag) {
  std::random_device rd;
  fs::path d = fs::temp_directory_path() / ("smtlab-report-" + tag + "-" + std::to_string(rd()));
  fs::remove_all(d);
  return d;
}

json manifest(const std::vector<CellSpec>& cells, const std::string& sha) {
  json m = {{"smtlab_version", "0.1.0"},
            {"recipe", {{"file", "/r/seed.yaml"}, {"name", "seed"}, {"sha256", sha}, {"text", "name: seed\n"}}},
            {"host", {{"cpu_model", "test cpu"}, {"cpus", 2}}},
            {"versions", {{"qemu", "7.2"}, {"libvirt", "9.0"}}},
            {"accel", "tcg"},
            {"started", "2026-12-02T14:00:00Z"},
            {"cells", json::array()}};
  int i = 0;
  for (const auto& c : cells) {
    m["cells"].push_back({{"id", "cell" + std::to_string(i)}, {"index", i}, {"variant", c.variant},
                          {"kernel", "k"}, {"topology", c.topology}, {"benchmark", c.benchmark},
                          {"kind", c.kind}, {"vms", 1}, {"iterations", 5}});
    ++i;
  }
  return m;
}

std::vector<double> five(double m, double s) {
  std::vector<double> out;
  for (int k = -2; k <= 2; ++k) out.push_back(m + s * k / std::sqrt(2.5));
  return out;
}

json sample(const std::string& metric, double value, int iteration, bool warmup, const std::string& better,
            const std::string& unit) {
  return {{"vm", 0},          {"benchmark", "x"}, {"iteration", iteration}, {"warmup", warmup},
          {"metric", metric}, {"value", value},   {"unit", unit},           {"better", better}};
}

json vmstat(double t, double r, double cs, int vm) {
  return {{"vm", vm},
          {"monitor", "vmstat"},
          {"t", t},
          {"values",
           {{"r", r}, {"b", 0}, {"swpd", 0}, {"free", 1600000}, {"buff", 15000}, {"cache", 195000}, {"si", 0},
            {"so", 0}, {"bi", 0}, {"bo", 30}, {"in", 284}, {"cs", cs}, {"us", 41}, {"sy", 52}, {"id", 6},
            {"wa", 0}, {"st", 0}}}};
}

}  // namespace fixtures
