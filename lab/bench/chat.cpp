#include "bench/chat.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "bench/chat_wire.hpp"
#include "util/error.hpp"
#include "util/limits.hpp"

namespace smtlab::bench {

YieldMode parse_yield_mode(const std::string& s) {
  if (s == "both") return YieldMode::both;
  if (s == "rx") return YieldMode::rx;
  if (s == "tx") return YieldMode::tx;
  if (s == "none") return YieldMode::none;
  throw Error("chat: unknown yield mode \"" + s + "\"", "use both, rx, tx or none");
}

const char* to_string(YieldMode m) {
  switch (m) {
    case YieldMode::both: return "both";
    case YieldMode::rx: return "rx";
    case YieldMode::tx: return "tx";
    case YieldMode::none: return "none";
  }
  return "?";
}

namespace chat {

bool Reader::next(uint8_t& type, std::string_view& payload) {
  for (;;) {
    size_t have = end_ - start_;
    if (have >= 2) {
      size_t len = (static_cast<unsigned char>(buf_[start_]) << 8) | static_cast<unsigned char>(buf_[start_ + 1]);
      if (len == 0 || len > kMaxPacket) return false;  // corrupt stream
      if (have >= 2 + len) {
        type = static_cast<uint8_t>(buf_[start_ + 2]);
        payload = std::string_view(buf_.data() + start_ + 3, len - 1);
        start_ += 2 + len;
        return true;
      }
    }
    if (start_ > 0) {  // compact
      std::memmove(buf_.data(), buf_.data() + start_, have);
      start_ = 0;
      end_ = have;
    }
    ssize_t n = read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    end_ += static_cast<size_t>(n);
  }
}

bool write_packet(int fd, const std::string& p) {
  size_t off = 0;
  while (off < p.size()) {
    ssize_t n = write(fd, p.data() + off, p.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

void SendQueue::push(Packet p) {
  {
    std::lock_guard lock(m_);
    if (closed_) return;
    items_.push_back(std::move(p));
  }
  cv_.notify_one();
}

void SendQueue::close() {
  {
    std::lock_guard lock(m_);
    closed_ = true;
  }
  cv_.notify_one();
}

void SendQueue::run_sender(int fd, bool yield_after_batch) {
  std::vector<Packet> batch;
  for (;;) {
    bool closing;
    {
      std::unique_lock lock(m_);
      cv_.wait(lock, [&] { return !items_.empty() || closed_; });
      batch.swap(items_);
      closing = closed_;
    }
    for (auto& p : batch)
      if (!write_packet(fd, *p)) {
        shutdown(fd, SHUT_WR);
        return;
      }
    bool wrote = !batch.empty();
    batch.clear();
    if (closing) {
      std::lock_guard lock(m_);
      if (items_.empty()) break;
      continue;
    }
    if (wrote && yield_after_batch) sched_yield();
  }
  shutdown(fd, SHUT_WR);
}

void start_thread(size_t stack_bytes, std::function<void()> body) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, std::max<size_t>(stack_bytes, PTHREAD_STACK_MIN));
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  auto* heap = new std::function<void()>(std::move(body));
  pthread_t t;
  int rc = pthread_create(
      &t, &attr,
      [](void* arg) -> void* {
        std::unique_ptr<std::function<void()>> f(static_cast<std::function<void()>*>(arg));
        (*f)();
        return nullptr;
      },
      heap);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete heap;
    throw Error(std::string("chat: cannot start a thread: ") + std::strerror(rc),
                "lower rooms x users, or raise the task limit (ulimit -u, kernel.threads-max)");
  }
}

int count_tasks(int pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(path.c_str());
  if (!d) return 0;
  int n = 0;
  while (auto* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

void ensure_nofile(size_t needed) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= needed) return;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < needed) {
    rlimit want{needed, needed};
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) return;
    throw Error("chat: needs " + std::to_string(needed) + " open files, the hard limit is " +
                    std::to_string(rl.rlim_max),
                "raise it (ulimit -Hn) or lower rooms x users");
  }
  rl.rlim_cur = needed;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
    throw Error("chat: cannot raise the open-file limit to " + std::to_string(needed));
}

}  // namespace chat

namespace {

using nlohmann::json;

struct Child {
  pid_t pid = -1;
  int report = -1;  // read end
  std::string buffer;
  bool eof = false;
};

// Reads one '\n'-terminated line from a child's report pipe, waiting at most until the deadline.
// Returns false on EOF or timeout (timed_out set).
bool read_line(Child& c, std::string& line, std::chrono::steady_clock::time_point deadline, bool& timed_out) {
  for (;;) {
    auto nl = c.buffer.find('\n');
    if (nl != std::string::npos) {
      line = c.buffer.substr(0, nl);
      c.buffer.erase(0, nl + 1);
      return true;
    }
    if (c.eof) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      return false;
    }
    pollfd p{c.report, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = read(c.report, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      c.eof = true;
      continue;
    }
    if (c.buffer.size() < (1 << 20)) c.buffer.append(buf, static_cast<size_t>(n));
  }
}

json parse_report(const std::string& line, const char* side) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(std::string("chat: garbled report from the ") + side);
  if (j.contains("error") && j["error"].is_string()) {
    std::string message = std::string("chat ") + side + ": " + j["error"].get<std::string>();
    if (j.value("stalled", false)) throw StalledError(message);
    throw Error(message);
  }
  return j;
}

void reap(Child& c, bool kill_it) {
  if (c.pid <= 0) return;
  if (kill_it) kill(c.pid, SIGKILL);
  int st;
  while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {}
  c.pid = -1;
  if (c.report >= 0) close(c.report);
  c.report = -1;
}

}  // namespace

ChatResult run_chat(const ChatOptions& o) {
  if (o.rooms < 1 || o.users < limits::kChatMinUsers || o.count < 1)
    throw Error("chat: needs rooms >= 1, users >= " + std::to_string(limits::kChatMinUsers) + " and count >= 1");
  if (o.rooms > limits::kChatMaxRooms || o.users > limits::kChatMaxUsers)
    throw Error("chat: at most " + std::to_string(limits::kChatMaxRooms) + " rooms and " +
                std::to_string(limits::kChatMaxUsers) + " users per room");
  const size_t conns = static_cast<size_t>(o.rooms) * o.users;
  chat::ensure_nofile(conns + 64);  // inherited by both children

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) throw Error("chat: socket failed: " + std::string(strerror(errno)));
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(o.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    close(lfd);
    throw Error("chat: cannot listen on 127.0.0.1:" + std::to_string(o.port) + ": " + strerror(e),
                e == EADDRINUSE ? "another process uses that port: choose another (--port, 0 = any)" : "");
  }
  if (listen(lfd, static_cast<int>(std::min<size_t>(conns + 16, 4096))) != 0)
    throw Error("chat: listen failed: " + std::string(strerror(errno)));
  socklen_t alen = sizeof addr;
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &alen);
  const int port = ntohs(addr.sin_port);

  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<long long>(std::max(o.timeout_s, 1.0) * 1000));
  Child server, client;
  auto start_child = [&](Child& c, auto&& body) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw Error("chat: pipe failed");
    std::fflush(nullptr);
    c.pid = fork();
    if (c.pid < 0) throw Error("chat: fork failed: " + std::string(strerror(errno)));
    if (c.pid == 0) {
      close(p[0]);
      int rc = 1;
      try {
        rc = body(p[1]);
      } catch (const std::exception& e) {
        std::string line = json{{"error", e.what()}}.dump() + "\n";
        chat::write_packet(p[1], line);
      }
      _exit(rc);
    }
    close(p[1]);
    c.report = p[0];
  };

  try {
    start_child(server, [&](int fd) { return chat::run_server(lfd, o, fd); });
    close(lfd);
    lfd = -1;
    bool timed_out = false;
    std::string line;
    if (!read_line(server, line, deadline, timed_out))
      throw Error(timed_out ? "chat: the server did not start in time" : "chat: the server died while starting");
    json ready = parse_report(line, "server");
    const int server_pid = server.pid;
    start_child(client, [&](int fd) { return chat::run_client(port, server_pid, o, fd); });
    if (o.on_started) o.on_started(server.pid, client.pid);

    if (!read_line(client, line, deadline, timed_out))
      throw Error(timed_out ? "chat: the run did not finish within " + std::to_string(o.timeout_s) +
                                  " s (stalled token ring?)"
                            : "chat: the client died during the run");
    json cr = parse_report(line, "client");
    if (!read_line(server, line, deadline, timed_out))
      throw Error(timed_out ? "chat: the server did not finish in time" : "chat: the server died during the run");
    json sr = parse_report(line, "server");
    reap(client, false);
    reap(server, false);

    ChatResult r;
    r.rooms = o.rooms;
    r.users = o.users;
    r.count = o.count;
    r.yield = to_string(o.yield);
    r.port = port;
    r.sent = cr.at("sent").get<long long>();
    r.received = cr.at("received").get<long long>();
    r.elapsed_s = cr.at("elapsed_s").get<double>();
    r.msgs_per_s = r.elapsed_s > 0 ? static_cast<double>(r.sent + r.received) / r.elapsed_s : 0;
    r.latency_p50_us = cr.at("p50_ns").get<double>() / 1000;
    r.latency_p90_us = cr.at("p90_ns").get<double>() / 1000;
    r.latency_p99_us = cr.at("p99_ns").get<double>() / 1000;
    r.latency_max_us = cr.at("max_ns").get<double>() / 1000;
    r.context_switches = cr.at("cs").get<long long>() + sr.at("cs").get<long long>();
    r.cs_per_msg = r.sent + r.received > 0 ? static_cast<double>(r.context_switches) / (r.sent + r.received) : 0;
    r.client_threads = cr.at("client_tasks").get<int>();
    r.server_threads = cr.at("server_tasks").get<int>();
    r.connection_threads = r.client_threads - 1 + r.server_threads - 1;
    r.server_cookie = ready.value("cookie", 0ull);
    r.client_cookie = cr.value("cookie", 0ull);

    check_chat_counts(o, r.sent, r.received, sr.at("forwarded").get<long long>());
    return r;
  } catch (...) {
    if (lfd >= 0) close(lfd);
    reap(client, true);
    reap(server, true);
    throw;
  }
}

void check_chat_counts(const ChatOptions& o, long long sent, long long received, long long forwarded) {
  const long long want_sent = static_cast<long long>(o.rooms) * o.users * o.count;
  const long long want_received = want_sent * (o.users - 1);
  if (sent != want_sent || received != want_received)
    throw Error("chat: invalid run: sent " + std::to_string(sent) + " (expected " + std::to_string(want_sent) +
                "), received " + std::to_string(received) + " (expected " + std::to_string(want_received) + ")");
  if (forwarded >= 0 && forwarded != want_received)
    throw Error("chat: invalid run: the server forwarded " + std::to_string(forwarded) + " messages, expected " +
                std::to_string(want_received));
}

std::string describe(const ChatResult& r) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "chat: %d rooms x %d users x %d messages, yield %s, port %d\n"
                "  sent          %lld\n"
                "  received      %lld (= sent x %d)\n"
                "  elapsed       %.3f s\n"
                "  messages/s    %.0f\n"
                "  latency       p50 %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us\n"
                "  ctx switches  %lld (%.2f per message)\n"
                "  threads       %d connection threads (server %d + client %d tasks incl. main)\n",
                r.rooms, r.users, r.count, r.yield.c_str(), r.port, r.sent, r.received, r.users - 1, r.elapsed_s,
                r.msgs_per_s, r.latency_p50_us, r.latency_p90_us, r.latency_p99_us, r.latency_max_us,
                r.context_switches, r.cs_per_msg, r.connection_threads, r.server_threads, r.client_threads);
  std::string s = buf;
  if (r.server_cookie || r.client_cookie) {
    std::snprintf(buf, sizeof buf, "  coresched     cookie server 0x%llx, client 0x%llx\n", r.server_cookie,
                  r.client_cookie);
    s += buf;
  }
  return s;
}

}  // namespace smtlab::bench
