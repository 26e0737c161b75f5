#pragma once
// A small writer for "newc" cpio archives (the format the Linux initramfs unpacker reads).
// Entries are written in the order added; timestamps are fixed, so equal input gives equal bytes.
#include <cstdint>
#include <string>

namespace smtlab::image {

class CpioWriter {
 public:
  explicit CpioWriter(std::uint32_t mtime = 0) : mtime_(mtime) {}
  // Paths are relative to the archive root ("bin/sh", no leading '/').
  void add_directory(const std::string& path, std::uint32_t mode = 0755);
  void add_file(const std::string& path, const std::string& data, std::uint32_t mode = 0644);
  void add_symlink(const std::string& path, const std::string& target);
  void add_char_device(const std::string& path, std::uint32_t mode, std::uint32_t major, std::uint32_t minor);
  // Appends the TRAILER!!! entry and pads to a multiple of 512 bytes; returns the archive.
  std::string finish();

 private:
  void entry(const std::string& path, std::uint32_t mode, const std::string& data, std::uint32_t rmajor = 0,
             std::uint32_t rminor = 0);
  std::string out_;
  std::uint32_t mtime_;
  std::uint32_t next_ino_ = 1;
  bool finished_ = false;
};

}  // namespace smtlab::image
