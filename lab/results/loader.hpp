#pragma once
// Reading a results directory back, defensively: bounded reads; a corrupt, oversized or invalid
// line is skipped and counted (never fatal); only an unreadable manifest is an error.
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/shard_record.hpp"

namespace smtlab::results {

struct Sample {
  int vm = 0;
  int iteration = 0;
  bool warmup = false;
  std::string metric;
  double value = 0;
  std::string unit;
  std::string better = "lower";  // "lower" | "higher"
  bool higher_is_better() const { return better == "higher"; }
};

struct MonitorRecord {
  int vm = 0;
  std::string monitor;                   // "vmstat", "schedstat", "cpu_busy", ...
  std::string phase = "measure";         // "measure", or "setup" (samples before the first iteration)
  double t = 0;                          // seconds since the first measured iteration began
  std::map<std::string, double> values;  // the numeric members of "values"
  nlohmann::json raw;                    // the whole record as written
};

struct CellResult {
  std::string id;
  int index = 0;
  std::string variant, kernel, topology, benchmark, kind;
  std::string status = "pending";  // pending | running | ok | failed
  std::string error;
  double wall_s = -1;   // -1: not recorded
  double bench_s = -1;  // -1: not recorded
  double vmstat_interval_s = -1;  // the benchmark guests' vmstat sampling interval; 0: none; -1: not recorded
  int vms = 1;
  std::vector<std::string> roles;  // per guest, "benchmark" or "noise" (the definition's); empty: not recorded
  nlohmann::json guest_topology;  // as the guests reported it (array, one per VM), or null
  nlohmann::json entry;           // the cell's manifest entry as written
  std::vector<Sample> samples;
  std::vector<MonitorRecord> monitors;
  size_t skipped_lines = 0;  // corrupt or invalid lines in this cell's files
  std::string column() const { return variant + "-" + topology; }
};

struct RunResults {
  std::filesystem::path dir;
  nlohmann::json manifest;
  std::vector<CellResult> cells;  // manifest order (= plan order)
  size_t skipped_lines = 0;       // total over all cells
  std::vector<std::string> warnings;  // one line per problem found while loading
  // A directory of a sharded run (`run --shard K/N`, or a merge of some of its shards): the
  // shards of its plan whose cells it does not hold. Nothing of them was measured.
  std::vector<AbsentShard> absent_shards;
  // The run's name for tables: the directory name.
  std::string name() const;
};

struct LoadLimits {
  size_t max_manifest_bytes = 64 << 20;
  size_t max_line_bytes = 68 << 10;       // the protocol's record limit (64 KiB) and what the host adds
  size_t max_file_bytes = size_t(1) << 30;  // per jsonl file; the rest is ignored (and warned)
  size_t max_warnings = 50;
};

// The recipe file a manifest records, for a command to paste into a shell: "RECIPE" when it records
// none, or one whose bytes were not UTF-8 (the manifest holds them replaced by U+FFFD, a path that
// does not exist).
std::string recorded_recipe_file(const nlohmann::json& manifest);

// Throws smtlab::Error when dir has no readable manifest.json (what, where, what to do).
RunResults load_results(const std::filesystem::path& dir, const LoadLimits& limits = {});

}  // namespace smtlab::results
