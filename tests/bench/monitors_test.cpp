#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "bench/monitors.hpp"
#include "bench/procfs.hpp"
#include "bench/topology.hpp"
#include "scratch.hpp"

using namespace smtlab::bench;
namespace fs = std::filesystem;

namespace {
void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}
}  // namespace

TEST_CASE("vmstat sampler produces one row per interval with every column") {
  std::mutex m;
  std::vector<std::pair<double, nlohmann::json>> rows;
  VmstatSampler s(0.1, [&](double t, const nlohmann::json& v) {
    std::lock_guard lock(m);
    rows.emplace_back(t, v);
  });
  const auto started = std::chrono::steady_clock::now();
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(650));
  s.stop();
  const double ran_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::lock_guard lock(m);
  // A loaded host (the suite's guests) may wake the sampler late; it then skips ahead rather
  // than bursting. So: at most one row per interval, never two closer than one, none after stop.
  CHECK(rows.size() >= 2);
  CHECK(static_cast<double>(rows.size()) <= ran_s / 0.1);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (const char* col : {"r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi", "bo", "in", "cs", "us", "sy",
                            "id", "wa", "st"})
      CHECK(rows[i].second.contains(col));
    CHECK(rows[i].second["free"].get<double>() > 0);
    CHECK(rows[i].first >= 0.1 * static_cast<double>(i + 1) - 0.01);
    if (i > 0) CHECK(rows[i].first - rows[i - 1].first >= 0.09);
  }
  CHECK(rows.back().first <= ran_s);
  CHECK(rows.back().second["cs"].get<double>() > 0);
  CHECK(s.rows() == rows.size());
}

TEST_CASE("vmstat rows are rates and percentages of the interval") {
  VmstatSnapshot a, b;
  a.when = std::chrono::steady_clock::now();
  b.when = a.when + std::chrono::seconds(2);
  a.stat = parse_proc_stat("cpu 100 0 50 800 50 0 0 0 0 0\nctxt 1000\nintr 500 1 2\nprocs_running 3\nprocs_blocked 0\n");
  b.stat = parse_proc_stat("cpu 200 0 150 900 50 0 0 0 0 0\nctxt 5000\nintr 900 1 2\nprocs_running 7\nprocs_blocked 1\n");
  b.meminfo = parse_key_values("MemFree:  1000 kB\nBuffers: 10 kB\nCached: 100 kB\nSReclaimable: 5 kB\n"
                               "SwapTotal: 50 kB\nSwapFree: 20 kB\n");
  a.vmstat = parse_key_values("pgpgin 100\npgpgout 0\n");
  b.vmstat = parse_key_values("pgpgin 300\npgpgout 0\n");
  auto r = vmstat_row(a, b);
  CHECK(r["r"] == 7);
  CHECK(r["b"] == 1);
  CHECK(r["cs"].get<double>() == Approx(2000));
  CHECK(r["in"].get<double>() == Approx(200));
  CHECK(r["bi"].get<double>() == Approx(100));
  CHECK(r["us"].get<double>() == Approx(100.0 / 3));
  CHECK(r["sy"].get<double>() == Approx(100.0 / 3));
  CHECK(r["id"].get<double>() == Approx(100.0 / 3));
  CHECK(r["free"] == 1000);
  CHECK(r["cache"] == 105);
  CHECK(r["swpd"] == 30);
}

TEST_CASE("schedstat and per-CPU busy snapshots parse a proc tree") {
  auto root = smtlab::test::scratch_dir("proc");
  put(root / "schedstat", "version 15\ntimestamp 4295\ncpu0 0 0 0 0 0 0 1000 200 30\ndomain0 3 1 2\ncpu1 0 0 0 0 0 0 5 6 7\n");
  put(root / "stat", "cpu 10 0 10 80 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0\ncpu1 5 0 5 40 0 0 0 0\n");
  auto s = schedstat_snapshot(root);
  CHECK(s["version"] == 15);
  REQUIRE(s["cpus"].size() == 2);
  CHECK(s["cpus"][0]["running_ns"] == 1000);
  CHECK(s["cpus"][0]["waiting_ns"] == 200);
  CHECK(s["cpus"][1]["timeslices"] == 7);
  CHECK(schedstat_snapshot((root / "nothing").string()).is_null());
  CpuBusy busy(root);
  busy.begin();
  put(root / "stat", "cpu 30 0 10 100 0 0 0 0\ncpu0 25 0 5 40 0 0 0 0\ncpu1 5 0 5 60 0 0 0 0\n");
  auto b = busy.end();
  REQUIRE(b["cpus"].size() == 2);
  CHECK(b["cpus"][0]["busy_pct"].get<double>() == Approx(100));
  CHECK(b["cpus"][1]["busy_pct"].get<double>() == Approx(0));
  CHECK(b["all_pct"].get<double>() == Approx(50));
}

TEST_CASE("topology lists online CPUs only and tolerates missing files") {
  auto root = smtlab::test::scratch_dir("cpu");
  put(root / "online", "0-1,3\n");
  for (int c : {0, 1, 3}) {
    auto t = root / ("cpu" + std::to_string(c)) / "topology";
    put(t / "core_id", std::to_string(c / 2) + "\n");
    put(t / "physical_package_id", "0\n");
    put(t / "thread_siblings_list", c < 2 ? "0-1\n" : "2-3\n");
    if (c != 3) put(t / "die_id", "0\n");
  }
  put(root / "cpu2" / "online", "0\n");  // offline: no topology/
  auto r = topology_report(root);
  CHECK(r["online"] == "0-1,3");
  CHECK(r["smt_active"].is_null());
  REQUIRE(r["cpus"].size() == 3);
  CHECK(r["cpus"][2]["cpu"] == 3);
  CHECK(r["cpus"][2]["siblings"] == "2-3");
  CHECK(r["cpus"][2]["die_id"].is_null());
  CHECK(r["cpus"][1]["core_id"] == 0);
  put(root / "smt" / "active", "1\n");
  CHECK(topology_report(root)["smt_active"] == 1);
}

TEST_CASE("/proc/net/tcp rows give ports, state and queued bytes, and malformed rows are skipped") {
  const std::string text =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0\n"
      "   1: 0100007F:1F40 0100007F:9C4A 01 00000000:0000003F 00:00000000 00000000     0        0 2 1 0\n"
      "   2: 0100007F:9C4A 0100007F:1F40 08 00000041:00000000 00:00000000 00000000     0        0 3 1 0\n"
      "   3: 0100007F:ZZZZ 0100007F:1F40 01 00000000:00000000\n"
      "garbage\n";
  auto rows = parse_tcp_table(text);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].local_port == 8000);
  CHECK(std::string(tcp_state_name(rows[0].state)) == "LISTEN");
  CHECK(rows[1].remote_port == 40010);
  CHECK(rows[1].rx_queue == 63);
  CHECK(std::string(tcp_state_name(rows[1].state)) == "ESTABLISHED");
  CHECK(rows[2].tx_queue == 65);
  CHECK(std::string(tcp_state_name(rows[2].state)) == "CLOSE_WAIT");
  CHECK(std::string(tcp_state_name(42)) == "?");
}

TEST_CASE("a process's threads are described by state and wait channel") {
  const std::string self = describe_threads(getpid());
  INFO(self);
  CHECK(self.rfind("1 thread: 1 R", 0) == 0);  // this test's only thread, reading its own /proc
  CHECK(describe_threads(getpid(), "/nonexistent") == "gone");
}
