#include "run/resume.hpp"

#include <fmt/core.h>

#include "util/error.hpp"
#include "util/log.hpp"

namespace smtlab::run {

CellChoice choose_cells(results::ResultsWriter& writer, const std::vector<std::string>& ids, bool retry_failed) {
  CellChoice choice;
  const auto& dir = writer.dir();
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& id = ids[i];
    std::string status;
    try {
      status = writer.cell_status(id);
    } catch (const Error&) {
      throw Error("cell " + id + " is not part of the run in " + dir.string(),
                  "resume with the same recipe and cell filters that started the run");
    }
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

}  // namespace smtlab::run
