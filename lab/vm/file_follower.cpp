#include "vm/file_follower.hpp"

namespace smtlab::vm {

FileFollower::FileFollower(std::filesystem::path file, size_t max_line)
    : file_(std::move(file)), max_line_(max_line) {}

FileFollower::~FileFollower() {
  if (in_) fclose(in_);
}

std::vector<FollowedLine> FileFollower::poll(size_t max_bytes) {
  std::vector<FollowedLine> lines;
  if (!in_) {
    in_ = fopen(file_.c_str(), "rbe");
    if (!in_) return lines;
  }
  clearerr(in_);
  char buf[16384];
  size_t budget = max_bytes;
  while (budget > 0) {
    size_t want = std::min(sizeof buf, budget);
    size_t n = fread(buf, 1, want, in_);
    if (n == 0) break;
    offset_ += n;
    budget -= n;
    for (size_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c == '\n') {
        lines.push_back({std::move(partial_), partial_truncated_});
        partial_.clear();
        partial_truncated_ = false;
      } else if (partial_.size() < max_line_) {
        partial_ += c;
      } else {
        partial_truncated_ = true;
      }
    }
    if (n < want) break;
  }
  return lines;
}

std::vector<FollowedLine> FileFollower::finish() {
  auto lines = poll(SIZE_MAX);
  if (!partial_.empty() || partial_truncated_) {
    lines.push_back({std::move(partial_), partial_truncated_});
    partial_.clear();
    partial_truncated_ = false;
  }
  return lines;
}

}  // namespace smtlab::vm
