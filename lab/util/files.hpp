#pragma once
// Small file helpers: bounded reads and atomic publication.
#include <filesystem>
#include <string>

namespace smtlab {

// Reads a whole file; throws smtlab::Error (naming the file) when it cannot be opened or read (a
// directory: "Is a directory"), or when it is larger than max_bytes.
std::string read_file(const std::filesystem::path& file, size_t max_bytes = 64 << 20);

// The file's first max_bytes; never throws: "" when it cannot be opened, and what was read before
// a read error (another process's /proc file when that process exits meanwhile).
std::string read_file_head(const std::filesystem::path& file, size_t max_bytes);

// Writes through a temporary file in the same directory, fsyncs, then renames over `file`:
// readers see the old or the new content, never a torn one.
void write_file_atomic(const std::filesystem::path& file, const std::string& content);

// A scratch directory made (empty) when this is constructed and removed, with everything in it,
// when this goes: on every path, exceptions included, unless release()d. Removal errors are
// ignored (a directory that cannot go is `smtlab cache gc`'s to collect).
class ScopedDirectory {
 public:
  explicit ScopedDirectory(std::filesystem::path path);
  ~ScopedDirectory();
  ScopedDirectory(const ScopedDirectory&) = delete;
  ScopedDirectory& operator=(const ScopedDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Keeps the directory: it is no longer removed.
  void release() { released_ = true; }

 private:
  std::filesystem::path path_;
  bool released_ = false;
};

// Appends a line and flushes it to disk (results are never lost to a crash after this returns).
void append_line_durable(const std::filesystem::path& file, const std::string& line);
// The same for several lines at once (`lines`: each ends with '\n'): one open, write and
// fdatasync for all of them.
void append_lines_durable(const std::filesystem::path& file, const std::string& lines);

}  // namespace smtlab
