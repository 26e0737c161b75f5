#include "run/resume.hpp"

#include <fmt/core.h>

#include "results/artifacts_check.hpp"
#include "results/shard_record.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/utc.hpp"

namespace smtlab::run {

void check_resume_conditions(const nlohmann::json& recorded, const nlohmann::json& now, const std::filesystem::path& dir) {
  auto refuse = [&](const std::string& what) {
    throw Error("cannot resume " + dir.string() + ": " + what +
                    "; its cells would mix measurements of different things in one results directory",
                "finish the run where it started (that host's accelerator, the same kernels and image), or start a "
                "new run in another results directory with -o NEW_DIR");
  };
  const auto accel = [](const nlohmann::json& m) {
    return m.is_object() && m.contains("accel") && m["accel"].is_string() ? m["accel"].get<std::string>()
                                                                          : std::string();
  };
  if (const auto was = accel(recorded), is = accel(now); !was.empty() && !is.empty() && was != is)
    refuse("its guests ran under another accelerator (recorded " + was + ", now " + is + ")");
  // A shard resumes as the shard it is: its manifest holds that shard's cells only.
  if (now.is_object() && now.contains("shard") && recorded.is_object() && recorded.contains("shard") &&
      recorded["shard"].is_object()) {
    // "K/N", or "" for no shard (null, or a record this smtlab cannot read).
    const auto shard = [](const nlohmann::json& s) {
      const auto number = [&](const char* key) {
        return s.is_object() && s.contains(key) && s[key].is_number_integer() ? s[key].get<int>() : 0;
      };
      return number("index") > 0 && number("count") > 0 ? results::shard_name(number("index"), number("count"))
                                                        : std::string();
    };
    const std::string was = shard(recorded["shard"]), is = shard(now["shard"]);
    if (!was.empty() && was != is)
      throw Error("cannot resume " + dir.string() + ": it holds shard " + was + " of its plan, and this run " +
                      (is.empty() ? std::string("is not sharded") : "is shard " + is),
                  "resume with --shard " + was + " (and the recipe, cell filters and iterations that started it)");
  }
  if (const auto d = results::artifact_difference(recorded, now))
    refuse(d->what + " differs in " + d->field + " (recorded " + d->a + ", now " + d->b + ")");
}

CellChoice choose_cells(results::ResultsWriter& writer, const std::vector<std::string>& ids, bool retry_failed,
                        const nlohmann::json* resumed_with) {
  CellChoice choice;
  const auto& dir = writer.dir();
  // Every cell is checked before anything changes: a resume with other cell filters or another
  // recipe is refused with the directory as it was.
  std::vector<std::string> statuses;
  for (const auto& id : ids) {
    try {
      statuses.push_back(writer.cell_status(id));
    } catch (const Error&) {
      throw Error("cell " + id + " is not part of the run in " + dir.string(),
                  "resume with the same recipe and cell filters that started the run");
    }
  }
  if (resumed_with) {
    check_resume_conditions(writer.manifest(), *resumed_with, dir);
    writer.record_resume(utc_now(), *resumed_with);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& id = ids[i];
    const std::string& status = statuses[i];
    if (status == "failed" && retry_failed) {
      const int n = writer.archive_attempt(id);
      note(fmt::format("cell {} failed before: that attempt is kept in {}, the cell runs again", id,
                       (dir / "attempts" / id / std::to_string(n)).string()));
      choice.run.push_back(i);
      continue;
    }
    if (status == "ok" || status == "failed") {
      (status == "ok" ? choice.ok : choice.failed)++;
      continue;
    }
    // Pending, or left "running" by a process that died (kill -9, out of memory, a full disk): what
    // that attempt wrote, flushed line by line, is kept under attempts/ before the cell runs afresh.
    const int n = writer.archive_unfinished(
        id, {{"status", "interrupted"},
             {"error", "the run stopped before this cell finished (smtlab was killed, or stopped by an error such "
                       "as a full disk); --resume kept this attempt"}});
    if (n)
      note(fmt::format("cell {} had not finished: what it wrote is kept in {}, the cell runs again", id,
                       (dir / "attempts" / id / std::to_string(n)).string()));
    choice.run.push_back(i);
  }
  return choice;
}

std::function<std::string(int, const std::string&)> keep_failed_boots(results::ResultsWriter& writer,
                                                                     std::vector<std::string> ids) {
  return [&writer, ids = std::move(ids)](int attempt, const std::string& error) {
    std::string kept;
    for (const auto& id : ids) {
      const int n = writer.archive_retried(
          id, {{"status", "failed"},
               {"error", "boot attempt " + std::to_string(attempt) + " failed before the agent was ready: " + error},
               {"finished", utc_now()}});
      if (n) kept += (kept.empty() ? "kept in " : ", ") + ("attempts/" + id + "/" + std::to_string(n));
    }
    return kept;
  };
}

}  // namespace smtlab::run
