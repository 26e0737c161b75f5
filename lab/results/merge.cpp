#include "results/merge.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "results/cell_id.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace smtlab::results {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Shard {
  fs::path dir;
  json manifest;
};

std::string recipe_sha(const json& m) {
  if (m.contains("recipe") && m["recipe"].is_object() && m["recipe"].contains("sha256") &&
      m["recipe"]["sha256"].is_string())
    return m["recipe"]["sha256"].get<std::string>();
  return {};
}

}  // namespace

MergeReport merge_results(const std::vector<fs::path>& dirs, const fs::path& out) {
  if (dirs.empty()) throw Error("nothing to merge", "name the result directories of the shards");
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec)))
    throw Error("merge output " + out.string() + " already exists and is not empty", "choose a new directory");

  std::vector<Shard> shards;
  for (const auto& d : dirs) {
    fs::path file = d / "manifest.json";
    if (!fs::exists(file)) throw Error(d.string() + " is not a results directory (no manifest.json)");
    json m = json::parse(read_file(file), nullptr, false);
    if (m.is_discarded() || !m.is_object() || !m.contains("cells") || !m["cells"].is_array())
      throw Error(file.string() + " is not a valid results manifest");
    shards.push_back({d, std::move(m)});
  }
  const std::string sha = recipe_sha(shards[0].manifest);
  if (sha.empty()) throw Error(dirs[0].string() + ": the manifest has no recipe sha256", "it cannot be merged safely");
  MergeReport report;
  for (size_t i = 1; i < shards.size(); ++i) {
    std::string other = recipe_sha(shards[i].manifest);
    if (other != sha)
      throw Error("cannot merge " + shards[i].dir.string() + " with " + shards[0].dir.string() +
                      ": they ran different recipes (sha256 " + other.substr(0, 12) + " vs " + sha.substr(0, 12) + ")",
                  "merge only shards of the same recipe file; compare different recipes with `smtlab compare A B`");
    if (shards[i].manifest.value("host", json()) != shards[0].manifest.value("host", json()))
      report.notes.push_back(shards[i].dir.string() + " ran on a different host than " + shards[0].dir.string());
    if (shards[i].manifest.value("accel", json()) != shards[0].manifest.value("accel", json()))
      report.notes.push_back(shards[i].dir.string() + " used a different accelerator than " + shards[0].dir.string());
  }

  // The cell list: the first shard's order, then any cell only other shards list.
  json merged = shards[0].manifest;
  json cells = json::array();
  std::vector<std::string> order;
  std::map<std::string, json> base_entry;
  for (const auto& s : shards)
    for (const auto& c : s.manifest["cells"]) {
      if (!c.is_object() || !c.contains("id") || !c["id"].is_string()) continue;
      std::string id = c["id"].get<std::string>();
      check_cell_id(id);
      if (!base_entry.count(id)) {
        order.push_back(id);
        base_entry[id] = c;
      }
    }

  fs::create_directories(out / "cells");
  json merged_from = json::array();
  for (const auto& s : shards)
    merged_from.push_back({{"dir", fs::absolute(s.dir).string()},
                           {"started", s.manifest.value("started", json())},
                           {"finished", s.manifest.value("finished", json())},
                           {"host", s.manifest.value("host", json())}});

  for (const auto& id : order) {
    std::vector<size_t> ran;
    for (size_t i = 0; i < shards.size(); ++i)
      for (const auto& c : shards[i].manifest["cells"])
        if (c.is_object() && c.value("id", "") == id && c.value("status", "pending") != "pending") ran.push_back(i);
    json entry = base_entry[id];
    if (ran.empty()) {
      report.missing.push_back(id);
      entry["status"] = "pending";
    } else {
      size_t pick = ran[0];
      for (size_t i : ran)
        for (const auto& c : shards[i].manifest["cells"])
          if (c.value("id", "") == id && c.value("status", "") == "ok" &&
              shards[pick].manifest["cells"].is_array()) {
            bool pick_ok = false;
            for (const auto& pc : shards[pick].manifest["cells"])
              if (pc.value("id", "") == id && pc.value("status", "") == "ok") pick_ok = true;
            if (!pick_ok) pick = i;
          }
      if (ran.size() > 1) {
        std::string where;
        for (size_t i : ran) where += (where.empty() ? "" : " and ") + shards[i].dir.string();
        report.overlapping.push_back(id + " (in " + where + "; kept " + shards[pick].dir.string() + ")");
      }
      for (const auto& c : shards[pick].manifest["cells"])
        if (c.value("id", "") == id) entry = c;
      fs::path src = shards[pick].dir / "cells" / id;
      if (fs::exists(src)) {
        fs::copy(src, out / "cells" / id, fs::copy_options::recursive, ec);
        if (ec) throw Error("cannot copy " + src.string() + " to " + out.string() + ": " + ec.message());
      }
      // Earlier attempts (--retry-failed) go along; the entry's "attempts" points at them.
      fs::path attempts = shards[pick].dir / "attempts" / id;
      if (fs::exists(attempts)) {
        fs::create_directories(out / "attempts", ec);
        if (!ec) fs::copy(attempts, out / "attempts" / id, fs::copy_options::recursive, ec);
        if (ec) throw Error("cannot copy " + attempts.string() + " to " + out.string() + ": " + ec.message());
      }
      entry["shard"] = fs::absolute(shards[pick].dir).string();
    }
    cells.push_back(std::move(entry));
  }
  merged["cells"] = std::move(cells);
  merged["merged_from"] = std::move(merged_from);
  // Shared boots (share_boot): every shard's groups; a key two shards used keeps the first's.
  json groups = json::object();
  for (const auto& s : shards)
    if (s.manifest.contains("boot_groups") && s.manifest["boot_groups"].is_object())
      for (const auto& [key, g] : s.manifest["boot_groups"].items())
        if (!groups.contains(key)) groups[key] = g;
  if (!groups.empty()) merged["boot_groups"] = std::move(groups);
  report.cells = order.size();
  write_file_atomic(out / "manifest.json", merged.dump(2) + "\n");
  return report;
}

}  // namespace smtlab::results
