// The chat client: rooms x users simulated users, each with its own TCP connection and a
// receiver and a sender thread. Users join one at a time (each waits for its enter confirm),
// then a start gate opens; in each room the users take turns: a user sends its next message
// when (sent + received) % users == its index, so each room is a token ring with one message
// in flight. A user leaves (closes its write side) once it has sent `count` and received
// count x (users - 1) messages; the run ends when the server has closed every connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "bench/chat_wire.hpp"
#include "bench/coresched.hpp"
#include "bench/latency.hpp"
#include "bench/procfs.hpp"
#include "util/error.hpp"

namespace smtlab::bench::chat {

namespace {

struct Client;

struct User {
  Client* client = nullptr;
  int room = 0, index = 0;
  int fd = -1;
  std::string room_name, user_name;
  SendQueue queue;
  std::mutex m;  // sent/received/left (touched by the main thread once, at the gate)
  int sent = 0;
  long long received = 0;
  bool left = false;
  LatencyHistogram latency;
  ~User() {
    if (fd >= 0) ::close(fd);
  }
};

struct Client {
  ChatOptions options;
  int server_pid = 0, port = 0;
  long long expected_received_per_user = 0;
  std::mutex m;
  std::condition_variable cv;
  int joined = 0;      // enter confirms seen
  size_t closed = 0;   // users whose connection the server closed
  std::vector<std::unique_ptr<User>> users;
  uint64_t end_ns = 0;
  std::atomic<uint64_t> progress_ns{0};  // when the last packet arrived for any user
};

std::string chat_packet(const User& u) {
  std::string p;
  put_str(p, u.room_name);
  put_str(p, u.user_name);
  put_u64(p, now_ns());
  // 60 bytes of text, like the original's fixed message.
  static const char text[] = "The quick brown fox jumps over the lazy dog, again and again.";
  p.append(text, kTextBytes);
  return frame(kChat, p);
}

// Called with u.m held: sends when it is this user's turn; leaves when done.
void take_turn(User& u) {
  const ChatOptions& o = u.client->options;
  if (u.sent < o.count && (u.sent + u.received) % o.users == u.index) {
    ++u.sent;
    u.queue.push(std::make_shared<const std::string>(chat_packet(u)));
  }
  if (!u.left && u.sent == o.count && u.received == u.client->expected_received_per_user) {
    u.left = true;
    u.queue.close();  // the sender writes what is queued, then shuts down the write side
  }
}

void receive_loop(User& u) {
  Client& c = *u.client;
  Reader reader(u.fd);
  uint8_t type;
  std::string_view payload;
  const bool yield = yields_rx(c.options.yield);
  while (reader.next(type, payload)) {
    c.progress_ns.store(now_ns(), std::memory_order_relaxed);
    if (type == kEnterOk) {
      std::lock_guard lock(c.m);
      ++c.joined;
      c.cv.notify_all();
    } else if (type == kChat) {
      Fields f(payload);
      f.str();
      f.str();
      uint64_t ts = f.u64();
      uint64_t now = now_ns();
      std::lock_guard lock(u.m);
      ++u.received;
      if (f.ok()) u.latency.add(now > ts ? now - ts : 0);
      take_turn(u);
    }
    // kConfirm: only paces the sender, ignored.
    if (yield) sched_yield();
  }
  std::lock_guard lock(c.m);
  ++c.closed;
  if (c.closed == c.users.size()) c.end_ns = now_ns();
  c.cv.notify_all();
}

// Where a stalled run stood: each unfinished room's users, both sides' threads, the sockets.
std::string stall_report(Client& c, const char* phase) {
  const ChatOptions& o = c.options;
  std::string out = "the run stalled while " + std::string(phase) + ": nothing arrived for " +
                    std::to_string(static_cast<long long>(o.stall_s)) + " s";
  constexpr int kRoomsShown = 8, kUsersShown = 12;
  int rooms_shown = 0, rooms_unfinished = 0;
  for (size_t first = 0; first < c.users.size(); first += static_cast<size_t>(o.users)) {
    std::string room;
    bool finished = true;
    for (size_t k = first; k < std::min(c.users.size(), first + o.users); ++k) {
      User& u = *c.users[k];
      std::unique_lock lock(u.m, std::try_to_lock);  // a receiver stuck holding it must not stop the report
      if (lock.owns_lock()) finished = finished && u.left;
      else finished = false;
      if (static_cast<int>(k - first) >= kUsersShown) continue;
      room += k == first ? "" : "; ";
      room += u.user_name + (lock.owns_lock() ? " sent " + std::to_string(u.sent) + " received " +
                                                    std::to_string(u.received) + (u.left ? " (left)" : "")
                                              : std::string(" (its lock is held)"));
    }
    if (finished) continue;
    if (++rooms_unfinished > kRoomsShown) continue;
    ++rooms_shown;
    if (static_cast<size_t>(o.users) > static_cast<size_t>(kUsersShown)) room += "; ...";
    out += "\n  " + c.users[first]->room_name + ": " + room;
  }
  if (rooms_unfinished > rooms_shown)
    out += "\n  ... and " + std::to_string(rooms_unfinished - rooms_shown) + " more unfinished rooms";
  out += "\n  each user sends " + std::to_string(o.count) + " and receives " +
         std::to_string(c.expected_received_per_user) + " (token ring: one message in flight per room)";
  out += "\n  server (pid " + std::to_string(c.server_pid) + "): " + describe_threads(c.server_pid);
  out += "\n  client (pid " + std::to_string(getpid()) + "): " + describe_threads(getpid());
  int connections = 0;
  std::string queued;
  for (const auto& t : parse_tcp_table(read_proc("/proc/net/tcp").value_or(""))) {
    if (t.local_port != static_cast<unsigned>(c.port) && t.remote_port != static_cast<unsigned>(c.port)) continue;
    if (t.state == 10) continue;  // the listening socket
    ++connections;
    if (t.tx_queue == 0 && t.rx_queue == 0 && t.state == 1) continue;
    queued += "\n    " + std::to_string(t.local_port) + " -> " + std::to_string(t.remote_port) + " " +
              tcp_state_name(t.state) + ", unacknowledged " + std::to_string(t.tx_queue) + " B, unread " +
              std::to_string(t.rx_queue) + " B";
  }
  out += "\n  TCP port " + std::to_string(c.port) + ": " + std::to_string(connections) + " connection ends" +
         (queued.empty() ? ", all established with nothing queued" : ", these not idle:" + queued);
  return out;
}

// Ends the client process with an error report. The connection threads still use the Client,
// so it must not be unwound: the report is written and the process exits where it stands.
[[noreturn]] void fail_now(int report_fd, const std::string& message, bool stalled = false) {
  nlohmann::json report = {{"error", message}};
  if (stalled) report["stalled"] = true;
  write_packet(report_fd, report.dump() + "\n");
  _exit(1);
}

// Waits until done(), checking every second that some packet arrived within the stall limit;
// a stall ends the process with stall_report.
template <class Done>
void wait_for_progress(Client& c, std::unique_lock<std::mutex>& lock, Done done, const char* phase, int report_fd) {
  const auto stall_ns = static_cast<uint64_t>(std::max(c.options.stall_s, 0.1) * 1e9);
  while (!c.cv.wait_for(lock, std::chrono::seconds(1), done)) {
    const uint64_t last = c.progress_ns.load(std::memory_order_relaxed);
    const uint64_t now = now_ns();
    if (now > last && now - last > stall_ns) {
      lock.unlock();
      fail_now(report_fd, stall_report(c, phase), true);
    }
  }
}

int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error("socket failed: " + std::string(strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  while (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    close(fd);
    throw Error("connect to 127.0.0.1:" + std::to_string(port) + " failed: " + strerror(e));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

long long switches() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_nvcsw + r.ru_nivcsw;
}

}  // namespace

int run_client(int port, int server_pid, const ChatOptions& o, int report_fd) {
  using nlohmann::json;
  unsigned long long cookie = 0;
  if (o.coresched) {
    if (int err = coresched_share_from(server_pid)) throw Error(coresched_error(err));
    cookie = coresched_cookie(0);
  }
  Client c;
  c.options = o;
  c.server_pid = server_pid;
  c.port = port;
  c.progress_ns = now_ns();
  c.expected_received_per_user = static_cast<long long>(o.count) * (o.users - 1);
  const size_t stack = o.stack_kib * 1024;
  // Join one user at a time: connect, start its threads, enter the room, wait for the confirm.
  for (int r = 0; r < o.rooms; ++r)
    for (int i = 0; i < o.users; ++i) {
      auto u = std::make_unique<User>();
      u->client = &c;
      u->room = r;
      u->index = i;
      char name[32];
      std::snprintf(name, sizeof name, "room-%03d", r);
      u->room_name = name;
      std::snprintf(name, sizeof name, "user-%03d", i);
      u->user_name = name;
      User* up = u.get();
      c.users.push_back(std::move(u));
      try {  // earlier users' threads use c: no unwinding past it
        up->fd = connect_to(port);
        start_thread(stack, [up] { up->queue.run_sender(up->fd, yields_tx(up->client->options.yield)); });
        start_thread(stack, [up] { receive_loop(*up); });
      } catch (const std::exception& e) {
        fail_now(report_fd, e.what());
      }
      std::string enter;
      put_str(enter, up->room_name);
      put_str(enter, up->user_name);
      up->queue.push(std::make_shared<const std::string>(frame(kEnter, enter)));
      std::unique_lock lock(c.m);
      const int want = static_cast<int>(c.users.size());
      wait_for_progress(c, lock, [&] { return c.joined >= want || c.closed > 0; }, "users were joining", report_fd);
      if (c.closed > 0) fail_now(report_fd, "the server closed a connection while users were joining");
    }

  // Start gate: everyone is in. Observe the thread counts, then user 0 of every room starts.
  const int client_tasks = count_tasks(getpid());
  const int server_tasks = count_tasks(server_pid);
  const long long cs0 = switches();
  const uint64_t start = now_ns();
  c.progress_ns = start;
  for (auto& u : c.users)
    if (u->index == 0) {
      std::lock_guard lock(u->m);
      take_turn(*u);
    }
  {
    std::unique_lock lock(c.m);
    wait_for_progress(c, lock, [&] { return c.closed == c.users.size(); }, "users were chatting", report_fd);
  }
  const long long cs1 = switches();
  LatencyHistogram all;
  long long sent = 0, received = 0;
  for (auto& u : c.users) {
    std::lock_guard lock(u->m);
    sent += u->sent;
    received += u->received;
    all.merge(u->latency);
  }
  json report = {{"sent", sent},
                 {"received", received},
                 {"elapsed_s", static_cast<double>(c.end_ns - start) / 1e9},
                 {"p50_ns", all.percentile_ns(50)},
                 {"p90_ns", all.percentile_ns(90)},
                 {"p99_ns", all.percentile_ns(99)},
                 {"max_ns", all.max_ns()},
                 {"cs", cs1 - cs0},
                 {"client_tasks", client_tasks},
                 {"server_tasks", server_tasks},
                 {"cookie", cookie}};
  write_packet(report_fd, report.dump() + "\n");
  return 0;
}

}  // namespace smtlab::bench::chat
