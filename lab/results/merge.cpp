#include "results/merge.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "results/artifacts_check.hpp"
#include "results/cell_id.hpp"
#include "results/loader.hpp"
#include "results/shard_record.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"

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

// The artifacts a cell was measured with (results/artifacts_check.hpp): merged, shards that ran
// the same kernel name with other bytes or another image would compare two kernels under one name.
// Each shard against the earlier ones, which agree with each other already.
void check_same_artifacts(const std::vector<Shard>& shards) {
  for (size_t i = 1; i < shards.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (auto d = artifact_difference(shards[j].manifest, shards[i].manifest)) {
        const std::string da = shards[j].dir.string(), db = shards[i].dir.string();
        throw Error("cannot merge " + db + " with " + da + ": " + d->what + " differs in " + d->field + " (" + da +
                        ": " + d->a + ", " + db + ": " + d->b + ")",
                    "the shards measured different artifacts, so their cells are not one run; compare them side by "
                    "side (smtlab compare " + da + " " + db + "), or run that shard again with the same " + d->what);
      }
}

// The entry of cell `id` in a shard's manifest (null when it has none).
const json& entry_of(const Shard& shard, const std::string& id) {
  static const json none;
  for (const auto& c : shard.manifest["cells"])
    if (c.is_object() && c.value("id", "") == id) return c;
  return none;
}

void copy_dir(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (!ec) {
    if (fs::exists(from)) fs::copy(from, to, fs::copy_options::recursive, ec);
    else fs::create_directories(to, ec);
  }
  if (ec) throw Error("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
}

// Keeps what a shard measured of a cell that the merged run takes from another shard, the way
// `run --resume --retry-failed` keeps an earlier attempt: each of the shard's own earlier attempts,
// then its latest (its cells/<id>/ and its manifest entry as entry.json), each in the next free
// out/attempts/<id>/<n>/, listed in `entry`'s "attempts" with the shard it came from. Returns the
// numbers used.
std::vector<int> keep_other_attempts(const Shard& shard, const std::string& id, const fs::path& out, json& entry) {
  const json& theirs = entry_of(shard, id);
  if (!entry.contains("attempts") || !entry["attempts"].is_array()) entry["attempts"] = json::array();
  json& attempts = entry["attempts"];
  const std::string shard_dir = fs::absolute(shard.dir).string();
  std::vector<int> used;
  auto next = [&] {
    int n = static_cast<int>(attempts.size()) + 1;
    while (fs::exists(out / "attempts" / id / std::to_string(n))) ++n;
    return n;
  };
  auto keep = [&](const fs::path& from, json summary) {
    const int n = next();
    const fs::path rel = fs::path("attempts") / id / std::to_string(n);
    copy_dir(from, out / rel);
    summary["attempt"] = n;
    summary["dir"] = rel.string();
    summary["shard"] = shard_dir;
    attempts.push_back(std::move(summary));
    used.push_back(n);
    return out / rel;
  };
  // Its earlier attempts, in their order (their entry.json comes along).
  std::vector<int> earlier;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(shard.dir / "attempts" / id, ec)) {
    const std::string name = d.path().filename().string();
    if (d.is_directory(ec) && !name.empty() && name.size() < 9 &&
        std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); }))
      earlier.push_back(std::stoi(name));
  }
  std::sort(earlier.begin(), earlier.end());
  for (int m : earlier) {
    json summary = json::object();
    if (theirs.is_object() && theirs.contains("attempts") && theirs["attempts"].is_array())
      for (const auto& a : theirs["attempts"])
        if (a.is_object() && a.value("attempt", json()) == json(m))
          for (const char* key : {"status", "error", "started", "finished"})
            if (a.contains(key)) summary[key] = a[key];
    keep(shard.dir / "attempts" / id / std::to_string(m), std::move(summary));
  }
  // Its latest attempt.
  json summary = json::object();
  for (const char* key : {"status", "error", "started", "finished"})
    if (theirs.is_object() && theirs.contains(key)) summary[key] = theirs[key];
  const fs::path kept = keep(shard.dir / "cells" / id, std::move(summary));
  json own = theirs.is_object() ? theirs : json::object();
  own.erase("attempts");
  write_file_atomic(kept / "entry.json", own.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  return used;
}

// The members of every shard's object `field`; a key two shards have keeps the first's.
json union_of(const std::vector<Shard>& shards, const char* field) {
  json out = json::object();
  for (const auto& s : shards)
    if (s.manifest.contains(field) && s.manifest[field].is_object())
      for (const auto& [key, value] : s.manifest[field].items())
        if (!out.contains(key)) out[key] = value;
  return out;
}

// A directory's shard record (results/shard_record.hpp) and which directory it is.
struct ShardClaim {
  size_t shard = 0;  // index into the merged directories
  ShardRecord record;
};

// nullopt when the manifest records no shard, or one this smtlab cannot read (said in `notes`:
// the directory is then merged as an unsharded run).
std::optional<ShardClaim> shard_claim(const Shard& shard, size_t i, std::vector<std::string>& notes) {
  bool unreadable = false;
  std::optional<ShardRecord> record = read_shard_record(shard.manifest, unreadable);
  if (unreadable)
    notes.push_back(shard.dir.string() + "'s manifest records a shard this smtlab cannot read (its \"shard\"): "
                    "merged as an unsharded run, so a shard of its run that is absent cannot be told");
  if (!record) return std::nullopt;
  return ShardClaim{i, std::move(*record)};
}

// A directory for shard k of n: where shard i's directory is named "<prefix><i>" (results/shard-1),
// "<prefix><k>" beside it; else "shard-<k>-of-<n>" beside the first shard's.
fs::path directory_for(const std::vector<Shard>& shards, const std::vector<ShardClaim>& claims, int k, int n) {
  auto dir_of = [&](const ShardClaim& c) {
    fs::path d = shards[c.shard].dir.lexically_normal();
    return d.has_filename() ? d : d.parent_path();
  };
  for (const auto& c : claims) {
    if (c.record.indices.size() != 1) continue;
    const fs::path d = dir_of(c);
    const std::string name = d.filename().string(), number = std::to_string(c.record.indices[0]);
    const size_t cut = name.size() - std::min(name.size(), number.size());
    if (name.size() > number.size() && name.compare(cut, std::string::npos, number) == 0 &&
        !std::isdigit(static_cast<unsigned char>(name[cut - 1]))) {
      fs::path candidate = d.parent_path() / (name.substr(0, cut) + std::to_string(k));
      if (!fs::exists(candidate)) return candidate;
    }
  }
  return dir_of(claims[0]).parent_path() / ("shard-" + std::to_string(k) + "-of-" + std::to_string(n));
}

// The shards of the directories' split: those no directory holds (with their cells that no
// directory ran, `ran`, and the command that runs them) and those several hold go to `report`.
// Returns the merged manifest's "shard" (the first's, with "indices" the shards it holds), null
// when no directory holds a shard or they split different plans.
json check_shards(const std::vector<Shard>& shards, const std::set<std::string>& ran, MergeReport& report) {
  std::vector<ShardClaim> claims;
  for (size_t i = 0; i < shards.size(); ++i)
    if (auto c = shard_claim(shards[i], i, report.notes)) claims.push_back(std::move(*c));
  if (claims.empty()) return nullptr;
  const ShardClaim& first = claims[0];
  const int n = first.record.count;
  ShardRecord held = first.record;  // the split, with every shard some directory holds
  held.indices.clear();
  std::map<int, std::vector<size_t>> holders;  // shard index -> the directories that hold it
  for (const auto& c : claims) {
    if (!c.record.same_split(first.record)) {
      report.notes.push_back(shards[c.shard].dir.string() + " holds a shard of another split than " +
                             shards[first.shard].dir.string() + " (another N, --cells or --iterations, or a plan " +
                             "whose cells changed): which shards are absent cannot be told");
      return nullptr;
    }
    for (int k : c.record.indices) holders[k].push_back(c.shard);
  }
  for (const auto& [k, dirs] : holders) {
    held.indices.push_back(k);
    if (dirs.size() < 2) continue;
    std::string where;
    for (size_t d : dirs) where += (where.empty() ? "" : " and in ") + shards[d].dir.string();
    report.duplicate_shards.push_back("shard " + shard_name(k, n) + " is in " + where);
  }
  const std::string recipe_file = recorded_recipe_file(shards[first.shard].manifest);
  // (A shard whose cells another directory ran, unsharded, is not absent.)
  for (AbsentShard& absent : absent_shards(held, ran)) {
    std::vector<std::string> argv = {"smtlab", "run", recipe_file};
    if (held.filters.is_array())
      for (const auto& f : held.filters)
        if (f.is_string()) argv.insert(argv.end(), {"--cells", f.get<std::string>()});
    if (held.iterations.is_number_integer() && held.iterations.get<int>() > 0)
      argv.insert(argv.end(), {"--iterations", std::to_string(held.iterations.get<int>())});
    argv.insert(argv.end(), {"--shard", absent.name(), "-o", directory_for(shards, claims, absent.index, n).string()});
    report.missing_shards.push_back({absent.index, n, std::move(absent.cells), shell_quote(argv)});
  }
  json merged = shards[first.shard].manifest.at("shard");
  merged.erase("index");
  merged["indices"] = held.indices;
  return merged;
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
    if (shards[i].manifest.value("smtlab_version", json()) != shards[0].manifest.value("smtlab_version", json()))
      report.notes.push_back(shards[i].dir.string() + " ran another smtlab version than " + shards[0].dir.string());
    if (shards[i].manifest.value("versions", json()) != shards[0].manifest.value("versions", json()))
      report.notes.push_back(shards[i].dir.string() + " ran other QEMU or libvirt versions than " + shards[0].dir.string());
  }
  check_same_artifacts(shards);

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
                           {"host", s.manifest.value("host", json())},
                           {"accel", s.manifest.value("accel", json())},
                           {"smtlab_version", s.manifest.value("smtlab_version", json())},
                           {"versions", s.manifest.value("versions", json())}});
  // Every kernel a shard used (a shard records only the kernels of its cells; where two shards
  // used one, check_same_artifacts made sure it is the same).
  if (json kernels = union_of(shards, "kernels"); !kernels.empty()) merged["kernels"] = std::move(kernels);

  std::set<std::string> ran_ids;  // the cells some directory ran
  for (const auto& id : order) {
    std::vector<size_t> ran;
    for (size_t i = 0; i < shards.size(); ++i)
      for (const auto& c : shards[i].manifest["cells"])
        if (c.is_object() && c.value("id", "") == id && c.value("status", "pending") != "pending") ran.push_back(i);
    json entry = base_entry[id];
    if (!ran.empty()) ran_ids.insert(id);
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
      // What the other shards measured of the cell is kept too, as earlier attempts.
      if (ran.size() > 1) {
        std::string where, others;
        for (size_t i : ran) {
          where += (where.empty() ? "" : " and ") + shards[i].dir.string();
          if (i == pick) continue;
          std::string numbers;
          for (int n : keep_other_attempts(shards[i], id, out, entry))
            numbers += (numbers.empty() ? "" : ", ") + (out / "attempts" / id / std::to_string(n)).string() + "/";
          others += "; " + shards[i].dir.string() + "'s kept in " + numbers;
        }
        report.overlapping.push_back(id + " (in " + where + "; used " + shards[pick].dir.string() + others + ")");
      }
    }
    cells.push_back(std::move(entry));
  }
  merged["cells"] = std::move(cells);
  merged["merged_from"] = std::move(merged_from);
  // Shared boots (share_boot): every shard's groups; a key two shards used keeps the first's.
  if (json groups = union_of(shards, "boot_groups"); !groups.empty()) merged["boot_groups"] = std::move(groups);
  if (json shard = check_shards(shards, ran_ids, report); !shard.is_null()) merged["shard"] = std::move(shard);
  else merged.erase("shard");
  report.cells = order.size();
  write_file_atomic(out / "manifest.json", merged.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  return report;
}

}  // namespace smtlab::results
