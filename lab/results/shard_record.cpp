#include "results/shard_record.hpp"

#include <algorithm>
#include <set>

namespace smtlab::results {

using nlohmann::json;

bool ShardRecord::same_split(const ShardRecord& other) const {
  return count == other.count && plan_cells == other.plan_cells && filters == other.filters &&
         iterations == other.iterations;
}

std::vector<std::string> ShardRecord::cells_of(int k) const {
  std::vector<std::string> out;
  if (k < 1 || count < 1) return out;
  for (size_t p = static_cast<size_t>(k - 1); p < plan_cells.size(); p += static_cast<size_t>(count))
    out.push_back(plan_cells[p]);
  return out;
}

std::string shard_name(int k, int n) { return std::to_string(k) + "/" + std::to_string(n); }

std::string AbsentShard::name() const { return shard_name(index, count); }

std::optional<ShardRecord> read_shard_record(const json& manifest, bool& unreadable) {
  unreadable = false;
  if (!manifest.is_object() || !manifest.contains("shard")) return std::nullopt;
  const json& s = manifest["shard"];
  unreadable = true;
  if (!s.is_object() || s.value("method", json()) != "position-mod-count") return std::nullopt;
  const json count = s.value("count", json());
  if (!count.is_number_integer() || count.get<long long>() < 1 || count.get<long long>() > 1'000'000)
    return std::nullopt;
  ShardRecord r;
  r.count = count.get<int>();
  const json indices = s.contains("indices") ? s["indices"] : json::array({s.value("index", json())});
  if (!indices.is_array()) return std::nullopt;
  for (const json& k : indices) {
    if (!k.is_number_integer() || k.get<long long>() < 1 || k.get<long long>() > r.count) return std::nullopt;
    r.indices.push_back(k.get<int>());
  }
  const json cells = s.value("plan_cells", json());
  if (!cells.is_array()) return std::nullopt;
  for (const json& id : cells) {
    if (!id.is_string()) return std::nullopt;
    r.plan_cells.push_back(id.get<std::string>());
  }
  r.filters = s.value("filters", json());
  r.iterations = s.value("iterations", json());
  unreadable = false;
  return r;
}

std::vector<AbsentShard> absent_shards(const ShardRecord& record, const std::set<std::string>& held) {
  std::vector<AbsentShard> out;
  const std::set<int> holds(record.indices.begin(), record.indices.end());
  // A shard past the plan's cells holds none (a manifest from anywhere may claim a huge count).
  const int last = static_cast<int>(std::min<size_t>(static_cast<size_t>(record.count), record.plan_cells.size()));
  for (int k = 1; k <= last; ++k) {
    if (holds.count(k)) continue;
    AbsentShard a{k, record.count, {}};
    for (auto& id : record.cells_of(k))
      if (!held.count(id)) a.cells.push_back(std::move(id));
    if (!a.cells.empty()) out.push_back(std::move(a));
  }
  return out;
}

}  // namespace smtlab::results
