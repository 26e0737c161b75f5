#include "vm/control_channel.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "util/error.hpp"

namespace smtlab::vm {

ControlChannel::ControlChannel(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
ControlChannel::ControlChannel(ControlChannel&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) {
  o.fd_ = -1;
}
ControlChannel& ControlChannel::operator=(ControlChannel&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}
ControlChannel::~ControlChannel() {
  if (fd_ >= 0) close(fd_);
}

ControlChannel ControlChannel::connect(const std::filesystem::path& socket_path,
                                       std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = socket_path.string();
  if (p.size() >= sizeof addr.sun_path)
    throw Error("control socket path is too long for a UNIX socket: " + p);
  memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int last_errno = 0;
  while (true) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw Error(std::string("cannot create a UNIX socket: ") + strerror(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
      return ControlChannel(fd, socket_path);
    last_errno = errno;
    close(fd);
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw Error("cannot connect to the guest's control socket " + p + ": " + strerror(last_errno),
              "is the guest running? its console log says more");
}

void ControlChannel::send_line(std::string_view line) {
  if (line.find('\n') != std::string_view::npos || line.find('\0') != std::string_view::npos)
    throw Error("control line contains a newline or NUL");
  std::string data(line);
  data += '\n';
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error("cannot write to the guest's control socket " + path_.string() + ": " +
                  strerror(errno));
    sent += static_cast<size_t>(n);
  }
}

void ControlChannel::go(std::string_view barrier) {
  if (barrier.empty() || barrier.find_first_of(" \t") != std::string_view::npos)
    throw Error("barrier name '" + std::string(barrier) + "' must be one word");
  send_line("go " + std::string(barrier));
}

}  // namespace smtlab::vm
