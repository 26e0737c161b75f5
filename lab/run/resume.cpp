#include "run/resume.hpp"

#include <fmt/core.h>


#include "util/error.hpp"
#include "util/log.hpp"
#include "util/utc.hpp"

namespace smtlab::run {
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
  if (resumed_with) writer.record_resume(utc_now(), *resumed_with);
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
