#include "report/tables.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "report/conditions.hpp"
#include "stats/summary.hpp"
#include "util/error.hpp"

namespace smtlab::report {

using results::CellResult;
using results::RunResults;

std::string statistic_label(const std::string& statistic, bool higher) {
  if (statistic == "Amean" && higher) return "Hmean";
  return statistic;
}

double statistic_value(const Value& v, const std::string& s, bool higher) {
  if (s == "Min") return v.min;
  if (s == "Amean") return higher ? v.hmean : v.amean;
  if (s == "Stddev") return v.stddev;
  if (s == "CoeffVar") return v.coeffvar;
  if (s == "Max") return v.max;
  if (s == "BAmean-95") return v.bamean;
  throw Error("unknown statistic '" + s + "'");
}

double percent_change(const std::string& statistic, double base, double value, bool higher) {
  if (statistic == "Stddev" || statistic == "CoeffVar") higher = false;
  if (!std::isfinite(base) || !std::isfinite(value)) return NAN;
  if (value == base) return 0;  // not -0.00 from rounding
  if (base == 0) return NAN;
  return higher ? value * 100 / base - 100 : 100 - value * 100 / base;
}

double cell_percent(const Block& b, const MetricRow& m, size_t column, const std::string& statistic) {
  const Value& base = m.values[b.baseline];
  const Value& v = m.values[column];
  if (base.empty() || v.empty()) return NAN;
  double x = statistic_value(v, statistic, m.higher_is_better);
  if (column == b.baseline) return std::isfinite(x) ? 0.0 : NAN;
  return percent_change(statistic, statistic_value(base, statistic, m.higher_is_better), x, m.higher_is_better);
}

namespace {

// Metric order: by job/group count, then by the usual operation order (user, syst, elsp).
struct MetricKey {
  std::string prefix;
  long number = -1;
};

MetricKey split_metric(const std::string& m) {
  static const std::regex re(R"(^(.*)-([0-9]+)$)");
  std::smatch match;
  if (std::regex_match(m, match, re) && match[2].length() < 9) return {match[1], std::stol(match[2])};
  return {m, -1};
}

bool wanted(const std::string& kind, const std::string& metric, const CompareOptions& o) {
  if (o.all_metrics) return true;
  MetricKey k = split_metric(metric);
  if (kind == "kernbench") return k.prefix == "elsp" || (o.kernbench_user_sys && (k.prefix == "user" || k.prefix == "syst"));
  if (kind == "chat") return metric == "msgs/s" || (metric.rfind("latency-p", 0) == 0);
  if (kind == "hackbench") return k.prefix == "time";
  if (kind == "command") return metric == "elapsed-s";  // user-s and sys-s with --all-metrics
  return true;
}

int prefix_rank(const std::string& p) {
  static const std::vector<std::string> order = {"user", "syst", "elsp", "time", "msgs/s"};
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] == p) return static_cast<int>(i);
  return static_cast<int>(order.size());
}

Value compute(std::vector<double> v, bool higher) {
  Value out;
  out.n = v.size();
  if (v.empty()) return out;
  out.amean = stats::mean(v);
  out.hmean = stats::harmonic_mean(v);
  out.stddev = stats::stddev(v);
  out.coeffvar = stats::coeffvar(v);
  out.min = stats::min(v);
  out.max = stats::max(v);
  out.bamean = stats::best_mean(v, 95, higher);
  out.ci95 = stats::mean_ci_half_width(stats::summarize(v), 0.05);
  return out;
}

// The first lines of a cell entry's "disturbances" (written by the run; the file may come from
// anywhere, so: strings only, one line each, bounded in number and length).
std::vector<std::string> disturbance_reasons(const nlohmann::json& entry) {
  constexpr size_t kMaxReasonChars = 300;
  std::vector<std::string> out;
  if (!entry.is_object() || !entry.contains("disturbances") || !entry["disturbances"].is_array()) return out;
  size_t total = 0;
  for (const auto& d : entry["disturbances"]) {
    if (!d.is_string()) continue;
    ++total;
    if (out.size() == kMaxDisturbanceReasons) continue;
    const auto& text = d.get_ref<const std::string&>();
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > kMaxReasonChars) line = line.substr(0, kMaxReasonChars) + "...";
    out.push_back(std::move(line));
  }
  if (total > out.size()) out.back() += " (and " + std::to_string(total - out.size()) + " more)";
  return out;
}

// The guests of a cell that sent measured samples.
std::set<int> measured_vms(const CellResult& cell) {
  std::set<int> out;
  for (const auto& s : cell.samples)
    if (!s.warmup) out.insert(s.vm);
  return out;
}

struct BlockBuilder {
  Block block;
  std::vector<std::string> kinds;
};

}  // namespace

Tables build_tables(const std::vector<RunResults>& runs, const CompareOptions& options) {
  Tables t;
  t.rule = options.rule;
  for (const auto& run : runs) {
    for (const auto& w : run.warnings) t.warnings.push_back(run.name() + ": " + w);
    for (const auto& a : run.absent_shards) {
      t.absent.push_back({run.name(), a});
      t.warnings.push_back(run.name() + ": shard " + a.name() + " of its run is not in this directory (" +
                           std::to_string(a.cells.size()) + " cell(s) not measured); run it and `smtlab merge` "
                           "it with this one to compare the whole plan");
    }
  }
  t.conditions = condition_differences(runs);
  t.warnings.insert(t.warnings.end(), t.conditions.begin(), t.conditions.end());
  // Blocks in first-seen (plan) order; columns in first-seen order within each block.
  std::vector<BlockBuilder> blocks;
  std::map<std::string, size_t> block_index;
  for (const auto& run : runs) {
    for (const CellResult& cell : run.cells) {
      std::string bkey = cell.benchmark;
      std::string title = cell.benchmark;
      std::string colname = cell.variant + "-" + cell.topology;
      if (options.grouping == Grouping::by_topology) {
        bkey += "\n" + cell.topology;
        title += " " + cell.topology;
        colname = cell.variant;
      }
      auto [it, inserted] = block_index.try_emplace(bkey, blocks.size());
      if (inserted) {
        BlockBuilder b;
        b.block.title = title;
        b.block.benchmark = cell.benchmark;
        b.block.topology = options.grouping == Grouping::by_topology ? cell.topology : "";
        blocks.push_back(std::move(b));
      }
      BlockBuilder& b = blocks[it->second];
      Column col;
      col.name = colname;
      col.variant = cell.variant;
      col.topology = cell.topology;
      col.run = run.name();
      col.cell = &cell;
      const std::set<int> vms = options.per_vm && cell.status == "ok" ? measured_vms(cell) : std::set<int>{};
      if (vms.size() < 2) {
        b.block.columns.push_back(col);
        b.kinds.push_back(cell.kind);
      } else {
        for (int vm : vms) {
          Column one = col;
          one.name += "/vm" + std::to_string(vm);
          one.vm = vm;
          b.block.columns.push_back(std::move(one));
          b.kinds.push_back(cell.kind);
        }
      }
    }
  }
  // Clashing column names (several runs of one recipe): prefix every column with its run.
  for (auto& b : blocks) {
    std::set<std::string> seen;
    bool clash = false;
    for (const auto& c : b.block.columns) clash |= !seen.insert(c.name).second;
    if (clash)
      for (auto& c : b.block.columns) c.name = c.run + "/" + c.name;
  }

  // A baseline that some blocks lack (a matrix exclude, a failed shard) falls back to their first
  // column with a warning; one that names no column of any block is a mistake.
  std::vector<const Block*> missing_baseline;
  for (auto& bb : blocks) {
    Block& b = bb.block;
    // Baseline.
    if (!options.baseline.empty()) {
      bool found = false;
      for (size_t i = 0; i < b.columns.size() && !found; ++i)
        if (b.columns[i].name == options.baseline) b.baseline = i, found = true;
      for (size_t i = 0; i < b.columns.size() && !found; ++i)
        if (b.columns[i].variant == options.baseline || b.columns[i].run == options.baseline) b.baseline = i, found = true;
      if (!found) missing_baseline.push_back(&b);
    }
    // Failed / unfinished cells.
    for (const auto& c : b.columns)
      if (c.cell && c.cell->status != "ok")
        b.failed.push_back({c.name, c.cell->id, c.cell->status, c.cell->error});
    for (size_t i = 0; i < b.columns.size(); ++i) {
      const Column& c = b.columns[i];
      const bool again = i > 0 && b.columns[i - 1].cell == c.cell;  // a cell's other guests: said once
      if (c.cell && c.cell->status == "ok" && !again)
        if (auto reasons = disturbance_reasons(c.cell->entry); !reasons.empty())
          b.disturbed.push_back({c.vm >= 0 ? c.name.substr(0, c.name.rfind("/vm")) : c.name, c.cell->id,
                                 std::move(reasons)});
    }
    // Metrics: first-seen, then sorted by number and operation.
    std::vector<std::string> metrics;
    std::map<std::string, std::pair<std::string, bool>> meta;  // metric -> unit, higher
    for (size_t i = 0; i < b.columns.size(); ++i) {
      const CellResult* cell = b.columns[i].cell;
      if (!cell) continue;
      for (const auto& s : cell->samples) {
        if (!b.columns[i].holds(s) || !wanted(bb.kinds[i], s.metric, options)) continue;
        if (!meta.count(s.metric)) {
          metrics.push_back(s.metric);
          meta[s.metric] = {s.unit, s.higher_is_better()};
        }
      }
    }
    std::stable_sort(metrics.begin(), metrics.end(), [](const std::string& a, const std::string& c) {
      MetricKey ka = split_metric(a), kc = split_metric(c);
      if (ka.number != kc.number) return ka.number < kc.number;
      return prefix_rank(ka.prefix) < prefix_rank(kc.prefix);
    });
    for (const auto& m : metrics) {
      MetricRow row;
      row.metric = m;
      row.unit = meta[m].first;
      row.higher_is_better = meta[m].second;
      for (const auto& c : b.columns) {
        std::vector<double> v;
        if (c.cell && c.cell->status == "ok")
          for (const auto& s : c.cell->samples)
            if (!s.warmup && s.metric == m && c.holds(s)) v.push_back(s.value);
        row.values.push_back(compute(std::move(v), row.higher_is_better));
      }
      const Value& base = row.values[b.baseline];
      for (size_t i = 0; i < b.columns.size(); ++i) {
        const Value& v = row.values[i];
        stats::TestResult r;
        if (i != b.baseline && !base.empty() && !v.empty())
          r = stats::test({base.n, base.amean, base.stddev}, {v.n, v.amean, v.stddev}, options.rule);
        row.tests.push_back(r);
      }
      b.metrics.push_back(std::move(row));
    }
  }
  if (!missing_baseline.empty()) {
    if (missing_baseline.size() == blocks.size()) {
      std::set<std::string> names;
      for (const auto& bb : blocks)
        for (const auto& c : bb.block.columns) names.insert(c.name);
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw Error("baseline '" + options.baseline + "' is not a column of any table", "name one of: " + list);
    }
    for (const Block* b : missing_baseline)
      t.warnings.push_back("baseline '" + options.baseline + "' is not a column of " + b->title + "; its baseline is " +
                           b->columns[b->baseline].name);
  }
  for (auto& bb : blocks) t.blocks.push_back(std::move(bb.block));
  return t;
}

}  // namespace smtlab::report
