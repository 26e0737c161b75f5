// The host CPU account of a benchmark: who used the host's CPUs while it ran.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <thread>

#include "run/host_cpu.hpp"

using namespace smtlab::run;

TEST_CASE("utime + stime from /proc/<pid>/stat, whatever the command name holds", "[host_cpu]") {
  // Fields 14 and 15 (utime 1234, stime 56); the name has spaces and a ')' of its own.
  const std::string line =
      "4242 (qemu) (x 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 7 0 99 1000 50 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  CHECK(process_cpu_ticks(line) == 1290u);
  CHECK_FALSE(process_cpu_ticks("4242 (qemu) S 1 2 3"));                     // cut short
  CHECK_FALSE(process_cpu_ticks("4242 qemu S 1 4242 4242 0 -1 4 1 0 0 0 5 6"));  // no ')'
  CHECK_FALSE(process_cpu_ticks("1 (a) S 1 1 1 0 -1 4 1 0 0 0 5x 6 0"));      // not a number
}

TEST_CASE("the share of the host: guests, smtlab, others and steal", "[host_cpu]") {
  HostCpuSample a{1000, 200, 10, 100, 5, ""};
  SECTION("a host given to the guests: not disturbed") {
    HostCpuSample b{2000, 1150, 10, 1050, 15, ""};  // over 1000 ticks: busy 95 %, all of it the guests
    auto s = host_cpu_share(a, b);
    REQUIRE(s);
    CHECK(s->busy_pct == Approx(95));
    CHECK(s->guests_pct == Approx(95));
    CHECK(s->smtlab_pct == Approx(0));  // capped: what the guests used leaves nothing
    CHECK(s->other_pct == Approx(0));
    CHECK_FALSE(host_disturbance(*s));
  }
  SECTION("another process took a quarter of the host") {
    HostCpuSample b{2000, 1190, 10, 900, 15, ""};  // busy 99 %, guests 80 %, smtlab 1 %, other 18 %
    auto s = host_cpu_share(a, b);
    REQUIRE(s);
    CHECK(s->other_pct == Approx(18));
    auto d = host_disturbance(*s);
    REQUIRE(d);
    CHECK(*d == "host: other processes used 18 % of the host CPUs while the benchmark ran (the guests 80 %, "
                "smtlab 1 %)");
    auto j = to_json(*s);
    CHECK(j["other_pct"] == 18.0);
    CHECK(j["guests_pct"] == 80.0);
  }
  SECTION("the hypervisor under the host took time (steal)") {
    HostCpuSample b{2000, 1000, 110, 880, 5, ""};  // 10 % steal
    auto s = host_cpu_share(a, b);
    REQUIRE(s);
    CHECK(s->steal_pct == Approx(10));
    auto d = host_disturbance(*s);
    REQUIRE(d);
    CHECK(d->find("took 10 % of its CPU time (steal)") != std::string::npos);
  }
  SECTION("no time passed, or counters that went backwards: no account") {
    CHECK_FALSE(host_cpu_share(a, a));
    HostCpuSample b{2000, 100, 10, 100, 5, ""};
    CHECK_FALSE(host_cpu_share(a, b));
  }
}

TEST_CASE("sampling this host: this process's own CPU time is counted as smtlab's", "[host_cpu]") {
  auto a = sample_host_cpu({});
  REQUIRE(a);
  // Burn about 0.3 s of CPU in this process.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  volatile unsigned long spin = 0;
  while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  auto b = sample_host_cpu({static_cast<int>(getpid())});  // and as a "guest" pid too
  REQUIRE(b);
  CHECK(b->self > a->self);
  CHECK(b->guests > 0);
  CHECK(b->total > a->total);
  auto s = host_cpu_share(*a, *b);
  REQUIRE(s);
  CHECK(s->busy_pct > 0);
}

TEST_CASE("a share of some host CPUs (guests confined to them) says which, and never mixes with another", "[host_cpu]") {
  HostCpuSample a{1000, 200, 10, 100, 5, "1"};
  HostCpuSample b{2000, 1190, 10, 900, 15, "1"};
  auto s = host_cpu_share(a, b);
  REQUIRE(s);
  CHECK(s->cpus == "1");
  auto d = host_disturbance(*s);
  REQUIRE(d);
  CHECK(d->find("other processes used 18 % of host CPUs 1 while") != std::string::npos);
  CHECK(to_json(*s)["cpus"] == "1");
  CHECK_FALSE(to_json(*host_cpu_share({1000, 200, 10, 100, 5, ""}, {2000, 1190, 10, 900, 15, ""})).contains("cpus"));
  // Samples of different CPU sets (or one of the whole host) are no account.
  HostCpuSample whole{2000, 1190, 10, 900, 15, ""};
  CHECK_FALSE(host_cpu_share(a, whole));
}

TEST_CASE("sampling host CPU 0 alone: its ticks only, fewer than the whole host's on a bigger host", "[host_cpu]") {
  auto all = sample_host_cpu({});
  auto cpu0 = sample_host_cpu({}, {0});
  REQUIRE(all);
  REQUIRE(cpu0);
  CHECK(cpu0->cpus == "0");
  CHECK(all->cpus.empty());
  CHECK(cpu0->total > 0);
  if (std::thread::hardware_concurrency() > 1) CHECK(cpu0->total < all->total);
  // A CPU this host does not have: no sample rather than a wrong one.
  CHECK_FALSE(sample_host_cpu({}, {100000}));
}
