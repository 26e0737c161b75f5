#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "bench/settle.hpp"
#include "scratch.hpp"

using namespace smtlab::bench;
namespace fs = std::filesystem;

namespace {
// A /proc/stat snapshot with two CPUs given as cumulative (busy, idle) jiffies.
ProcStat snapshot(uint64_t busy0, uint64_t idle0, uint64_t busy1, uint64_t idle1) {
  std::string text = "cpu  0 0 0 0 0 0 0 0 0 0\n";
  text += "cpu0 " + std::to_string(busy0) + " 0 0 " + std::to_string(idle0) + " 0 0 0 0 0 0\n";
  text += "cpu1 0 0 " + std::to_string(busy1) + " " + std::to_string(idle1) + " 0 0 0 0 0 0\n";
  return parse_proc_stat(text);
}
}  // namespace

TEST_CASE("quiet detector: one busy CPU keeps the guest from counting as quiet") {
  SettleOptions o;
  o.busy_below_pct = 10;
  o.quiet_windows = 2;
  QuietDetector d(o);
  CHECK_FALSE(d.feed(snapshot(0, 0, 0, 0)).has_value());  // the first snapshot has no window
  // CPU 0 busy 80 % (the RCU frees after a cache drop look like this), CPU 1 idle.
  auto w1 = d.feed(snapshot(80, 20, 0, 100));
  REQUIRE(w1.has_value());
  CHECK(*w1 == Approx(80));
  CHECK_FALSE(d.quiet());
  // Both quiet for one window: not yet (two in a row are asked for).
  CHECK(*d.feed(snapshot(82, 118, 1, 199)) == Approx(2));
  CHECK_FALSE(d.quiet());
  // Busy again resets the count.
  CHECK(*d.feed(snapshot(132, 168, 1, 299)) == Approx(50));
  CHECK_FALSE(d.quiet());
  CHECK(*d.feed(snapshot(133, 267, 2, 398)) == Approx(1));
  CHECK_FALSE(d.quiet());
  CHECK(*d.feed(snapshot(134, 366, 3, 497)) == Approx(1));
  CHECK(d.quiet());
}

TEST_CASE("quiet detector: a window without ticks says nothing") {
  QuietDetector d(SettleOptions{});
  d.feed(snapshot(10, 10, 10, 10));
  CHECK_FALSE(d.feed(snapshot(10, 10, 10, 10)).has_value());
  CHECK_FALSE(d.quiet());
}

TEST_CASE("wait_until_quiet returns at once on an idle machine and gives up at its limit on a busy one") {
  const fs::path dir = smtlab::test::scratch_dir("settle");
  SettleOptions o;
  o.proc = dir.string();
  o.window = std::chrono::milliseconds(20);
  o.limit = std::chrono::milliseconds(300);

  // A /proc/stat that never changes: no window has ticks, so the wait runs to its limit.
  std::ofstream(dir / "stat") << "cpu  1 0 0 1 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\n";
  auto frozen = wait_until_quiet(o);
  CHECK_FALSE(frozen.settled);
  CHECK(frozen.waited_s >= 0.3);
  CHECK(frozen.waited_s < 2.0);
  CHECK(frozen.busiest_cpu_pct.empty());

  // No /proc/stat at all: nothing to wait for.
  fs::remove(dir / "stat");
  auto none = wait_until_quiet(o);
  CHECK_FALSE(none.settled);
  CHECK(none.waited_s < 0.3);
}

TEST_CASE("wait_until_quiet on this machine's /proc/stat reports every window it measured") {
  SettleOptions o;
  o.busy_below_pct = 101;  // any window counts as quiet: the test machine may be busy
  o.window = std::chrono::milliseconds(30);
  auto r = wait_until_quiet(o);
  CHECK(r.settled);
  CHECK(r.busiest_cpu_pct.size() == 2);
  for (double pct : r.busiest_cpu_pct) {
    CHECK(pct >= 0);
    CHECK(pct <= 100);
  }
}
