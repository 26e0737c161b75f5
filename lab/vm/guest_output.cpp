#include "vm/guest_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "util/error.hpp"
#include "util/limits.hpp"

namespace smtlab::vm {

namespace {

// `most`, or the lower cap in whole MiB that the environment variable `name` asks for.
std::uint64_t cap_from_env(const char* name, std::uint64_t most) {
  const char* text = std::getenv(name);
  if (!text || !*text) return most;
  const std::string_view v(text);
  std::uint64_t mib = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), mib);
  if (ec != std::errc() || end != v.data() + v.size() || mib < 1 || mib > (most >> 20))
    throw Error(std::string(name) + "=" + std::string(v.substr(0, 40)) + " is not a cap smtlab takes",
                "give a whole number of MiB from 1 to " + std::to_string(most >> 20) +
                    " (a lower cap than the default), or unset it");
  return mib << 20;
}

}  // namespace

OutputCap console_cap() { return {"console", cap_from_env("SMTLAB_CONSOLE_CAP_MIB", limits::kMaxConsoleBytesPerVm)}; }
OutputCap channel_cap() {
  return {"results channel", cap_from_env("SMTLAB_CHANNEL_CAP_MIB", limits::kMaxChannelBytesPerVm)};
}

void check_output_caps() {
  console_cap();
  channel_cap();
}

std::string describe_size(std::uint64_t bytes) {
  if (bytes > 0 && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::uint64_t bytes_over(const std::filesystem::path& file, const OutputCap& cap) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  return !ec && size > cap.cap ? size - cap.cap : 0;
}

std::string over_cap_error(int vm, const OutputCap& cap, const std::filesystem::path& file) {
  const std::string size = describe_size(cap.cap);
  return "VM " + std::to_string(vm) + " wrote more than " + size + " to its " + cap.what + " (a " + cap.what +
         " flood; the first " + size + " are kept in " + file.filename().string() + ")";
}

std::string cut_note(const OutputCap& cap) {
  return "\n[smtlab: " + cap.what + " cut at " + describe_size(cap.cap) + "; the rest of the guest's output was dropped]\n";
}

bool cut_to_cap(const std::filesystem::path& file, const OutputCap& cap) {
  if (bytes_over(file, cap) == 0) return false;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::ftruncate(fd, static_cast<off_t>(cap.cap)) == 0;
  const std::string note = cut_note(cap);
  ok = ok && ::pwrite(fd, note.data(), note.size(), static_cast<off_t>(cap.cap)) == static_cast<ssize_t>(note.size());
  ::close(fd);
  return ok;
}

CappedTail::CappedTail(std::filesystem::path file, std::uint64_t cap) : file_(std::move(file)), cap_(cap) {}

CappedTail::~CappedTail() {
  if (fd_ >= 0) ::close(fd_);
}

std::string CappedTail::read(std::size_t max_bytes) {
  if (fd_ < 0) fd_ = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return {};
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes, cap_ - read_));
  std::string out;
  char buf[65536];
  while (out.size() < want) {
    const ssize_t n = ::read(fd_, buf, std::min(sizeof buf, want - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  read_ += out.size();
  return out;
}

void CappedTail::read_all(std::size_t piece, const std::function<void(std::string)>& each) {
  for (std::string bytes = read(piece); !bytes.empty(); bytes = read(piece)) each(std::move(bytes));
}

std::uint64_t CappedTail::bytes_beyond() const {
  if (read_ < cap_) return 0;
  return bytes_over(file_, OutputCap{"", cap_});
}

}  // namespace smtlab::vm
