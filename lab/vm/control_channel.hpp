#pragma once
// The host end of a guest's control port (org.smtlab.control.0): QEMU listens on a UNIX
// socket (DomainSpec::control_socket); we connect and write lines such as "go <barrier>".
#include <chrono>
#include <filesystem>
#include <string_view>

namespace smtlab::vm {

class ControlChannel {
 public:
  // Connects, retrying until `timeout` while QEMU has not created the socket yet.
  // Throws smtlab::Error naming the socket.
  static ControlChannel connect(const std::filesystem::path& socket,
                                std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ControlChannel(ControlChannel&& other) noexcept;
  ControlChannel& operator=(ControlChannel&& other) noexcept;
  ~ControlChannel();

  // Writes `line` + '\n' (QEMU buffers it until the guest reads the port). Refuses lines with
  // '\n' or NUL; throws smtlab::Error when the guest's QEMU is gone.
  void send_line(std::string_view line);
  // "go <barrier>": releases guests waiting in lockstep mode.
  void go(std::string_view barrier);

 private:
  explicit ControlChannel(int fd, std::filesystem::path path);
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace smtlab::vm
