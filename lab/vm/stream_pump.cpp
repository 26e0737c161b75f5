#include "vm/stream_pump.hpp"

#include <fcntl.h>
#include <libvirt/libvirt.h>
#include <unistd.h>

#include <vector>

#include "util/error.hpp"
#include "vm/connection.hpp"

namespace smtlab::vm {

StreamPump::StreamPump(virStreamPtr stream, std::filesystem::path file, OutputCap cap)
    : stream_(stream), file_(std::move(file)), cap_(std::move(cap)) {
  fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    virStreamAbort(stream_);
    virStreamFree(stream_);
    stream_ = nullptr;
    throw Error("cannot write " + file_.string() + " (the " + cap_.what + " of a remote guest)");
  }
  thread_ = std::thread([this] { run(); });
}

StreamPump::~StreamPump() {
  stop();
  if (stream_) virStreamFree(stream_);
  if (fd_ >= 0) ::close(fd_);
}

bool StreamPump::wait_finished(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!finished_.load()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void StreamPump::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string StreamPump::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void StreamPump::run() {
  std::vector<char> buf(64 * 1024);
  std::uint64_t written = 0;
  bool cut = false, ended = false;
  auto write_all = [this](const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w <= 0) return;  // a full results disk: the runner reports missing records
      p += w;
      n -= static_cast<size_t>(w);
    }
  };
  while (!stop_.load()) {
    int n = virStreamRecv(stream_, buf.data(), buf.size());
    if (n == -2) {  // nothing yet (non-blocking)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (n == 0) {  // end of stream: the guest's device went away
      virStreamFinish(stream_);
      ended = true;
      break;
    }
    if (n < 0) {
      std::lock_guard lock(mutex_);
      error_ = libvirt_error();
      virStreamAbort(stream_);
      ended = true;
      break;
    }
    received_ += static_cast<std::uint64_t>(n);
    if (cut) continue;
    size_t take = static_cast<size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(n), cap_.cap - written));
    write_all(buf.data(), take);
    written += take;
    if (written >= cap_.cap && take < static_cast<size_t>(n)) {  // over the cap, not just at it
      cut = true;
      const std::string note = cut_note(cap_);
      write_all(note.data(), note.size());
    }
  }
  if (!ended) virStreamAbort(stream_);
  finished_ = true;
}

}  // namespace smtlab::vm
