#include "results/writer.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>
#include <utility>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/log.hpp"

namespace smtlab::results {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::set<std::string> kStatuses = {"pending", "running", "ok", "failed"};

void check_manifest_cells(const json& manifest, const fs::path& where) {
  if (!manifest.is_object()) throw Error(where.string() + ": the manifest is not a JSON object");
  if (!manifest.contains("cells") || !manifest["cells"].is_array())
    throw Error(where.string() + ": the manifest has no \"cells\" array");
  std::set<std::string> seen;
  for (const auto& cell : manifest["cells"]) {
    if (!cell.is_object() || !cell.contains("id") || !cell["id"].is_string())
      throw Error(where.string() + ": a cell in the manifest has no string \"id\"");
    std::string id = cell["id"].get<std::string>();
    check_cell_id(id);
    if (!seen.insert(id).second) throw Error(where.string() + ": cell id '" + id + "' appears twice");
  }
}

// The descriptor of DIR/lock, closed when this goes unless release()d.
class LockFd {
 public:
  explicit LockFd(int fd) : fd_(fd) {}
  ~LockFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  LockFd(const LockFd&) = delete;
  LockFd& operator=(const LockFd&) = delete;
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Takes DIR/lock for a writer's life: an exclusive flock, not waited for (a second writer of one
// directory is refused: its records and manifest rewrites would interleave with the first's),
// with this process's pid written in the file for the message of the next one.
int lock_results_dir(const fs::path& dir) {
  const fs::path file = dir / "lock";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot open " + file.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    if (e == EWOULDBLOCK) {
      char buf[24] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      std::string pid;
      for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) pid += buf[i];
      ::close(fd);
      throw Error("results directory " + dir.string() + " is in use by another smtlab" +
                      (pid.empty() ? std::string() : " (pid " + pid + ")"),
                  "one results directory takes one run at a time: wait for that one to end (or stop it), then use "
                  "--resume; or give another directory with -o");
    }
    if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS) {
      note("cannot lock " + file.string() + " (" + std::strerror(e) +
           "): nothing keeps another smtlab from writing this results directory at the same time");
      return fd;
    }
    ::close(fd);
    throw Error("cannot lock " + file.string() + ": " + std::strerror(e));
  }
  // Only said in the next one's message: a file that cannot be written (a full disk) still locks.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    const ssize_t ignored = ::pwrite(fd, pid.data(), pid.size(), 0);
    (void)ignored;
  }
  return fd;
}

}  // namespace

ResultsWriter::ResultsWriter(fs::path dir, json manifest, int lock_fd)
    : dir_(std::move(dir)), manifest_(std::move(manifest)), mutex_(std::make_unique<std::mutex>()), lock_fd_(lock_fd) {}
ResultsWriter::ResultsWriter(ResultsWriter&& other) noexcept
    : dir_(std::move(other.dir_)),
      manifest_(std::move(other.manifest_)),
      mutex_(std::move(other.mutex_)),
      lock_fd_(std::exchange(other.lock_fd_, -1)) {}
ResultsWriter& ResultsWriter::operator=(ResultsWriter&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    dir_ = std::move(other.dir_);
    manifest_ = std::move(other.manifest_);
    mutex_ = std::move(other.mutex_);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}
ResultsWriter::~ResultsWriter() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

namespace {

Error holds_a_run(const fs::path& dir) {
  return Error("results directory " + dir.string() + " already holds a run",
               "choose another directory with -o, or finish that run with --resume");
}

}  // namespace

void ResultsWriter::check_new_dir(const fs::path& dir) {
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (!fs::exists(st)) return;
  if (!fs::is_directory(st))
    throw Error("results directory " + dir.string() + " exists and is not a directory", "give another directory with -o");
  if (fs::exists(dir / "manifest.json")) throw holds_a_run(dir);
  std::vector<std::string> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name != "lock") found.push_back(name + (it->is_directory(type_ec) ? "/" : ""));
  }
  if (ec) throw Error("cannot list results directory " + dir.string() + ": " + ec.message());
  if (found.empty()) return;
  std::sort(found.begin(), found.end());
  std::string listed;
  for (size_t i = 0; i < found.size() && i < 4; ++i) listed += (i ? ", " : "") + found[i];
  if (found.size() > 4) listed += ", ... (" + std::to_string(found.size()) + " entries)";
  throw Error("results directory " + dir.string() + " is not empty and holds no run (no manifest.json; it has " + listed +
                  "): a new run would write among those files",
              "give a new or empty directory with -o; --resume finishes a run only in a directory that has its "
              "manifest.json");
}

ResultsWriter ResultsWriter::create(const fs::path& dir, json manifest) {
  check_manifest_cells(manifest, dir / "manifest.json");
  const fs::path file = dir / "manifest.json";
  check_new_dir(dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create results directory " + dir.string() + ": " + ec.message());
  LockFd lock(lock_results_dir(dir));
  check_new_dir(dir);  // again, now that no other writer can be creating it
  manifest["schema"] = kSchemaVersion;
  for (auto& cell : manifest["cells"])
    if (!cell.contains("status")) cell["status"] = "pending";
  // Published only if there is none yet (link(2) fails on an existing name, where rename would
  // replace it): a smtlab without the lock creating the same run cannot be overwritten.
  const fs::path draft = dir / ("manifest.json.new." + std::to_string(::getpid()));
  write_file_atomic(draft, manifest.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  if (::link(draft.c_str(), file.c_str()) == 0) {
    fs::remove(draft, ec);
  } else if (const int e = errno; e == EEXIST) {
    fs::remove(draft, ec);
    throw holds_a_run(dir);
  } else if ((e == EPERM || e == EOPNOTSUPP || e == ENOSYS) && !fs::exists(file)) {
    fs::rename(draft, file, ec);  // a filesystem without hard links: the lock alone keeps it one run
    if (ec) throw Error("cannot publish " + file.string() + ": " + ec.message());
  } else {
    fs::remove(draft, ec);
    if (fs::exists(file)) throw holds_a_run(dir);
    throw Error("cannot publish " + file.string() + ": " + std::strerror(e));
  }
  fs::create_directories(dir / "cells", ec);
  if (ec) throw Error("cannot create " + (dir / "cells").string() + ": " + ec.message());
  return ResultsWriter(dir, std::move(manifest), lock.release());
}

ResultsWriter ResultsWriter::open(const fs::path& dir) {
  fs::path file = dir / "manifest.json";
  // The lock first: the manifest is read once no other writer can change it. A directory
  // without a manifest gets no lock file (read_file below says what is missing).
  LockFd lock(fs::exists(file) ? lock_results_dir(dir) : -1);
  json manifest;
  try {
    manifest = json::parse(read_file(file, 64 << 20));
  } catch (const json::exception& e) {
    throw Error(file.string() + " is not valid JSON: " + e.what(),
                "the run cannot be resumed; start a new one in another directory");
  }
  check_manifest_cells(manifest, file);
  if (!manifest.contains("schema") || !manifest["schema"].is_number_integer())
    throw Error(file.string() + " has no schema version");
  if (manifest["schema"].get<int>() > kSchemaVersion)
    throw Error(file.string() + " uses results schema " + manifest["schema"].dump() +
                    ", newer than this smtlab understands (" + std::to_string(kSchemaVersion) + ")",
                "use a newer smtlab");
  fs::create_directories(dir / "cells");
  return ResultsWriter(dir, std::move(manifest), lock.release());
}

json ResultsWriter::manifest() const {
  std::lock_guard lock(*mutex_);
  return manifest_;
}

json& ResultsWriter::cell_entry(const std::string& id) {
  for (auto& cell : manifest_["cells"])
    if (cell["id"] == id) return cell;
  throw Error("unknown cell '" + id + "' in results " + dir_.string());
}

const json& ResultsWriter::cell_entry(const std::string& id) const {
  for (const auto& cell : manifest_["cells"])
    if (cell["id"] == id) return cell;
  throw Error("unknown cell '" + id + "' in results " + dir_.string());
}

std::string ResultsWriter::cell_status(const std::string& id) const {
  std::lock_guard lock(*mutex_);
  const json& cell = cell_entry(id);
  return cell.value("status", "pending");
}

// Strings in the manifest can come from a guest (console lines, topology): invalid UTF-8 is
// replaced (U+FFFD), never an exception that would stop the run with its cell still "running".
void ResultsWriter::save() {
  write_file_atomic(dir_ / "manifest.json", manifest_.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

void ResultsWriter::set_cell_status(const std::string& id, const std::string& status, const json& extra) {
  if (!kStatuses.count(status))
    throw Error("invalid cell status '" + status + "'", "use pending, running, ok or failed");
  if (!extra.is_null() && !extra.is_object()) throw Error("cell fields for '" + id + "' must be a JSON object");
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it)
      if (it.key() != "id" && !kAttemptFields.count(it.key()))
        throw Error("cell field \"" + it.key() + "\" for '" + id + "' is not an attempt's field",
                    "add it to results::kAttemptFields, so that a cell that runs again starts without it");
  std::lock_guard lock(*mutex_);
  json& cell = cell_entry(id);
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it)
      if (it.key() != "id") cell[it.key()] = it.value();
  cell["status"] = status;
  save();
}

void ResultsWriter::update_manifest(const json& fields) {
  if (!fields.is_object()) throw Error("manifest fields must be a JSON object");
  std::lock_guard lock(*mutex_);
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it.key() == "cells" || it.key() == "schema")
      throw Error("update_manifest cannot replace \"" + it.key() + "\"");
    manifest_[it.key()] = it.value();
  }
  save();
}

void ResultsWriter::record_resume(const std::string& at, const json& with) {
  std::lock_guard lock(*mutex_);
  json list = json::array();
  if (auto it = manifest_.find("resumed"); it != manifest_.end() && it->is_array()) {
    list = *it;
  } else if (it != manifest_.end()) {
    json earlier = {{"at", *it}};
    if (manifest_.contains("resumed_with")) earlier["with"] = manifest_["resumed_with"];
    list.push_back(std::move(earlier));
  }
  list.push_back({{"at", at}, {"with", with}});
  manifest_["resumed"] = std::move(list);
  manifest_.erase("resumed_with");
  save();
}

void ResultsWriter::record_interrupt(const std::string& at, const json& what) {
  if (!what.is_object()) throw Error("what is recorded of an interrupt must be a JSON object");
  std::lock_guard lock(*mutex_);
  json list = json::array();
  if (auto it = manifest_.find("interrupted"); it != manifest_.end() && it->is_array())
    list = *it;
  else if (it != manifest_.end())
    list.push_back(it->is_object() ? *it : json{{"at", *it}});
  json entry = {{"at", at}};
  for (auto it = what.begin(); it != what.end(); ++it)
    if (it.key() != "at") entry[it.key()] = it.value();
  list.push_back(std::move(entry));
  manifest_["interrupted"] = std::move(list);
  save();
}

void ResultsWriter::set_manifest_entry(const std::string& field, const std::string& key, const json& value) {
  if (field == "cells" || field == "schema") throw Error("set_manifest_entry cannot change \"" + field + "\"");
  std::lock_guard lock(*mutex_);
  json& object = manifest_[field];
  if (!object.is_object()) object = json::object();
  object[key] = value;
  save();
}

fs::path ResultsWriter::cell_dir(const std::string& id) const {
  check_cell_id(id);
  fs::path d = dir_ / "cells" / id;
  std::error_code ec;
  fs::create_directories(d, ec);
  if (ec) throw Error("cannot create " + d.string() + ": " + ec.message());
  return d;
}

fs::path ResultsWriter::console_log(const std::string& id, int vm) const {
  return cell_dir(id) / ("console-vm" + std::to_string(vm) + ".log");
}

namespace {

std::string record_line(const std::string& id, const json& record) {
  if (!record.is_object()) throw Error("a record for cell '" + id + "' must be a JSON object");
  return record.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

void ResultsWriter::append(const std::string& id, const char* file, const json& record) {
  std::string line = record_line(id, record);
  std::lock_guard lock(*mutex_);
  cell_entry(id);  // unknown ids are an error, not a new directory
  append_line_durable(cell_dir(id) / file, line);
}

void RecordBatch::add(const std::string& id, const char* file, const json& record) {
  lines_[{id, file}] += record_line(id, record) + "\n";
}
void RecordBatch::sample(const std::string& id, const json& record) { add(id, "samples.jsonl", record); }
void RecordBatch::monitor(const std::string& id, const json& record) { add(id, "monitor.jsonl", record); }
void RecordBatch::event(const std::string& id, const json& record) { add(id, "events.jsonl", record); }

void ResultsWriter::append(RecordBatch& batch) {
  std::lock_guard lock(*mutex_);
  for (const auto& [key, lines] : batch.lines_) cell_entry(key.first);  // unknown ids: nothing written
  for (const auto& [key, lines] : batch.lines_) append_lines_durable(cell_dir(key.first) / key.second, lines);
  batch.lines_.clear();
}

void ResultsWriter::append_sample(const std::string& id, const json& record) { append(id, "samples.jsonl", record); }
void ResultsWriter::append_monitor(const std::string& id, const json& record) { append(id, "monitor.jsonl", record); }
void ResultsWriter::append_event(const std::string& id, const json& record) { append(id, "events.jsonl", record); }

int ResultsWriter::move_attempt_locked(const std::string& id, const json& ending) {
  if (!ending.is_object()) throw Error("what ended the attempt of cell '" + id + "' must be a JSON object");
  json& cell = cell_entry(id);
  if (!cell.contains("attempts") || !cell["attempts"].is_array()) cell["attempts"] = json::array();
  // The next free number: a directory the manifest does not list (a crash between the move and
  // the manifest's rewrite) is kept, not overwritten.
  int n = static_cast<int>(cell["attempts"].size()) + 1;
  while (fs::exists(dir_ / "attempts" / id / std::to_string(n))) ++n;
  const fs::path rel = fs::path("attempts") / id / std::to_string(n);
  const fs::path to = dir_ / rel, from = dir_ / "cells" / id;
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (!ec && fs::exists(from)) fs::rename(from, to, ec);
  else if (!ec) fs::create_directories(to, ec);
  if (ec) throw Error("cannot move " + from.string() + " to " + to.string() + ": " + ec.message());
  json entry = cell;
  entry.erase("attempts");
  for (auto it = ending.begin(); it != ending.end(); ++it)
    if (it.key() != "id" && it.key() != "attempts") entry[it.key()] = it.value();
  write_file_atomic(to / "entry.json", entry.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  json summary = {{"attempt", n}, {"dir", rel.string()}};
  for (const char* key : {"status", "error", "started", "finished"})
    if (entry.contains(key)) summary[key] = entry[key];
  cell["attempts"].push_back(std::move(summary));
  return n;
}

int ResultsWriter::archive_attempt(const std::string& id, const json& ending) {
  std::lock_guard lock(*mutex_);
  const int n = move_attempt_locked(id, ending);
  reset_cell_locked(id);  // "attempts" is not an attempt's field: it stays
  save();
  return n;
}

int ResultsWriter::archive_unfinished(const std::string& id, const json& ending) {
  std::lock_guard lock(*mutex_);
  const json& cell = cell_entry(id);
  const fs::path d = dir_ / "cells" / id;
  std::error_code ec;
  const bool has_files = fs::exists(d, ec) && !fs::is_empty(d, ec);
  if (ec) throw Error("cannot read " + d.string() + ": " + ec.message());
  if (!has_files && cell.value("status", "pending") == "pending") return 0;
  const int n = has_files ? move_attempt_locked(id, ending) : 0;
  reset_cell_locked(id);
  save();
  return n;
}

int ResultsWriter::archive_retried(const std::string& id, const json& ending) {
  std::lock_guard lock(*mutex_);
  cell_entry(id);
  const fs::path d = dir_ / "cells" / id;
  std::error_code ec;
  const bool has_files = fs::exists(d, ec) && !fs::is_empty(d, ec);
  if (ec) throw Error("cannot read " + d.string() + ": " + ec.message());
  if (!has_files) return 0;
  const int n = move_attempt_locked(id, ending);
  save();
  return n;
}

void ResultsWriter::reset_cell_locked(const std::string& id) {
  json& cell = cell_entry(id);
  // Never a recursive removal: what an attempt wrote is moved to attempts/ first (an empty
  // directory, made by cell_dir, is all that may go here).
  fs::path d = dir_ / "cells" / id;
  std::error_code ec;
  if (fs::exists(d, ec) && !fs::remove(d, ec))
    throw Error("cannot clear " + d.string() + (ec ? ": " + ec.message() : std::string()),
                "move its files aside, then run again with --resume");
  json fresh = json::object();
  for (auto it = cell.begin(); it != cell.end(); ++it)
    if (!kAttemptFields.count(it.key())) fresh[it.key()] = it.value();  // the plan's fields and "attempts"
  fresh["status"] = "pending";
  cell = std::move(fresh);
}

}  // namespace smtlab::results
