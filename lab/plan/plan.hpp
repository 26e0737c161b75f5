#pragma once
// A recipe expanded into cells: one cell = one variant (with its kernel) x one topology x one
// benchmark, in run order. A cell's id is a hash of its full definition, so the same experiment
// has the same id in every run and every recipe; any parameter change gives a new id.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "recipe/recipe.hpp"

namespace smtlab::plan {

struct Cell {
  std::string id;  // first 12 hex chars of sha256(cell_definition(cell).dump())
  int index = 0;   // 0-based position among the cells the recipe's matrix selects (before filters/shards)
  recipe::Variant variant;
  recipe::KernelSpec kernel;
  recipe::Topology topology;
  recipe::Benchmark benchmark;  // kernbench jobs resolved for this topology when the recipe left them out
  int iterations = 0;           // measured iterations (the benchmark's, or PlanOptions::iterations)
};

struct Plan {
  std::string recipe_name, recipe_sha256;
  std::vector<Cell> cells;
  bool share_boot = false;  // the recipe's share_boot: cells of one boot group run in one boot
  bool parallel = false;    // the recipe's parallel: boot groups may overlap (plan/schedule.hpp)
  // The share of the plan `cells` are (PlanOptions): shard shard_index (0-based) of shard_count,
  // and the ids of every shard's cells (the plan after its filters, before sharding), in order.
  int shard_index = 0, shard_count = 1;
  std::vector<std::string> every_shard_ids;
};

// The key of a cell's boot group: everything but the benchmark (kernel, variant, topology).
std::string boot_group_key(const Cell& cell);

// The cells that run in one boot, as indices into `cells`: with `share` each group holds the cells
// of one boot_group_key in the order of `cells`, and the groups are ordered by their first cell;
// without it every cell is its own group. The group's id is its first cell's id.
std::vector<std::vector<size_t>> boot_groups(const std::vector<Cell>& cells, bool share);

struct PlanOptions {
  int iterations = 0;  // > 0: overrides every benchmark's iterations
  // Each filter is a cell id prefix, or variant=X / topology=Y / benchmark=Z. Filters of the same
  // kind are alternatives (OR); different kinds must all hold (AND). A filter that matches no cell
  // of the recipe is an error.
  std::vector<std::string> filters;
  // Shard k of n (0-based k) keeps the cells whose position in the filtered plan is k mod n, so
  // shards 0..n-1 together run every cell exactly once.
  int shard_index = 0, shard_count = 1;
};

// Expands the recipe in matrix.order (outermost axis first; ties by declaration order).
// Throws smtlab::Error for a filter that matches nothing or an invalid shard.
Plan make_plan(const recipe::Recipe& recipe, const PlanOptions& options = {});

// The canonical definition of a cell (sorted keys): kernel spec (with the sha256 of each fragment,
// patch and prebuilt image file, never host paths), topology, variant settings, benchmark
// parameters and iterations. Throws smtlab::Error when a referenced file cannot be read.
nlohmann::json cell_definition(const Cell& cell);
std::string cell_id(const Cell& cell);  // first 12 hex chars of sha256(cell_definition(cell).dump())

// One row per cell, aligned columns (with share_boot a first column "boot": the cell's group,
// g1, g2, ... in run order): id, variant, kernel, topology, shape SxDxCxT, VMs,
// vCPUs over host CPUs with the overcommit ratio, benchmark and its parameters, iterations.
// Host CPUs: the topology's host_cpus, else `host_cpus` (default: this machine's count).
std::string format_plan_table(const Plan& plan);
std::string format_plan_table(const Plan& plan, int host_cpus);

// {"recipe", "recipe_sha256", "cells": [{id, index, variant, kernel, topology, shape, vms,
//  vcpus_per_vm, host_cpus, benchmark, kind, params, iterations, definition, boot_group}],
//  "share_boot", "boot_groups": [[cell ids of one boot], ...], "parallel", "waves": [[boot
//  group ids], ...] (schedule_waves: the boots that would start together)}; boot_group is the id
//  of the group's first cell (the cell's own id when share_boot is off).
nlohmann::json plan_to_json(const Plan& plan);

// For a CI fan-out: {"include": [{"shard": "1/4"}, ...]} with min(shards, cells) entries (1-based
// "k/n", the form of `smtlab run --shard`). Throws smtlab::Error when shards < 1.
nlohmann::json github_matrix(const Plan& plan, int shards);

// What a results manifest records of a sharded plan (docs/results-schema.md, "shard"), for merge
// to tell which shards are absent and how to run them: {"index": k (1-based, as --shard k/n),
// "count": n, "method": "position-mod-count" (shard k holds the cells at the positions p of
// "plan_cells" with p mod n = k - 1), "plan_cells": every_shard_ids, "filters": options.filters,
// "iterations": options.iterations (0: the benchmarks' own)}. Null when the plan is not sharded.
nlohmann::json shard_record(const Plan& plan, const PlanOptions& options);

// A benchmark's parameters in a short form: "jobs=2,4 warmup synthetic:8 target=all".
std::string describe_params(const recipe::Benchmark& benchmark);

// Kernbench's default job counts for a VM of `vcpus` vCPUs: powers of two from 2 up to 2 x vcpus,
// with 2 x vcpus appended when it is not a power of two.
std::vector<int> default_kernbench_jobs(int vcpus);

}  // namespace smtlab::plan
