#include "cache/cache.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <optional>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/paths.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace smtlab::cache {
namespace {

constexpr std::uint64_t kCheapHashBytes = 1 << 20;
constexpr const char* kEntryFile = "entry.json";

// An exclusive flock(2) on a per-key lock file, released on destruction (or process death).
class KeyLock {
 public:
  KeyLock(const fs::path& file, bool wait) {
    fs::create_directories(file.parent_path());
    fd_ = ::open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw Error(fmt::format("cannot open cache lock {}: {}", file.string(), std::strerror(errno)),
                  "check the permissions of the cache directory (SMTLAB_CACHE)");
    }
    int rc;
    do rc = ::flock(fd_, wait ? LOCK_EX : (LOCK_EX | LOCK_NB));
    while (rc != 0 && errno == EINTR);
    locked_ = rc == 0;
    if (!locked_ && (wait || errno != EWOULDBLOCK)) {
      int e = errno;
      ::close(fd_);
      throw Error(fmt::format("cannot lock {}: {}", file.string(), std::strerror(e)));
    }
  }
  ~KeyLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;
  bool locked() const { return locked_; }

 private:
  int fd_ = -1;
  bool locked_ = false;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double mtime_s(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return 0;
  return static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec / 1e9;
}

// Why the entry in `dir` is not intact, or "" when it is.
std::string damage(const fs::path& dir, const std::string& kind, const std::string& key,
                   Verify verify, json* out_meta) {
  json meta;
  try {
    meta = json::parse(read_file(dir / kEntryFile, 64 << 20));
  } catch (const std::exception& e) {
    return fmt::format("unreadable {}: {}", kEntryFile, e.what());
  }
  try {
    if (meta.at("kind").get<std::string>() != kind || meta.at("key").get<std::string>() != key) {
      return "entry.json names another entry";
    }
    for (const auto& f : meta.at("files")) {
      const std::string rel = f.at("path").get<std::string>();
      if (rel.empty() || rel.front() == '/' || rel.find("..") != std::string::npos) {
        return "bad path in entry.json: " + rel;
      }
      const fs::path p = dir / rel;
      struct stat st {};
      if (::lstat(p.c_str(), &st) != 0) return rel + " is missing";
      if (f.contains("link")) {
        std::error_code ec;
        if (!S_ISLNK(st.st_mode) || fs::read_symlink(p, ec).string() != f["link"].get<std::string>()) {
          return rel + " is not the recorded symlink";
        }
        continue;
      }
      if (!S_ISREG(st.st_mode)) return rel + " is not a regular file";
      const auto size = f.at("size").get<std::uint64_t>();
      if (static_cast<std::uint64_t>(st.st_size) != size) {
        return fmt::format("{} has {} bytes, {} recorded", rel, st.st_size, size);
      }
      if (verify == Verify::full || size <= kCheapHashBytes) {
        if (sha256_file(p) != f.at("sha256").get<std::string>()) return rel + " has another sha256";
      }
    }
  } catch (const std::exception& e) {
    return fmt::format("malformed {}: {}", kEntryFile, e.what());
  }
  if (out_meta) *out_meta = std::move(meta);
  return {};
}

// Lists the files (and symlinks) under dir, sorted, hashing each.
json describe_files(const fs::path& dir, std::uint64_t* total) {
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const auto rel = it->path().lexically_relative(dir);
    if (rel == kEntryFile) continue;
    if (it->is_symlink() || it->is_regular_file()) paths.push_back(rel);
    else if (!it->is_directory()) {
      throw Error("cache: build left a special file (not a file, symlink or directory): " +
                  it->path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  json files = json::array();
  *total = 0;
  for (const auto& rel : paths) {
    const fs::path p = dir / rel;
    if (fs::is_symlink(p)) {
      files.push_back({{"path", rel.string()}, {"link", fs::read_symlink(p).string()}});
      continue;
    }
    const auto size = fs::file_size(p);
    *total += size;
    files.push_back({{"path", rel.string()}, {"size", size}, {"sha256", sha256_file(p)}});
  }
  return files;
}

// Entry::sha256 from entry.json's "files" (symlinks have none).
std::map<std::string, std::string> recorded_sha256(const json& files) {
  std::map<std::string, std::string> out;
  if (!files.is_array()) return out;
  for (const auto& f : files)
    if (f.is_object() && f.contains("path") && f["path"].is_string() && f.contains("sha256") && f["sha256"].is_string())
      out.emplace(f["path"].get<std::string>(), f["sha256"].get<std::string>());
  return out;
}

// Directories under the root that are not entry kinds, and what they hold.
const std::vector<std::pair<std::string, std::string>>& reserved_areas() {
  static const std::vector<std::pair<std::string, std::string>> areas = {
      {"debs", "downloaded Debian packages, reused by kernel and image builds"},
      {"boot", "`smtlab boot` consoles and streams (kept ones: --keep or a failed boot)"},
      {"vm-test", "kernels of the VM tests"},
      {"work", "scratch space of runs and kernel builds in progress"},
      {"logs", "kernel build logs"},
      {"tmp", "entries being built"},
      {"locks", "one lock file per key"},
  };
  return areas;
}

bool is_reserved(const std::string& name) {
  const auto& a = reserved_areas();
  return std::any_of(a.begin(), a.end(), [&](const auto& r) { return r.first == name; });
}

// The pid in a process directory's name "<anything>.<pid>" (the last dot); 0 when there is none.
int pid_in_name(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size()) return 0;
  const std::string digits = name.substr(dot + 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return 0;
  return std::atoi(digits.c_str());
}

bool process_gone(int pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

// Whether gc removes the directory `name` (last changed `age_h` hours ago) of the area `area`.
//   tmp:  <kind>-<key16>.<pid>.<n>   a build: its process is gone, or older than stale_tmp_hours
//   work: <key16>.<pid>, run.<pid>   likewise
//   boot: <cell>.<pid>               `smtlab boot` running: once its process is gone
//         <cell>-<pid>               kept for the user: like an entry, after --unused-days
bool is_stale(const std::string& area, const std::string& name, double age_h, const GcOptions& options) {
  if (area == "boot") {
    const int pid = pid_in_name(name);
    return pid > 0 ? process_gone(pid) : options.unused_days && age_h / 24.0 > *options.unused_days;
  }
  if (age_h > options.stale_tmp_hours || name.rfind("trash-", 0) == 0) return true;
  const auto dot = name.find('.');
  return dot != std::string::npos && process_gone(std::atoi(name.c_str() + dot + 1));
}

// Bytes of the regular files under `dir`, and of those the ones with other hard links.
std::pair<std::uint64_t, std::uint64_t> tree_size(const fs::path& dir) {
  std::uint64_t total = 0, linked = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (!it->is_regular_file(fec) || it->is_symlink(fec)) continue;
    const auto size = it->file_size(fec);
    total += size;
    if (it->hard_link_count(fec) > 1) linked += size;
  }
  return {total, linked};
}

void touch(const fs::path& p) { ::utimensat(AT_FDCWD, p.c_str(), nullptr, 0); }

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.{}", ::getpid(), counter++);
}

// Moves dir aside (atomically unpublishing it), then deletes it.
void discard(const fs::path& root, const fs::path& dir) {
  const fs::path trash = root / "tmp" / ("trash-" + unique_suffix());
  fs::create_directories(trash.parent_path());
  std::error_code ec;
  fs::rename(dir, trash, ec);
  fs::remove_all(ec ? dir : trash, ec);
}

}  // namespace

void check_key_part(const std::string& what, const std::string& value) {
  if (what == "kind" && is_reserved(value)) throw Error("internal: reserved cache kind '" + value + "'");
  const bool ok = !value.empty() && value.size() <= 128 && value != "." && value != ".." &&
                  value.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") == std::string::npos;
  if (!ok) throw Error(fmt::format("internal: invalid cache {} '{}'", what, value));
}

Cache::Cache(fs::path root) : root_(std::move(root)) { fs::create_directories(root_); }
Cache::Cache() : Cache(cache_dir()) {}

std::optional<Entry> Cache::lookup(const std::string& kind, const std::string& key, Verify verify) {
  return lookup_impl(kind, key, verify, false);
}

std::optional<Entry> Cache::lookup_impl(const std::string& kind, const std::string& key, Verify verify,
                                        bool locked) {
  check_key_part("kind", kind);
  check_key_part("key", key);
  const fs::path dir = root_ / kind / key;
  if (!fs::exists(dir)) return std::nullopt;
  json meta;
  std::string why = damage(dir, kind, key, verify, &meta);
  if (!why.empty()) {
    // Re-check under the lock: a concurrent builder may be publishing it right now.
    std::optional<KeyLock> lock;
    if (!locked) lock.emplace(root_ / "locks" / (kind + "-" + key + ".lock"), true);
    why = damage(dir, kind, key, verify, &meta);
    if (!why.empty()) {
      if (fs::exists(dir)) {
        note(fmt::format("cache: {}/{} is damaged ({}); removing it, it will be rebuilt", kind,
                         key.substr(0, 16), why));
        discard(root_, dir);
      }
      return std::nullopt;
    }
  }
  touch(dir / kEntryFile);
  Entry e;
  e.dir = dir;
  e.hit = true;
  e.kind = kind;
  e.key = key;
  e.name = meta.value("name", "");
  e.size = meta.value("size", std::uint64_t{0});
  e.sha256 = recorded_sha256(meta.value("files", json()));
  return e;
}

Entry Cache::get_or_build(const std::string& kind, const std::string& key, const std::string& name,
                          const std::function<void(const fs::path&)>& build, Verify verify) {
  if (auto e = lookup(kind, key, verify)) return *e;
  KeyLock lock(root_ / "locks" / (kind + "-" + key + ".lock"), true);
  if (auto e = lookup_impl(kind, key, verify, true)) return *e;  // another process built it while we waited

  const fs::path tmp = root_ / "tmp" / fmt::format("{}-{}.{}", kind, key.substr(0, 16), unique_suffix());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    build(tmp);
    std::uint64_t total = 0;
    json meta = {{"schema", 1},       {"kind", kind},  {"key", key},  {"name", name},
                 {"created", now_s()}, {"size", 0},    {"files", describe_files(tmp, &total)}};
    meta["size"] = total;
    write_file_atomic(tmp / kEntryFile, meta.dump(1) + "\n");
    const fs::path dir = root_ / kind / key;
    fs::create_directories(dir.parent_path());
    if (fs::exists(dir)) discard(root_, dir);  // damaged leftovers (lookup under our lock said so)
    fs::rename(tmp, dir);
    Entry e;
    e.dir = dir;
    e.hit = false;
    e.kind = kind;
    e.key = key;
    e.name = name;
    e.size = total;
    e.sha256 = recorded_sha256(meta["files"]);
    return e;
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

bool Cache::remove(const std::string& kind, const std::string& key) {
  check_key_part("kind", kind);
  check_key_part("key", key);
  KeyLock lock(root_ / "locks" / (kind + "-" + key + ".lock"), true);
  const fs::path dir = root_ / kind / key;
  if (!fs::exists(dir)) return false;
  discard(root_, dir);
  return true;
}

std::vector<EntryInfo> Cache::list() const {
  std::vector<EntryInfo> out;
  const double now = now_s();
  std::error_code ec;
  for (const auto& kdir : fs::directory_iterator(root_, ec)) {
    const std::string kind = kdir.path().filename();
    if (!kdir.is_directory() || is_reserved(kind)) continue;
    for (const auto& edir : fs::directory_iterator(kdir.path(), ec)) {
      if (!edir.is_directory()) continue;
      EntryInfo info;
      info.kind = kind;
      info.key = edir.path().filename();
      info.dir = edir.path();
      const fs::path ej = edir.path() / kEntryFile;
      try {
        const json meta = json::parse(read_file(ej, 64 << 20));
        info.name = meta.value("name", "");
        info.size = meta.value("size", std::uint64_t{0});
        info.age_days = (now - meta.value("created", now)) / 86400.0;
      } catch (const std::exception&) {
        info.name = "(damaged)";
      }
      const double used = mtime_s(ej);
      info.unused_days = used > 0 ? (now - used) / 86400.0 : info.age_days;
      out.push_back(std::move(info));
    }
  }
  std::sort(out.begin(), out.end(), [](const EntryInfo& a, const EntryInfo& b) {
    return std::tie(a.kind, a.name, a.key) < std::tie(b.kind, b.name, b.key);
  });
  return out;
}

GcResult Cache::gc(const GcOptions& options) {
  GcResult result;
  auto entries = list();
  // Least recently used first.
  std::sort(entries.begin(), entries.end(),
            [](const EntryInfo& a, const EntryInfo& b) { return a.unused_days > b.unused_days; });
  std::uint64_t total = 0;
  for (const auto& e : entries) total += e.size;
  for (const auto& e : entries) {
    const bool too_old = options.unused_days && e.unused_days > *options.unused_days;
    const bool over = options.max_bytes && total > *options.max_bytes;
    const bool damaged = e.name == "(damaged)";
    if (!too_old && !over && !damaged) continue;
    KeyLock lock(root_ / "locks" / (e.kind + "-" + e.key + ".lock"), false);
    if (!lock.locked()) continue;  // in use right now
    if (!options.dry_run) discard(root_, e.dir);
    result.removed.push_back(e);
    result.freed_bytes += e.size;
    total -= e.size;
  }
  result.kept_bytes = total;
  // tmp, work and boot directories of processes that are gone (or old): is_stale.
  std::error_code ec;
  const double now = now_s();
  for (const char* area : {"tmp", "work", "boot"}) {
    for (const auto& t : fs::directory_iterator(root_ / area, ec)) {
      const double age_h = (now - mtime_s(t.path())) / 3600.0;
      if (!is_stale(area, t.path().filename(), age_h, options)) continue;
      if (!options.dry_run) fs::remove_all(t.path(), ec);
      result.removed_tmp.push_back(t.path());
    }
  }
  return result;
}

std::vector<Cache::Area> Cache::areas() const {
  std::vector<Area> out;
  std::error_code ec;
  for (const auto& [name, what] : reserved_areas()) {
    const auto dir = root_ / name;
    if (!fs::is_directory(dir, ec)) continue;
    const auto [size, linked] = tree_size(dir);
    out.push_back({name, what, size, linked});
  }
  return out;
}

std::string process_dir_name(const std::string& name) { return name + "." + std::to_string(::getpid()); }

std::string Cache::human_size(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace smtlab::cache
