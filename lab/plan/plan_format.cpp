// Plans for people (an aligned table) and for programs (JSON, a CI shard matrix).
#include <algorithm>
#include <cstdio>
#include <thread>

#include "plan/cell_definition.hpp"
#include "plan/plan.hpp"
#include "plan/schedule.hpp"
#include "util/cpulist.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace smtlab::plan {

using nlohmann::json;
using namespace recipe;

namespace {

std::string join_ints(const std::vector<int>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out;
}

int host_count(const Topology& t, int fallback) { return t.host_cpus.empty() ? fallback : static_cast<int>(t.host_cpus.size()); }

std::string ratio_text(int vcpus, int host) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%d/%d (%.2fx)", vcpus, host, host > 0 ? static_cast<double>(vcpus) / host : 0.0);
  return buf;
}

}  // namespace

std::string describe_params(const Benchmark& b) {
  if (auto* k = std::get_if<KernbenchParams>(&b.params)) {
    std::string out = "jobs=" + join_ints(k->jobs) + (k->warmup ? " warmup" : "");
    if (k->tree == "synthetic") out += " synthetic:" + std::to_string(k->files) + " target=" + k->target;
    else out += " linux-source:" + k->config + " target=" + k->target;
    return out;
  }
  if (auto* c = std::get_if<ChatParams>(&b.params))
    return "rooms=" + std::to_string(c->rooms) + " users=" + std::to_string(c->users) + " count=" + std::to_string(c->count) +
           " yield=" + to_string(c->yield) + " discard=" + std::to_string(c->discard);
  if (auto* c = std::get_if<CommandParams>(&b.params)) {
    std::string out = "run=" + shell_quote(c->argv);
    for (char& ch : out)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';  // one table row per cell
    return out.size() > 60 ? out.substr(0, 57) + "..." : out;
  }
  const auto& h = std::get<HackbenchParams>(b.params);
  return "groups=" + join_ints(h.groups) + " loops=" + std::to_string(h.loops) + " fds=" + std::to_string(h.fds) +
         (h.threads ? " threads" : "") + (h.pipes ? " pipes" : "");
}

std::string format_plan_table(const Plan& plan) {
  int host = static_cast<int>(std::thread::hardware_concurrency());
  return format_plan_table(plan, host > 0 ? host : 1);
}

std::string format_plan_table(const Plan& plan, int host_cpus) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"id", "variant", "kernel", "topology", "shape", "vms", "vcpus/host", "benchmark", "params", "iter"});
  // With share_boot, a first column names each cell's boot group (g1, g2, ... in run order).
  std::vector<std::string> group_of(plan.cells.size());
  auto groups = boot_groups(plan.cells, plan.share_boot);
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t i : groups[g]) group_of[i] = "g" + std::to_string(g + 1);
  if (plan.share_boot) rows[0].insert(rows[0].begin(), "boot");
  for (size_t ci = 0; ci < plan.cells.size(); ++ci) {
    const auto& c = plan.cells[ci];
    const Topology& t = c.topology;
    rows.push_back({c.id, c.variant.name, c.kernel.name, t.name, t.shape(), std::to_string(t.vms),
                    ratio_text(t.vms * t.vcpus(), host_count(t, host_cpus)), c.benchmark.name, describe_params(c.benchmark),
                    std::to_string(c.iterations)});
    if (plan.share_boot) rows.back().insert(rows.back().begin(), group_of[ci]);
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

json plan_to_json(const Plan& plan) {
  detail::DigestCache digests;
  json cells = json::array();
  auto groups = boot_groups(plan.cells, plan.share_boot);
  std::vector<std::string> group_id(plan.cells.size());
  json group_list = json::array();
  for (const auto& g : groups) {
    json ids = json::array();
    for (size_t i : g) {
      group_id[i] = plan.cells[g.front()].id;
      ids.push_back(plan.cells[i].id);
    }
    group_list.push_back(ids);
  }
  for (size_t ci = 0; ci < plan.cells.size(); ++ci) {
    const auto& c = plan.cells[ci];
    json roles = json::array();
    for (VmRole r : c.topology.roles) roles.push_back(to_string(r));
    cells.push_back(json{{"id", c.id},
                         {"index", c.index},
                         {"variant", c.variant.name},
                         {"kernel", c.kernel.name},
                         {"topology", c.topology.name},
                         {"shape", c.topology.shape()},
                         {"vms", c.topology.vms},
                         {"vcpus_per_vm", c.topology.vcpus()},
                         {"host_cpus", c.topology.host_cpus.empty() ? std::string("all") : format_cpulist(c.topology.host_cpus)},
                         {"roles", roles},
                         {"benchmark", c.benchmark.name},
                         {"kind", c.benchmark.kind},
                         {"params", describe_params(c.benchmark)},
                         {"iterations", c.iterations},
                         {"definition", detail::cell_definition(c, digests)},
                         {"boot_group", group_id[ci]}});
  }
  json waves = json::array();
  for (const auto& wave : schedule_waves(make_boots(plan.cells, plan.share_boot), plan.parallel)) {
    json ids = json::array();
    for (size_t b : wave) ids.push_back(group_list[b][0]);
    waves.push_back(ids);
  }
  return json{{"recipe", plan.recipe_name}, {"recipe_sha256", plan.recipe_sha256}, {"share_boot", plan.share_boot},
              {"boot_groups", group_list},  {"parallel", plan.parallel}, {"waves", waves}, {"cells", cells}};
}

json github_matrix(const Plan& plan, int shards) {
  if (shards < 1) throw Error("the number of shards must be at least 1, got " + std::to_string(shards));
  int n = std::min<int>(shards, static_cast<int>(plan.cells.size()));
  json include = json::array();
  for (int k = 1; k <= n; ++k) include.push_back(json{{"shard", std::to_string(k) + "/" + std::to_string(n)}});
  return json{{"include", include}};
}

json shard_record(const Plan& plan, const PlanOptions& options) {
  if (plan.shard_count <= 1) return nullptr;
  return json{{"index", plan.shard_index + 1},
              {"count", plan.shard_count},
              {"method", "position-mod-count"},
              {"plan_cells", plan.every_shard_ids},
              {"filters", options.filters},
              {"iterations", options.iterations}};
}

}  // namespace smtlab::plan
