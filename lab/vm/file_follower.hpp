#pragma once
// Reading a file that QEMU keeps appending to (the results channel, the console), line by line,
// with bounded memory: complete lines only, oversized lines cut and flagged.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace smtlab::vm {

struct FollowedLine {
  std::string text;        // without the '\n'; at most max_line bytes
  bool truncated = false;  // the line was longer than max_line (the rest was dropped)
};

class FileFollower {
 public:
  explicit FileFollower(std::filesystem::path file, size_t max_line = 64 << 10);
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;

  // Complete lines appended since the last call ([] while the file does not exist yet).
  // Reads at most `max_bytes` per call; call again for more.
  std::vector<FollowedLine> poll(size_t max_bytes = 4 << 20);
  // After the writer is gone: poll() plus a final unterminated line, if any.
  std::vector<FollowedLine> finish();
  size_t bytes_read() const { return offset_; }

 private:
  std::filesystem::path file_;
  size_t max_line_;
  FILE* in_ = nullptr;
  size_t offset_ = 0;
  std::string partial_;
  bool partial_truncated_ = false;
};

}  // namespace smtlab::vm
