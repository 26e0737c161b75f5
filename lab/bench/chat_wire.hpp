#pragma once
// Internal to the chat benchmark: packets, framing, per-connection send queues, small-stack
// threads. Packet = u16 big-endian length of (type + payload), u8 type, payload.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bench/chat.hpp"

namespace smtlab::bench::chat {

enum PacketType : uint8_t { kEnter = 1, kEnterOk = 2, kChat = 3, kConfirm = 4 };
constexpr size_t kTextBytes = 60;
constexpr size_t kMaxPacket = 1024;

using Packet = std::shared_ptr<const std::string>;

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline void put_str(std::string& out, std::string_view s) {
  out += static_cast<char>(s.size());
  out.append(s);
}
inline void put_u64(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out += static_cast<char>((v >> (i * 8)) & 0xff);
}
// Frames type + payload.
inline std::string frame(uint8_t type, const std::string& payload) {
  std::string p;
  size_t len = payload.size() + 1;
  p += static_cast<char>(len >> 8);
  p += static_cast<char>(len & 0xff);
  p += static_cast<char>(type);
  p += payload;
  return p;
}

// Reads the fields of a payload; ok() turns false on any overrun.
class Fields {
 public:
  explicit Fields(std::string_view p) : p_(p) {}
  std::string_view str() {
    if (p_.empty()) return bad();
    size_t n = static_cast<unsigned char>(p_[0]);
    if (p_.size() < 1 + n) return bad();
    auto s = p_.substr(1, n);
    p_.remove_prefix(1 + n);
    return s;
  }
  uint64_t u64() {
    if (p_.size() < 8) return bad(), 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p_[i]);
    p_.remove_prefix(8);
    return v;
  }
  bool ok() const { return ok_; }

 private:
  std::string_view bad() {
    ok_ = false;
    p_ = {};
    return {};
  }
  std::string_view p_;
  bool ok_ = true;
};

// Buffered reader of framed packets from a blocking socket.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd), buf_(8192) {}
  // Next packet: type and payload (valid until the next call). false on EOF or error.
  bool next(uint8_t& type, std::string_view& payload);

 private:
  int fd_;
  std::vector<char> buf_;
  size_t start_ = 0, end_ = 0;
};

// A connection's outgoing queue, drained by its sender thread.
class SendQueue {
 public:
  void push(Packet p);
  void close();  // the sender writes what is queued, then shuts the socket's write side
  // Sender thread body: takes everything queued, one write(2) per packet, yields per batch
  // when asked. Returns when closed and drained, or on a write error.
  void run_sender(int fd, bool yield_after_batch);

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Packet> items_;
  bool closed_ = false;
};

bool write_packet(int fd, const std::string& p);

// Starts a detached thread with a small stack; throws smtlab::Error when it cannot.
void start_thread(size_t stack_bytes, std::function<void()> body);

// Number of tasks (threads) of a process, from /proc/<pid>/task (0 when unreadable).
int count_tasks(int pid);

// Raises RLIMIT_NOFILE to at least `needed` (throws smtlab::Error when the hard limit is lower
// and cannot be raised).
void ensure_nofile(size_t needed);

inline bool yields_rx(YieldMode m) { return m == YieldMode::both || m == YieldMode::rx; }
inline bool yields_tx(YieldMode m) { return m == YieldMode::both || m == YieldMode::tx; }

// The two sides, each run in its own (forked) process; they report one JSON line on report_fd.
int run_server(int listen_fd, const ChatOptions& options, int report_fd);
int run_client(int port, int server_pid, const ChatOptions& options, int report_fd);

}  // namespace smtlab::bench::chat
