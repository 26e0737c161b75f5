#include "util/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "util/error.hpp"

namespace smtlab {

ScopedDirectory::ScopedDirectory(std::filesystem::path path) : path_(std::move(path)) {
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScopedDirectory::~ScopedDirectory() {
  if (released_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_file_head(const std::filesystem::path& file, size_t max_bytes) {
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;  // grown as read: a generous bound costs nothing for a small file
  char buf[4096];
  while (out.size() < max_bytes) {
    const ssize_t n = read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

std::string read_file(const std::filesystem::path& file, size_t max_bytes) {
  // read(2), not an ifstream: a stream opens a directory and then reads nothing, like an empty file,
  // and a failed read looks like the end of the file.
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read " + file.string() + ": " + std::strerror(errno));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw Error("cannot read " + file.string() + ": " + std::strerror(e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      throw Error(file.string() + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

static void write_all(int fd, const std::string& data, const std::filesystem::path& file) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      throw Error("cannot write " + file.string() + ": " + std::strerror(e),
                  e == ENOSPC ? "the disk is full: free space and run again (with --resume)" : "");
    }
    off += static_cast<size_t>(n);
  }
}

void write_file_atomic(const std::filesystem::path& file, const std::string& content) {
  std::random_device rd;
  auto tmp = file;
  tmp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create " + tmp.string() + ": " + std::strerror(errno));
  try {
    write_all(fd, content, file);
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int e = errno;
    std::filesystem::remove(tmp);
    throw Error("cannot write " + file.string() + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    int e = errno;
    std::filesystem::remove(tmp);
    throw Error("cannot publish " + file.string() + ": " + std::strerror(e));
  }
}

void append_lines_durable(const std::filesystem::path& file, const std::string& lines) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot open " + file.string() + ": " + std::strerror(errno));
  write_all(fd, lines, file);
  ::fdatasync(fd);
  ::close(fd);
}

void append_line_durable(const std::filesystem::path& file, const std::string& line) {
  append_lines_durable(file, line + "\n");
}

}  // namespace smtlab
