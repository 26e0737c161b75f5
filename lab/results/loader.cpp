#include "results/loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <tuple>

#include "results/cell_id.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"

namespace smtlab::results {

namespace fs = std::filesystem;
using nlohmann::json;

std::string RunResults::name() const {
  fs::path d = dir;
  if (d.filename().empty()) d = d.parent_path();
  return d.filename().string();
}

namespace {

std::string str_or(const json& j, const char* key, std::string fallback = {}) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return fallback;
  return it->get<std::string>().substr(0, 4096);
}

double num_or(const json& j, const char* key, double fallback) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return fallback;
  double v = it->get<double>();
  return std::isfinite(v) ? v : fallback;
}

int int_or(const json& j, const char* key, int fallback) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return fallback;
  auto v = it->get<long long>();
  if (v < -1000000 || v > 1000000) return fallback;
  return static_cast<int>(v);
}

class Loader {
 public:
  Loader(RunResults& run, const LoadLimits& limits) : run_(run), limits_(limits) {}

  void warn(const std::string& message) {
    if (run_.warnings.size() < limits_.max_warnings) run_.warnings.push_back(message);
    else if (run_.warnings.size() == limits_.max_warnings) run_.warnings.push_back("(more problems not listed)");
  }

  // Calls parse(json) for each line; counts lines that do not parse or that parse() rejects.
  template <class F>
  void each_line(CellResult& cell, const fs::path& file, F parse) {
    std::error_code ec;
    if (!fs::exists(file, ec)) return;
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      warn("cannot read " + file.string());
      return;
    }
    size_t total = 0, lineno = 0, bad = 0;
    std::string first_bad;
    std::string line;
    bool too_long = false, stop = false;
    auto finish_line = [&] {
      ++lineno;
      if (!(line.empty() && !too_long)) {
        bool ok = false;
        if (!too_long) {
          json j = json::parse(line, nullptr, false);
          if (!j.is_discarded() && j.is_object()) ok = parse(j);
        }
        if (!ok) {
          ++bad;
          if (first_bad.empty()) first_bad = std::to_string(lineno);
        }
      }
      line.clear();
      too_long = false;
    };
    std::vector<char> buf(1 << 16);
    while (!stop && in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      size_t got = static_cast<size_t>(in.gcount());
      if (got == 0) break;
      if (total + got > limits_.max_file_bytes) {
        got = limits_.max_file_bytes - total;
        stop = true;
        warn(file.string() + ": larger than " + std::to_string(limits_.max_file_bytes) + " bytes; the rest is ignored");
      }
      total += got;
      const char* p = buf.data();
      const char* e = p + got;
      while (p < e) {
        const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(e - p)));
        const char* piece_end = nl ? nl : e;
        size_t len = static_cast<size_t>(piece_end - p);
        if (!too_long) {
          if (line.size() + len > limits_.max_line_bytes) {
            too_long = true;
            line.clear();
          } else {
            line.append(p, len);
          }
        }
        if (!nl) break;
        finish_line();
        p = nl + 1;
      }
    }
    if (!line.empty() || too_long) finish_line();  // a last line without '\n' (e.g. cut by a crash)
    if (bad) {
      cell.skipped_lines += bad;
      warn(file.string() + ": skipped " + std::to_string(bad) + " corrupt or invalid line(s) (first: line " +
           first_bad + ")");
    }
  }

 private:
  RunResults& run_;
  const LoadLimits& limits_;
};

bool parse_sample(const json& j, Sample& s) {
  auto metric = j.find("metric");
  auto value = j.find("value");
  if (metric == j.end() || !metric->is_string() || value == j.end() || !value->is_number()) return false;
  s.metric = metric->get<std::string>();
  if (s.metric.empty() || s.metric.size() > 128) return false;
  s.value = value->get<double>();
  if (!std::isfinite(s.value)) return false;
  s.vm = int_or(j, "vm", 0);
  s.iteration = int_or(j, "iteration", 0);
  auto w = j.find("warmup");
  if (w != j.end() && !w->is_boolean()) return false;
  s.warmup = w != j.end() && w->get<bool>();
  s.unit = str_or(j, "unit");
  s.better = str_or(j, "better", "lower");
  if (s.better != "lower" && s.better != "higher") return false;
  return true;
}

bool parse_monitor(const json& j, MonitorRecord& m) {
  m.monitor = str_or(j, "monitor");
  if (m.monitor.empty()) return false;
  m.vm = int_or(j, "vm", 0);
  m.t = num_or(j, "t", NAN);
  if (auto p = j.find("phase"); p != j.end()) {
    if (!p->is_string()) return false;
    m.phase = str_or(j, "phase");
  }
  auto v = j.find("values");
  if (v != j.end() && v->is_object())
    for (auto it = v->begin(); it != v->end(); ++it)
      if (it->is_number() && std::isfinite(it->get<double>())) m.values[it.key()] = it->get<double>();
  m.raw = j;
  return true;
}

// The command that measures `cell` again. An "ok" cell is not run again in its own directory
// (--resume keeps it), so into a new one, with the iterations it was planned with.
std::string measure_again(const json& manifest, const CellResult& cell, int iterations) {
  std::vector<std::string> argv = {"smtlab", "run", recorded_recipe_file(manifest), "--cells", cell.id};
  if (iterations > 0) argv.insert(argv.end(), {"--iterations", std::to_string(iterations)});
  return shell_quote(argv) + " -o NEW_DIR";
}

// A measured sample is one iteration of one metric on one guest: a second record of it (the same
// vm, iteration and metric; kernbench's jobs and hackbench's groups are in the metric's name) is
// dropped, so that it does not count twice. Returns the number dropped and describes the first.
size_t drop_repeated_samples(std::vector<Sample>& samples, std::string& first) {
  std::set<std::tuple<int, int, std::string>> seen;
  size_t dropped = 0;
  auto repeated = [&](const Sample& s) {
    if (s.warmup || seen.emplace(s.vm, s.iteration, s.metric).second) return false;
    if (dropped++ == 0)
      first = "vm " + std::to_string(s.vm) + ", iteration " + std::to_string(s.iteration) + ", " + s.metric;
    return true;
  };
  samples.erase(std::remove_if(samples.begin(), samples.end(), repeated), samples.end());
  return dropped;
}

// "elsp-2 of vm 0: 2, ..." for each metric of each guest with fewer measured samples than
// `iterations` (a metric seen only in warm-up samples has 0), at most five named.
std::string short_metrics(const std::vector<Sample>& samples, int iterations) {
  std::map<std::pair<std::string, int>, int> measured;
  for (const auto& s : samples) measured[{s.metric, s.vm}] += s.warmup ? 0 : 1;
  std::string out;
  size_t named = 0, more = 0;
  for (const auto& [key, n] : measured) {
    if (n >= iterations) continue;
    if (named == 5) {
      ++more;
      continue;
    }
    out += (named++ ? ", " : "") + key.first + " of vm " + std::to_string(key.second) + ": " + std::to_string(n);
  }
  return more ? out + " and " + std::to_string(more) + " more" : out;
}

// The roles of the cell's guests as its definition's topology records them ("benchmark", "noise";
// empty when it records none).
std::vector<std::string> recorded_roles(const json& entry) {
  std::vector<std::string> out;
  if (auto d = entry.find("definition"); d != entry.end() && d->is_object())
    if (auto t = d->find("topology"); t != d->end() && t->is_object())
      if (auto r = t->find("roles"); r != t->end() && r->is_array())
        for (const auto& role : *r) out.push_back(role.is_string() ? role.get<std::string>() : std::string());
  return out;
}

// "vm 1, vm 2": the guests that the cell's definition gives the benchmark role and that have no
// measured sample of any metric ("" when the manifest does not record the roles).
std::string silent_benchmark_vms(const CellResult& cell) {
  std::set<int> reported;
  for (const auto& s : cell.samples)
    if (!s.warmup) reported.insert(s.vm);
  std::string out;
  for (size_t vm = 0; vm < cell.roles.size(); ++vm)
    if (cell.roles[vm] == "benchmark" && !reported.count(static_cast<int>(vm)))
      out += (out.empty() ? "vm " : ", vm ") + std::to_string(vm);
  return out;
}

// What a cell's samples lack or repeat (`file`: its samples.jsonl, already read): a repeat is
// dropped; an "ok" cell without a file, without measured samples, or with fewer than its
// iterations is said, with the command that measures it again. The tables use what there is.
void check_samples(Loader& loader, const json& manifest, CellResult& cell, const fs::path& file) {
  const std::string where = "cell " + cell.id + ": " + file.string();
  std::string first;
  if (size_t dropped = drop_repeated_samples(cell.samples, first))
    loader.warn(where + ": " + std::to_string(dropped) + " measured sample(s) recorded twice (the first: " + first +
                "); each repeat is dropped and its first record kept");
  if (cell.status != "ok") return;
  const int iterations = int_or(cell.entry, "iterations", 0);
  const std::string again = "; measure the cell again with: " + measure_again(manifest, cell, iterations);
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    loader.warn(where + " is missing although the cell ended ok: it has no numbers" + again);
  } else if (std::none_of(cell.samples.begin(), cell.samples.end(), [](const Sample& s) { return !s.warmup; })) {
    loader.warn(where + " has no measured sample although the cell ended ok" + again);
  } else {
    if (iterations > 0)
      if (auto fewer = short_metrics(cell.samples, iterations); !fewer.empty())
        loader.warn(where + ": fewer measured samples than the cell's " + std::to_string(iterations) +
                    " iterations (" + fewer + "); its statistics use those there are" + again);
    // short_metrics counts the guests that reported something; a benchmark guest may have not.
    if (auto silent = silent_benchmark_vms(cell); !silent.empty())
      loader.warn(where + ": no measured sample from " + silent +
                  " (benchmark role), although the cell ended ok; its statistics use the other guests'" + again);
  }
}

}  // namespace

std::string recorded_recipe_file(const json& manifest) {
  std::string file;
  if (auto r = manifest.find("recipe"); r != manifest.end() && r->is_object()) file = str_or(*r, "file");
  if (file.empty() || file.find("\xEF\xBF\xBD") != std::string::npos) return "RECIPE";
  return file;
}

RunResults load_results(const fs::path& dir, const LoadLimits& limits) {
  RunResults run;
  run.dir = dir;
  fs::path file = dir / "manifest.json";
  if (!fs::exists(file))
    throw Error(dir.string() + " is not a results directory (no manifest.json)",
                "pass the directory that `smtlab run -o DIR` wrote");
  run.manifest = json::parse(read_file(file, limits.max_manifest_bytes), nullptr, false);
  if (run.manifest.is_discarded() || !run.manifest.is_object())
    throw Error(file.string() + " is not valid JSON", "the run was damaged; re-run it or restore the file");
  if (run.manifest.contains("schema") && run.manifest["schema"].is_number_integer() &&
      run.manifest["schema"].get<int>() > kSchemaVersion)
    throw Error(file.string() + " uses results schema " + run.manifest["schema"].dump() +
                    ", newer than this smtlab understands (" + std::to_string(kSchemaVersion) + ")",
                "use a newer smtlab");
  Loader loader(run, limits);
  const json& cells = run.manifest.contains("cells") ? run.manifest["cells"] : json::array();
  if (!cells.is_array()) throw Error(file.string() + ": \"cells\" is not an array");
  int index = 0;
  for (const json& entry : cells) {
    CellResult cell;
    if (!entry.is_object() || !valid_cell_id(str_or(entry, "id"))) {
      loader.warn(file.string() + ": cell " + std::to_string(index) + " has no valid id; ignored");
      ++index;
      continue;
    }
    cell.id = str_or(entry, "id");
    cell.index = int_or(entry, "index", index);
    cell.variant = str_or(entry, "variant");
    cell.kernel = str_or(entry, "kernel");
    cell.topology = str_or(entry, "topology");
    cell.benchmark = str_or(entry, "benchmark");
    cell.kind = str_or(entry, "kind", cell.benchmark);
    cell.status = str_or(entry, "status", "pending");
    cell.error = str_or(entry, "error");
    cell.wall_s = num_or(entry, "wall_s", -1);
    cell.bench_s = num_or(entry, "bench_s", -1);
    cell.vmstat_interval_s = num_or(entry, "vmstat_interval_s", -1);
    cell.vms = int_or(entry, "vms", 1);
    cell.guest_topology = entry.contains("guest_topology") ? entry["guest_topology"] : json();
    cell.roles = recorded_roles(entry);
    cell.entry = entry;
    fs::path cdir = dir / "cells" / cell.id;
    loader.each_line(cell, cdir / "samples.jsonl", [&](const json& j) {
      Sample s;
      if (!parse_sample(j, s)) return false;
      cell.samples.push_back(std::move(s));
      return true;
    });
    check_samples(loader, run.manifest, cell, cdir / "samples.jsonl");
    loader.each_line(cell, cdir / "monitor.jsonl", [&](const json& j) {
      MonitorRecord m;
      if (!parse_monitor(j, m)) return false;
      cell.monitors.push_back(std::move(m));
      return true;
    });
    run.skipped_lines += cell.skipped_lines;
    run.cells.push_back(std::move(cell));
    ++index;
  }
  // A shard of a sharded run (or a merge that lacks some): the plan's other cells are not here.
  bool unreadable = false;
  if (auto shard = read_shard_record(run.manifest, unreadable)) {
    std::set<std::string> held;
    for (const auto& c : run.cells) held.insert(c.id);
    run.absent_shards = absent_shards(*shard, held);
  } else if (unreadable) {
    loader.warn(file.string() + ": its \"shard\" cannot be read, so whether shards of its run are absent "
                "cannot be told");
  }
  return run;
}

}  // namespace smtlab::results
