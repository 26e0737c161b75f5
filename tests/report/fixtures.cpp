#include "fixtures.hpp"

#include <cmath>

#include "results/results.hpp"
#include "scratch.hpp"

namespace fixtures {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path temp_dir(const std::string& tag) {
  return smtlab::test::scratch_path("report-" + tag);
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
                          {"kind", c.kind}, {"vms", 1}, {"iterations", c.iterations}});
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

// A chat run as in seed 004: mainline vs rsdl (-80 % throughput), plus a cell that failed.
std::filesystem::path chat_run() {
  std::vector<fixtures::CellSpec> specs(3);
  specs[0].variant = "mainline";
  specs[1].variant = "rsdl";
  specs[2].variant = "broken";
  for (auto& s : specs) s.topology = "8cpu", s.benchmark = "chat", s.kind = "chat", s.iterations = 3;
  auto dir = fixtures::temp_dir("chat");
  auto w = smtlab::results::ResultsWriter::create(dir, fixtures::manifest(specs));
  struct V {
    double msgs, p50, p99, r, cs;
  };
  V v[2] = {{50000, 100, 900, 400, 1100000}, {10000, 300, 2000, 4, 310000}};
  for (int c = 0; c < 2; ++c) {
    std::string id = "cell" + std::to_string(c);
    w.append_sample(id, fixtures::sample("msgs/s", 1, 0, true, "higher", "msgs/s"));  // warm-up run
    for (int it = 1; it <= 3; ++it) {
      w.append_sample(id, fixtures::sample("msgs/s", v[c].msgs, it, false, "higher", "msgs/s"));
      w.append_sample(id, fixtures::sample("latency-p50-us", v[c].p50 + it, it, false, "lower", "us"));
      w.append_sample(id, fixtures::sample("latency-p99-us", v[c].p99 + it, it, false, "lower", "us"));
      w.append_sample(id, fixtures::sample("cs/msg", 3, it, false, "lower", ""));
    }
    for (int k = 1; k <= 3; ++k) w.append_monitor(id, fixtures::vmstat(10.0 * k, v[c].r + k, v[c].cs + k));
    json extra = {{"bench_s", 120.0 + c}, {"wall_s", 150.5 + c}};
    if (c == 1)  // rsdl was measured while something else ran on the host
      extra["disturbances"] = {"host: other processes used 23 % of the host CPUs while the benchmark ran (the guests "
                               "70 %, smtlab 1 %)\nsecond line"};
    w.set_cell_status(id, "ok", extra);
  }
  w.set_cell_status("cell2", "failed", {{"error", "kernel panic - not syncing\nmore console"}});
  return dir;
}


std::filesystem::path kernbench_run() {
  std::vector<CellSpec> specs;
  for (std::string v : {"base", "coresched"})
    for (std::string topo : {"HT", "noHT"}) {
      CellSpec s;
      s.variant = v;
      s.topology = topo;
      specs.push_back(s);
    }
  auto dir = temp_dir("kernbench");
  auto w = smtlab::results::ResultsWriter::create(dir, manifest(specs));
  for (int c = 0; c < 4; ++c) {
    std::string id = "cell" + std::to_string(c);
    for (int jobs : {2, 4, 8}) {
      auto values = five(200.0 / jobs * (1 + 0.1 * c) + 20, 0.5 + c);
      for (int it = 0; it < 5; ++it)
        w.append_sample(id, sample("elsp-" + std::to_string(jobs), values[it], it + 1));
    }
    for (int k = 0; k <= 12; ++k) w.append_monitor(id, vmstat(10.0 * k, 2 + (c + 1) * k % 7, 1000 * (c + 1) + 50 * k));
    json topo = json::array();
    json cpus = json::array();
    for (int cpu = 0; cpu < 4; ++cpu)
      cpus.push_back({{"cpu", cpu}, {"core_id", c % 2 == 0 ? cpu / 2 : cpu}, {"package_id", 0}, {"die_id", 0},
                      {"siblings", c % 2 == 0 ? (cpu < 2 ? "0-1" : "2-3") : std::to_string(cpu)}});
    topo.push_back({{"vm", 0}, {"online", "0-3"}, {"smt_active", c % 2 == 0 ? 1 : 0}, {"cpus", cpus}});
    w.set_cell_status(id, "ok", {{"bench_s", 300.0 + c}, {"wall_s", 360.0 + c}, {"guest_topology", topo}});
  }
  return dir;
}

}  // namespace fixtures
