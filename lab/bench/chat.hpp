#pragma once
// The chat benchmark: a clean-room re-implementation of VolanoMark's behaviour (see
// /work/shared/reference/benchmarks.md). A chat server and a client run as two processes over
// TCP loopback, with one receiver and one sender thread per connection on both sides (4 threads
// per user), room broadcast, token-ring turn taking and a switchable sched_yield.
#include <functional>
#include <string>

#include "util/error.hpp"

namespace smtlab::bench {

enum class YieldMode { both, rx, tx, none };
YieldMode parse_yield_mode(const std::string& s);  // throws smtlab::Error on anything else
const char* to_string(YieldMode m);

struct ChatOptions {
  int rooms = 10;
  int users = 20;   // per room, >= 2
  int count = 100;  // messages each user sends
  YieldMode yield = YieldMode::both;
  int port = 8000;  // 0: any free port
  bool coresched = false;       // server and client share one new core-sched cookie
  size_t stack_kib = 64;        // per connection thread
  double timeout_s = 3600;      // the run is killed and refused past this
  // No chat message (or enter confirm) arrived anywhere for this long: the run has stalled and
  // fails at once, saying where every user stood and what both sides' threads and sockets were doing.
  double stall_s = 60;
  // Called in the calling process once both sides are running (observers, tests).
  std::function<void(int server_pid, int client_pid)> on_started;
};

// A run that stopped making progress (ChatOptions::stall_s): the workload, or the machine under
// it, stalled; the message says where every user stood.
class StalledError : public Error {
 public:
  using Error::Error;
};

struct ChatResult {
  int rooms = 0, users = 0, count = 0;
  std::string yield;
  int port = 0;
  long long sent = 0, received = 0;  // chat messages, summed over users
  double elapsed_s = 0;              // start gate to the last connection closed
  double msgs_per_s = 0;             // (sent + received) / elapsed
  double latency_p50_us = 0, latency_p90_us = 0, latency_p99_us = 0, latency_max_us = 0;
  long long context_switches = 0;    // server + client, voluntary + involuntary, timed window
  double cs_per_msg = 0;             // context_switches / (sent + received)
  int client_threads = 0, server_threads = 0;  // tasks seen at the start gate, main threads included
  int connection_threads = 0;        // both sides, main threads excluded: 4 x rooms x users
  unsigned long long server_cookie = 0, client_cookie = 0;  // coresched only
};

// Runs one chat benchmark; throws smtlab::Error when it cannot run, times out, or when the counts
// differ from sent = rooms*users*count and received = sent*(users-1) (an invalid run).
ChatResult run_chat(const ChatOptions& options);

// Throws smtlab::Error unless sent == rooms*users*count and received == sent*(users-1) (and the
// server forwarded exactly `received`; pass forwarded < 0 to skip that check).
void check_chat_counts(const ChatOptions& options, long long sent, long long received, long long forwarded = -1);

// A multi-line human summary.
std::string describe(const ChatResult& r);

}  // namespace smtlab::bench
