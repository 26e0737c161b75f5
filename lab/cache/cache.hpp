#pragma once
// A content-addressed cache of built artifacts (kernels, initramfs, images, resolutions).
//
// Layout under the root (smtlab::cache_dir() unless given):
//   <root>/<kind>/<key>/            one published entry; its files plus entry.json, which lists
//                                   every file with its size and sha256 (and the entry's name)
//   <root>/tmp/<kind>-<key>.<pid>.<n>/  a build in progress; published with one rename(2)
//   <root>/locks/<kind>-<key>.lock  flock(2) per key: concurrent smtlab processes wait, and the
//                                   second one then finds a hit
//   <root>/work/, logs/, debs/     scratch space of long builds and runs, build logs, reusable
//                                  .debs (not entries; gc removes work dirs of dead processes)
//   <root>/boot/                   `smtlab boot`: <cell>.<pid> while it runs (gc removes it once
//                                  that process is gone), <cell>-<pid> when kept (--keep, or a
//                                  failure; gc removes it after --unused-days)
//   <root>/vm-test/                kernels of the VM tests (not entries; never collected)
// A lookup always checks that every listed file exists with its recorded size, and hashes the
// small files (or all of them with Verify::full). A damaged entry is a miss: it is removed, a note
// says so, and it is rebuilt.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace smtlab::cache {

enum class Verify { quick, full };  // quick: sizes, plus sha256 of files up to 1 MiB

struct Entry {
  std::filesystem::path dir;  // the published entry directory (read-only by convention)
  bool hit = false;           // false: built just now by this call
  std::string kind, key, name;
  std::uint64_t size = 0;  // bytes of the listed files
  // Each listed regular file's sha256 as entry.json records it (hashed when the entry was built),
  // by its path relative to dir: "base.qcow2" -> "<64 hex>".
  std::map<std::string, std::string> sha256;
};

struct EntryInfo {
  std::string kind, key, name;
  std::uint64_t size = 0;
  double age_days = 0;        // since it was built
  double unused_days = 0;     // since it was last used (a hit refreshes it)
  std::filesystem::path dir;
};

struct GcOptions {
  std::optional<double> unused_days;         // remove entries not used for this long
  std::optional<std::uint64_t> max_bytes;    // then remove least recently used ones over this
  double stale_tmp_hours = 6;                // temp dirs of dead builders older than this
  bool dry_run = false;
};

struct GcResult {
  std::vector<EntryInfo> removed;
  std::vector<std::filesystem::path> removed_tmp;  // work, tmp and boot directories
  std::uint64_t freed_bytes = 0;
  std::uint64_t kept_bytes = 0;
};

class Cache {
 public:
  explicit Cache(std::filesystem::path root);
  Cache();  // smtlab::cache_dir()

  const std::filesystem::path& root() const { return root_; }

  // The entry if it is present and intact (a damaged one is removed and reported as absent).
  std::optional<Entry> lookup(const std::string& kind, const std::string& key,
                              Verify verify = Verify::quick);

  // Returns the entry, building it first when missing: `build` fills the temporary directory it
  // is given (and may throw: the temporary directory is then removed and the error propagates).
  // Holds the key's lock while building; another process asking for the same key waits.
  Entry get_or_build(const std::string& kind, const std::string& key, const std::string& name,
                     const std::function<void(const std::filesystem::path& tmpdir)>& build,
                     Verify verify = Verify::quick);

  // Removes one entry (under its lock). Returns false when it was not there.
  bool remove(const std::string& kind, const std::string& key);

  std::vector<EntryInfo> list() const;  // every published entry, sorted by kind then name

  // The other directories of the root (debs, boot, vm-test, work, logs, tmp) that exist, with
  // their size in bytes and what they hold, for `smtlab cache ls`.
  struct Area {
    std::string name, what;
    std::uint64_t size = 0;
    std::uint64_t linked = 0;  // of size: files with other hard links (e.g. the host's apt cache)
  };
  std::vector<Area> areas() const;
  GcResult gc(const GcOptions& options);

  // "1.2 GiB", "340 KiB": for summaries.
  static std::string human_size(std::uint64_t bytes);

 private:
  std::optional<Entry> lookup_impl(const std::string& kind, const std::string& key, Verify verify,
                                   bool locked);
  std::filesystem::path root_;
};

// "<name>.<pid of this process>": a directory of a non-entry area (work, boot) that gc removes
// once its process is gone.
std::string process_dir_name(const std::string& name);

// Keys are lower-case hex or [a-z0-9._-]; throws smtlab::Error otherwise (they become paths).
void check_key_part(const std::string& what, const std::string& value);

}  // namespace smtlab::cache
