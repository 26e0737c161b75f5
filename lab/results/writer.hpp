#pragma once
// Writing a results directory: manifest.json (rewritten atomically on every change) and per-cell
// append-only JSON-lines files (each line flushed to disk before the call returns).
// Thread-safe: one writer may be shared by the threads that read several VMs' channels.
// One process at a time: a writer holds an exclusive lock (flock) on DIR/lock for its whole life,
// and a second writer of the same directory, in this or another process, is refused.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "results/cell_id.hpp"

namespace smtlab::results {

// Records gathered for one ResultsWriter::append (a guest's records of one poll of its channel),
// in order per file.
class RecordBatch {
 public:
  // As ResultsWriter::append_sample, _monitor and _event (a record must be a JSON object).
  void sample(const std::string& id, const nlohmann::json& record);
  void monitor(const std::string& id, const nlohmann::json& record);
  void event(const std::string& id, const nlohmann::json& record);
  bool empty() const { return lines_.empty(); }

 private:
  friend class ResultsWriter;
  void add(const std::string& id, const char* file, const nlohmann::json& record);
  std::map<std::pair<std::string, std::string>, std::string> lines_;  // (cell, file) -> its lines
};

// The fields an attempt of a cell adds to its manifest entry (set_cell_status takes no other):
// archive_attempt moves them with the attempt, so that the next one starts from the plan's fields
// alone. A new per-attempt field goes here, or set_cell_status refuses it.
inline const std::set<std::string> kAttemptFields = {
    "status",     "error",  "guest_topology", "started", "finished",   "wall_s",         "bench_s",  "ready_s",
    "notes",      "console_tail", "disturbances", "host_cpu", "ran_alongside", "kernel_cmdline", "job_s",
    "job_start_s", "boot_group"};

class ResultsWriter {
 public:
  // Creates `dir` (and parents), takes its lock and writes manifest.json. `manifest` must be an
  // object with a "cells" array whose entries have a valid unique "id"; "schema" is set to
  // kSchemaVersion and each cell gets "status":"pending" unless it has one. Throws what
  // check_new_dir throws (checked again under the lock), also when another process creates a
  // manifest at the same time, and when another writer holds the directory (naming its pid).
  static ResultsWriter create(const std::filesystem::path& dir, nlohmann::json manifest);
  // Throws unless `dir` can take a new run: it does not exist, or it is an empty directory (a
  // left-over lock file aside). One with a manifest.json holds a run (finish it with --resume);
  // one with anything else (stale cells/ or attempts/ a new run would append to) is refused too.
  static void check_new_dir(const std::filesystem::path& dir);
  // Opens an existing results directory (for --resume) and takes its lock. Throws when there is
  // no readable manifest, when its schema is newer than this smtlab understands, or when another
  // writer holds the directory (a run still going: the error names its pid).
  static ResultsWriter open(const std::filesystem::path& dir);

  ResultsWriter(ResultsWriter&&) noexcept;
  ResultsWriter& operator=(ResultsWriter&&) noexcept;
  ~ResultsWriter();

  const std::filesystem::path& dir() const { return dir_; }
  // A copy of the current manifest.
  nlohmann::json manifest() const;
  // Status of a cell ("pending", "running", "ok", "failed"); throws for an unknown id.
  std::string cell_status(const std::string& id) const;

  // Sets the cell's "status" and merges `extra` (an object of kAttemptFields: "error", "started",
  // "finished", "wall_s", "bench_s", "guest_topology", ...; "id" is ignored) into its manifest
  // entry; rewrites manifest.json. Throws for any other field.
  void set_cell_status(const std::string& id, const std::string& status,
                       const nlohmann::json& extra = nlohmann::json::object());
  // A resumed run: appends {"at": at, "with": with} (what the resuming smtlab recorded of itself:
  // versions, host, kernels, image) to the manifest's "resumed" list. A manifest from before the
  // list (one "resumed" time and one "resumed_with", overwritten by each resume) gets that
  // resume as the list's first entry.
  void record_resume(const std::string& at, const nlohmann::json& with);
  // An interrupted run: appends {"at": at, ...what} (an object: "signal", "cells") to the
  // manifest's "interrupted" list. A manifest from before the list (one "interrupted" time,
  // overwritten by each interrupt) gets that interrupt as the list's first entry ({"at": time}).
  void record_interrupt(const std::string& at, const nlohmann::json& what = nlohmann::json::object());
  // Merges top-level fields (e.g. "finished", "versions") into the manifest; rewrites it.
  void update_manifest(const nlohmann::json& fields);
  // Sets manifest[field][key] = value in one step (field: an object, made when missing), so that
  // writers of different keys (boots running at once) do not overwrite each other.
  void set_manifest_entry(const std::string& field, const std::string& key, const nlohmann::json& value);

  // Appends one record (a JSON object; should carry "vm") to cells/<id>/{samples,monitor,events}.jsonl.
  void append_sample(const std::string& id, const nlohmann::json& record);
  void append_monitor(const std::string& id, const nlohmann::json& record);
  void append_event(const std::string& id, const nlohmann::json& record);
  // Appends a batch's records, each file it touches with one write and one fdatasync (on disk when
  // this returns, as for one record); empties the batch. Throws for an unknown cell id, writing
  // nothing of the batch.
  void append(RecordBatch& batch);

  // cells/<id>/ (created on first use).
  std::filesystem::path cell_dir(const std::string& id) const;
  // cells/<id>/console-vm<k>.log
  std::filesystem::path console_log(const std::string& id, int vm) const;
  // Keeps an attempt of the cell before it runs again: moves cells/<id>/ to attempts/<id>/<n>/
  // (n = 1, 2, ...: the first number not taken), writes the attempt's manifest entry there as
  // entry.json, appends {"attempt": n, "status", "error", "started", "finished", "dir"} to the
  // cell's "attempts", then clears the attempt's fields (kAttemptFields: "attempts" stays) from
  // the cell's entry and sets it back to "pending". `ending` (an object) is merged
  // into what is recorded of the attempt, not into the cell: an attempt that ended without a
  // status of its own says so ({"status": "interrupted", "error": ...}). Used by
  // --resume --retry-failed (a failed cell), the rerun of a stalled cell and a boot retried.
  // Returns n.
  int archive_attempt(const std::string& id, const nlohmann::json& ending = nlohmann::json::object());
  // Before an unfinished cell runs again (interrupted, or left "running" by a process that died):
  // when cells/<id>/ holds anything, archive_attempt(id, ending) keeps it (nothing measured is
  // deleted) and returns n; a cell that wrote nothing is only set back to "pending" (0; a
  // "pending" cell without files is left as it is).
  int archive_unfinished(const std::string& id, const nlohmann::json& ending);
  // A cell's boot that is booted again at once (SessionConfig::boot_retries): when cells/<id>/
  // holds anything, keeps it as archive_attempt does (recorded with `ending`), but the cell's
  // entry stays as it is (still "running", its "attempts" one longer), so the next boot writes
  // clean files. Returns n, or 0 when there was nothing to keep.
  int archive_retried(const std::string& id, const nlohmann::json& ending);

 private:
  // Clears the attempt's fields (see archive_attempt) and sets the cell "pending"; its files must
  // have been moved away (an empty cells/<id>/ is removed, one with files is an error).
  void reset_cell_locked(const std::string& id);
  int move_attempt_locked(const std::string& id, const nlohmann::json& ending);
  ResultsWriter(std::filesystem::path dir, nlohmann::json manifest, int lock_fd);
  nlohmann::json& cell_entry(const std::string& id);
  const nlohmann::json& cell_entry(const std::string& id) const;
  void save();
  void append(const std::string& id, const char* file, const nlohmann::json& record);

  std::filesystem::path dir_;
  nlohmann::json manifest_;
  std::unique_ptr<std::mutex> mutex_;
  int lock_fd_ = -1;  // DIR/lock, flock()ed; closed (unlocked) with the writer
};

}  // namespace smtlab::results
