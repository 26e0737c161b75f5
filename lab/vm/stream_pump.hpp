#pragma once
// A libvirt stream (a remote guest's console or results port) copied into a local file by a
// thread of its own, so that everything downstream reads files as it does for local guests.
// Guest output is untrusted: the file is capped (vm/guest_output.hpp: cut_note() marks the cut,
// the rest is read and dropped so the guest never blocks on a full pty; the session sees the file
// over its cap and fails the cell, as for a local guest).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "vm/guest_output.hpp"

typedef struct _virStream* virStreamPtr;

namespace smtlab::vm {

class StreamPump {
 public:
  // Takes ownership of `stream` (created with VIR_STREAM_NONBLOCK and already opened on a
  // console or channel). Truncates `file` (mode 0600) and starts copying.
  StreamPump(virStreamPtr stream, std::filesystem::path file, OutputCap cap);
  ~StreamPump();  // stop()
  StreamPump(const StreamPump&) = delete;
  StreamPump& operator=(const StreamPump&) = delete;

  // The stream ended (end of stream or an error: the domain stopped, the connection broke).
  bool finished() const { return finished_.load(); }
  // Until finished() or `timeout` passed; returns finished().
  bool wait_finished(std::chrono::milliseconds timeout) const;
  // Ends the thread (aborting the stream if it has not ended) and joins it. Idempotent.
  void stop();

  std::uint64_t bytes_received() const { return received_.load(); }
  std::string error() const;  // libvirt's message when the stream ended with an error

 private:
  void run();

  virStreamPtr stream_ = nullptr;
  std::filesystem::path file_;
  OutputCap cap_;
  int fd_ = -1;
  std::atomic<bool> stop_{false}, finished_{false};
  std::atomic<std::uint64_t> received_{0};
  mutable std::mutex mutex_;
  std::string error_;
  std::thread thread_;
};

}  // namespace smtlab::vm
