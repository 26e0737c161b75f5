#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "bench/chat.hpp"
#include "bench/latency.hpp"
#include "util/error.hpp"

using namespace smtlab::bench;

TEST_CASE("chat: 2 rooms x 20 users x 100 messages delivers every message to 19 others") {
  ChatOptions o;
  o.rooms = 2;
  o.users = 20;
  o.count = 100;
  o.port = 0;
  o.timeout_s = 60;
  ChatResult r = run_chat(o);
  CHECK(r.sent == 2 * 20 * 100);
  CHECK(r.received == r.sent * 19);
  CHECK(r.connection_threads == 4 * 2 * 20);  // receiver + sender per connection, both sides
  CHECK(r.msgs_per_s > 0);
  CHECK(r.elapsed_s > 0);
  CHECK(r.latency_p50_us > 0);
  CHECK(r.latency_p50_us <= r.latency_p90_us);
  CHECK(r.latency_p90_us <= r.latency_p99_us);
  CHECK(r.latency_p99_us <= r.latency_max_us);
  CHECK(r.context_switches > 0);
  CHECK(r.cs_per_msg > 0);
  CHECK(r.yield == "both");
}

TEST_CASE("chat: every yield mode completes a small run") {
  for (auto mode : {YieldMode::none, YieldMode::rx, YieldMode::tx}) {
    ChatOptions o;
    o.rooms = 3;
    o.users = 2;
    o.count = 20;
    o.port = 0;
    o.yield = mode;
    o.timeout_s = 30;
    ChatResult r = run_chat(o);
    CHECK(r.received == r.sent);
    CHECK(r.sent == 3 * 2 * 20);
    CHECK(r.yield == to_string(mode));
  }
}

TEST_CASE("chat: bad parameters and a busy port are refused with a clear error") {
  ChatOptions o;
  o.users = 1;
  CHECK_THROWS_AS(run_chat(o), smtlab::Error);
  CHECK_THROWS_AS(parse_yield_mode("sometimes"), smtlab::Error);
}

TEST_CASE("chat: a run whose server freezes fails after the stall limit, saying where each user stood") {
  ChatOptions o;
  o.rooms = 1;
  o.users = 3;
  o.count = 10000000;  // far longer than the test
  o.port = 0;
  o.stall_s = 2;
  o.timeout_s = 120;
  int server_pid = 0;
  o.on_started = [&](int server, int client) {
    CHECK(server > 0);
    CHECK(client > 0);
    CHECK(server != client);
    server_pid = server;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // well into the chatting
    kill(server, SIGSTOP);
  };
  std::string message;
  bool stalled = false;  // a stall is told apart from other failures (under TCG the cell runs again)
  try {
    run_chat(o);
  } catch (const StalledError& e) {
    message = e.what();
    stalled = true;
  } catch (const smtlab::Error& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE(server_pid > 0);
  CHECK(stalled);
  CHECK(message.find("chat client: the run stalled while users were chatting: nothing arrived for 2 s") == 0);
  CHECK(message.find("room-000: user-000 sent ") != std::string::npos);
  CHECK(message.find("; user-002 sent ") != std::string::npos);
  CHECK(message.find("each user sends 10000000 and receives 20000000") != std::string::npos);
  // The frozen server's threads (a main thread and two per connection) are all stopped.
  CHECK(message.find("server (pid " + std::to_string(server_pid) + "): 7 threads: 7 T") != std::string::npos);
  CHECK(message.find("client (pid ") != std::string::npos);
  CHECK(message.find("TCP port ") != std::string::npos);
  CHECK(kill(server_pid, 0) != 0);  // killed and reaped, stopped or not
}

TEST_CASE("chat: a run whose counts are off is refused") {
  ChatOptions o;
  o.rooms = 2;
  o.users = 5;
  o.count = 10;
  CHECK_NOTHROW(check_chat_counts(o, 100, 400, 400));
  CHECK_THROWS_WITH(check_chat_counts(o, 99, 400), Catch::Contains("invalid run"));
  CHECK_THROWS_WITH(check_chat_counts(o, 100, 399), Catch::Contains("expected 400"));
  CHECK_THROWS_WITH(check_chat_counts(o, 100, 400, 398), Catch::Contains("forwarded 398"));
}

TEST_CASE("latency histogram percentiles are within its resolution") {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.add(v * 1000);  // 1 us .. 100 ms, uniform
  CHECK(h.count() == 100000);
  CHECK(h.percentile_ns(50) == Approx(50e6).epsilon(0.02));
  CHECK(h.percentile_ns(90) == Approx(90e6).epsilon(0.02));
  CHECK(h.percentile_ns(99) == Approx(99e6).epsilon(0.02));
  LatencyHistogram g;
  g.add(5);
  h.merge(g);
  CHECK(h.count() == 100001);
  CHECK(LatencyHistogram().percentile_ns(50) == 0);
}
