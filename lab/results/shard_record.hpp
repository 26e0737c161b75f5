#pragma once
// What a results manifest records of the shards of a sharded plan that its directory holds
// ("shard", docs/results-schema.md): read strictly, and which shards of the run are absent.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace smtlab::results {

struct ShardRecord {
  int count = 0;                        // N of --shard K/N
  std::vector<int> indices;             // the shards held, 1-based: a run's "index", a merge's "indices"
  std::vector<std::string> plan_cells;  // every shard's cells, in plan order
  nlohmann::json filters, iterations;   // the run's --cells and --iterations (null when not given)
  // Shards of one run split the same plan: the same N, plan_cells, filters and iterations.
  bool same_split(const ShardRecord& other) const;
  // Shard k's cells (position mod N), in plan order.
  std::vector<std::string> cells_of(int k) const;
};

// nullopt when the manifest has no "shard"; also when it has one this smtlab cannot read, and
// then `unreadable` is set (the caller says what that costs).
std::optional<ShardRecord> read_shard_record(const nlohmann::json& manifest, bool& unreadable);

// "K/N"
std::string shard_name(int k, int n);

// A shard of the record's N that it does not hold, with its cells that `held` lacks.
struct AbsentShard {
  int index = 0, count = 0;
  std::vector<std::string> cells;  // in plan order
  std::string name() const;        // "K/N"
};

// The shards of N the record does not hold whose cells are not all in `held` (a shard whose cells
// another directory holds is not absent).
std::vector<AbsentShard> absent_shards(const ShardRecord& record, const std::set<std::string>& held);

}  // namespace smtlab::results
