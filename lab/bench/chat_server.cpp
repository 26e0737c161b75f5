// The chat server: accepts rooms x users connections, one receiver and one sender thread each.
// A chat is handled entirely in the receiver thread of the sender's connection: copy the room's
// member list under the room lock, enqueue the message on every other member's queue, then a
// short confirm on the sender's own queue.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "bench/chat_wire.hpp"
#include "bench/coresched.hpp"
#include "util/error.hpp"

namespace smtlab::bench::chat {

namespace {

struct Conn;

struct Room {
  std::mutex m;
  std::vector<std::shared_ptr<Conn>> members;
};

struct Conn {
  int fd = -1;
  SendQueue queue;
  Room* room = nullptr;
  ~Conn() {
    if (fd >= 0) ::close(fd);
  }
};

struct Server {
  ChatOptions options;
  std::mutex rooms_m;
  std::map<std::string, std::unique_ptr<Room>> rooms;
  std::atomic<long long> forwarded{0};
  std::mutex state_m;
  std::condition_variable state_cv;
  size_t entered = 0, finished = 0;
  rusage at_gate{};

  Room* room(std::string_view name) {
    std::lock_guard lock(rooms_m);
    auto& r = rooms[std::string(name)];
    if (!r) r = std::make_unique<Room>();
    return r.get();
  }
};

long long switches(const rusage& r) { return r.ru_nvcsw + r.ru_nivcsw; }

void receive_loop(Server& s, const std::shared_ptr<Conn>& c) {
  Reader reader(c->fd);
  uint8_t type;
  std::string_view payload;
  const bool yield = yields_rx(s.options.yield);
  while (reader.next(type, payload)) {
    if (type == kEnter) {
      Fields f(payload);
      auto room = f.str();
      auto user = f.str();
      if (!f.ok() || c->room) break;  // protocol violation: drop the connection
      c->room = s.room(room);
      {
        std::lock_guard lock(c->room->m);
        c->room->members.push_back(c);
      }
      std::string ok;
      put_str(ok, room);
      put_str(ok, user);
      c->queue.push(std::make_shared<const std::string>(frame(kEnterOk, ok)));
      std::lock_guard lock(s.state_m);
      if (++s.entered == static_cast<size_t>(s.options.rooms) * s.options.users) getrusage(RUSAGE_SELF, &s.at_gate);
    } else if (type == kChat && c->room) {
      Fields f(payload);
      auto room = f.str();
      auto user = f.str();
      if (!f.ok()) break;
      // Forward the packet as received (the same bytes, re-framed).
      auto msg = std::make_shared<const std::string>(frame(kChat, std::string(payload)));
      std::vector<std::shared_ptr<Conn>> members;
      {
        std::lock_guard lock(c->room->m);
        members = c->room->members;
      }
      long long n = 0;
      for (auto& m : members)
        if (m != c) {
          m->queue.push(msg);
          ++n;
        }
      s.forwarded += n;
      std::string confirm;
      put_str(confirm, room);
      put_str(confirm, user);
      confirm.append(2, '\0');
      c->queue.push(std::make_shared<const std::string>(frame(kConfirm, confirm)));
    } else {
      break;  // unknown packet
    }
    if (yield) sched_yield();
  }
  // Leaving: out of the room, then let the sender drain and close.
  if (c->room) {
    std::lock_guard lock(c->room->m);
    auto& v = c->room->members;
    for (auto it = v.begin(); it != v.end(); ++it)
      if (*it == c) {
        v.erase(it);
        break;
      }
  }
  c->queue.close();
}

}  // namespace

int run_server(int listen_fd, const ChatOptions& options, int report_fd) {
  using nlohmann::json;
  unsigned long long cookie = 0;
  if (options.coresched) {
    if (int err = coresched_create_self()) throw Error(coresched_error(err));
    cookie = coresched_cookie(0);
  }
  write_packet(report_fd, json{{"ready", true}, {"cookie", cookie}}.dump() + "\n");

  Server s;
  s.options = options;
  const size_t total = static_cast<size_t>(options.rooms) * options.users;
  const size_t stack = options.stack_kib * 1024;
  for (size_t accepted = 0; accepted < total;) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      throw Error("accept failed: " + std::string(strerror(errno)));
    }
    ++accepted;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_shared<Conn>();
    c->fd = fd;
    start_thread(stack, [&s, c] {
      c->queue.run_sender(c->fd, yields_tx(s.options.yield));
      std::lock_guard lock(s.state_m);
      ++s.finished;
      s.state_cv.notify_all();
    });
    start_thread(stack, [&s, c] { receive_loop(s, c); });
  }
  close(listen_fd);
  {
    std::unique_lock lock(s.state_m);
    s.state_cv.wait(lock, [&] { return s.finished == total; });
  }
  rusage end{};
  getrusage(RUSAGE_SELF, &end);
  write_packet(report_fd, json{{"cs", switches(end) - switches(s.at_gate)}, {"forwarded", s.forwarded.load()}}.dump() + "\n");
  return 0;
}

}  // namespace smtlab::bench::chat
