#include "image/cpio.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include "util/error.hpp"

namespace smtlab::image {
namespace {
void pad4(std::string& s) {
  while (s.size() % 4) s.push_back('\0');
}
}  // namespace

void CpioWriter::entry(const std::string& path, std::uint32_t mode, const std::string& data, std::uint32_t rmajor,
                       std::uint32_t rminor) {
  if (finished_) throw Error("internal: cpio archive already finished");
  if (path.empty() || path.front() == '/' || path.find("..") != std::string::npos) {
    throw Error("internal: bad cpio path '" + path + "'");
  }
  const std::uint32_t nlink = S_ISDIR(mode) ? 2 : 1;
  out_ += fmt::format("070701{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
                      path == "TRAILER!!!" ? 0 : next_ino_++, mode, 0, 0, nlink, mtime_,
                      static_cast<std::uint32_t>(data.size()), 0, 0, rmajor, rminor,
                      static_cast<std::uint32_t>(path.size() + 1), 0);
  out_ += path;
  out_.push_back('\0');
  pad4(out_);
  out_ += data;
  pad4(out_);
}

void CpioWriter::add_directory(const std::string& path, std::uint32_t mode) { entry(path, S_IFDIR | mode, {}); }
void CpioWriter::add_file(const std::string& path, const std::string& data, std::uint32_t mode) {
  entry(path, S_IFREG | mode, data);
}
void CpioWriter::add_symlink(const std::string& path, const std::string& target) {
  entry(path, S_IFLNK | 0777, target);
}
void CpioWriter::add_char_device(const std::string& path, std::uint32_t mode, std::uint32_t major,
                                 std::uint32_t minor) {
  entry(path, S_IFCHR | mode, {}, major, minor);
}

std::string CpioWriter::finish() {
  entry("TRAILER!!!", 0, {});
  finished_ = true;
  while (out_.size() % 512) out_.push_back('\0');
  return std::move(out_);
}

}  // namespace smtlab::image
