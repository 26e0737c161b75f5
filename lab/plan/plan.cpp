// Expanding a recipe into cells: order, filters, shards.
#include <algorithm>
#include <array>

#include "plan/cell_definition.hpp"
#include "plan/plan.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace smtlab::plan {

using namespace recipe;

std::vector<int> default_kernbench_jobs(int vcpus) {
  std::vector<int> jobs;
  int max = 2 * std::max(1, vcpus);
  for (int j = 2; j <= max; j *= 2) jobs.push_back(j);
  if (jobs.back() != max) jobs.push_back(max);
  return jobs;
}

namespace {

struct Filters {
  std::vector<std::string> ids, variants, topologies, benchmarks;
  bool keeps(const Cell& c) const {
    auto any = [](const std::vector<std::string>& wanted, const std::string& have) {
      return wanted.empty() || std::find(wanted.begin(), wanted.end(), have) != wanted.end();
    };
    bool id_ok = ids.empty() || std::any_of(ids.begin(), ids.end(), [&](const std::string& p) { return c.id.rfind(p, 0) == 0; });
    return id_ok && any(variants, c.variant.name) && any(topologies, c.topology.name) && any(benchmarks, c.benchmark.name);
  }
};

bool is_hex(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string names_of(const std::vector<Cell>& cells, const std::string& axis) {
  std::vector<std::string> seen;
  for (const auto& c : cells) {
    const std::string& n = axis == "variant" ? c.variant.name : axis == "topology" ? c.topology.name : c.benchmark.name;
    if (std::find(seen.begin(), seen.end(), n) == seen.end()) seen.push_back(n);
  }
  std::string out;
  for (size_t i = 0; i < seen.size(); ++i) out += (i ? ", " : "") + seen[i];
  return out;
}

}  // namespace

Plan make_plan(const Recipe& r, const PlanOptions& options) {
  if (options.shard_count < 1 || options.shard_index < 0 || options.shard_index >= options.shard_count)
    throw Error("invalid shard " + std::to_string(options.shard_index + 1) + "/" + std::to_string(options.shard_count),
                "a shard is k/n with 1 <= k <= n");
  if (options.iterations < 0) throw Error("iterations must be positive", "give --iterations N with N >= 1");

  Plan plan;
  plan.recipe_name = r.name;
  plan.recipe_sha256 = r.sha256;
  plan.share_boot = r.share_boot;
  plan.parallel = r.parallel;

  // Mixed-radix walk over the three axes, the first axis of matrix.order outermost.
  std::vector<Axis> order = r.matrix.order;
  for (Axis a : {Axis::benchmark, Axis::topology, Axis::variant})
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  auto size_of = [&](Axis a) -> size_t {
    return a == Axis::variant ? r.variants.size() : a == Axis::topology ? r.topologies.size() : r.benchmarks.size();
  };
  std::array<size_t, 3> n{size_of(order[0]), size_of(order[1]), size_of(order[2])};
  detail::DigestCache digests;
  std::vector<Cell> all;
  for (size_t i0 = 0; i0 < n[0]; ++i0)
    for (size_t i1 = 0; i1 < n[1]; ++i1)
      for (size_t i2 = 0; i2 < n[2]; ++i2) {
        size_t pos[3] = {i0, i1, i2};
        size_t vi = 0, ti = 0, bi = 0;
        for (int k = 0; k < 3; ++k) (order[k] == Axis::variant ? vi : order[k] == Axis::topology ? ti : bi) = pos[k];
        const Variant& v = r.variants[vi];
        const Topology& t = r.topologies[ti];
        const Benchmark& b = r.benchmarks[bi];
        if (!r.matrix.selects(v.name, t.name, b.name)) continue;
        Cell c;
        c.index = static_cast<int>(all.size());
        c.variant = v;
        auto k = r.kernels.find(v.kernel);
        if (k == r.kernels.end())
          throw Error("variant '" + v.name + "' names unknown kernel '" + v.kernel + "'", "define it under 'kernels'");
        c.kernel = k->second;
        c.topology = t;
        c.benchmark = b;
        if (auto* kb = std::get_if<KernbenchParams>(&c.benchmark.params); kb && kb->jobs.empty())
          kb->jobs = default_kernbench_jobs(t.vcpus());
        c.iterations = options.iterations > 0 ? options.iterations : b.iterations;
        c.benchmark.iterations = c.iterations;
        c.id = sha256_hex(detail::cell_definition(c, digests).dump()).substr(0, 12);
        all.push_back(std::move(c));
      }

  Filters f;
  for (const auto& text : options.filters) {
    auto eq = text.find('=');
    std::string key = eq == std::string::npos ? "" : text.substr(0, eq), value = eq == std::string::npos ? "" : text.substr(eq + 1);
    Filters one;
    if (eq == std::string::npos) {
      if (!is_hex(text) || text.size() > 12)
        throw Error("'" + text + "' is not a cell filter",
                    "use a cell id prefix (hex, as printed by smtlab plan) or variant=NAME, topology=NAME, benchmark=NAME");
      one.ids.push_back(text);
      f.ids.push_back(text);
    } else if (key == "variant" || key == "topology" || key == "benchmark") {
      auto& list = key == "variant" ? one.variants : key == "topology" ? one.topologies : one.benchmarks;
      list.push_back(value);
      (key == "variant" ? f.variants : key == "topology" ? f.topologies : f.benchmarks).push_back(value);
    } else {
      throw Error("unknown filter '" + text + "'", "use variant=NAME, topology=NAME, benchmark=NAME or a cell id prefix");
    }
    if (std::none_of(all.begin(), all.end(), [&](const Cell& c) { return one.keeps(c); }))
      throw Error("no cell of recipe '" + r.name + "' matches filter '" + text + "'",
                  eq == std::string::npos ? "list the cell ids with smtlab plan"
                                          : key + "s in this plan: " + names_of(all, key));
  }
  std::vector<Cell> kept;
  for (auto& c : all)
    if (f.keeps(c)) kept.push_back(std::move(c));
  if (kept.empty()) throw Error("the filters together select no cell", "each filter matches some cells, but not the same ones");

  plan.shard_index = options.shard_index;
  plan.shard_count = options.shard_count;
  for (const auto& c : kept) plan.every_shard_ids.push_back(c.id);
  for (size_t i = 0; i < kept.size(); ++i)
    if (static_cast<int>(i % static_cast<size_t>(options.shard_count)) == options.shard_index)
      plan.cells.push_back(std::move(kept[i]));
  return plan;
}

std::string boot_group_key(const Cell& cell) {
  // Names are unique within a recipe, and a variant names its kernel; the NUL cannot be in a name.
  return cell.kernel.name + std::string(1, '\0') + cell.variant.name + std::string(1, '\0') + cell.topology.name;
}

std::vector<std::vector<size_t>> boot_groups(const std::vector<Cell>& cells, bool share) {
  std::vector<std::vector<size_t>> groups;
  std::vector<std::string> keys;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (share) {
      auto key = boot_group_key(cells[i]);
      auto it = std::find(keys.begin(), keys.end(), key);
      if (it != keys.end()) {
        groups[static_cast<size_t>(it - keys.begin())].push_back(i);
        continue;
      }
      keys.push_back(key);
    }
    groups.push_back({i});
  }
  return groups;
}

}  // namespace smtlab::plan
