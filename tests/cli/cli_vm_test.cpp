// End to end through the smtlab command: real Debian kernels booted through libvirt's embedded
// driver (TCG here), the topology the guests report, teardown on signals and kills, failed
// cells, --resume, and shards merged.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "util/files.hpp"
#include "util/paths.hpp"

using namespace smtlab::test;
using namespace std::chrono_literals;

namespace {

std::set<std::string> cell_ids(const std::filesystem::path& dir) {
  std::set<std::string> ids;
  auto manifest = read_json(dir / "manifest.json");  // kept alive: the loop iterates into it
  for (const auto& c : manifest["cells"]) ids.insert(c["id"].get<std::string>());
  return ids;
}

std::set<std::string> statuses(const std::filesystem::path& dir) {
  std::set<std::string> out;
  auto manifest = read_json(dir / "manifest.json");
  for (const auto& c : manifest["cells"]) out.insert(c["status"].get<std::string>());
  return out;
}

// The row labels of the comparison ("Amean     msgs/s", ...), numbers left out.
std::vector<std::string> row_labels(const std::string& table) {
  std::vector<std::string> rows;
  std::regex row(R"(^((Amean|Hmean|Stddev|Min|Max|CoeffVar|BAmean-95)\s+\S+))");
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows.push_back(m[1]);
  }
  return rows;
}

std::string tiny() { return test_recipe("tiny.yaml"); }

}  // namespace

TEST_CASE("boot: the Debian 6.12 guest runs a command and sees 2 sibling pairs with SMT active") {
  auto r = run_smtlab({"boot", tiny(), "--cell", "variant=eevdf", "--cell", "topology=smt", "--", "uname", "-r"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(std::regex_search(r.out, std::regex(R"(^6\.12\.\d+\S*-cloud-amd64\n$)")));
  CHECK(r.err.find("4 CPUs online, sibling groups [ 0-1  2-3 ], SMT active") != std::string::npos);
}

TEST_CASE("boot: the Debian 6.1 guest runs a command and sees 2 sibling pairs with SMT active") {
  auto r = run_smtlab({"boot", tiny(), "--cell", "variant=cfs", "--", "uname", "-r"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(std::regex_search(r.out, std::regex(R"(^6\.1\.0-\d+-cloud-amd64\n$)")));
  CHECK(r.err.find("4 CPUs online, sibling groups [ 0-1  2-3 ], SMT active") != std::string::npos);
}

TEST_CASE("boot: an smt-off topology shows no siblings and SMT inactive, and --keep keeps its logs under a kept name") {
  auto r = run_smtlab({"boot", tiny(), "--cell", "topology=nosmt", "--keep", "--", "cat", "/sys/devices/system/cpu/online"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == "0-1\n");
  CHECK(r.err.find("2 CPUs online, sibling groups [ 0  1 ], SMT inactive") != std::string::npos);
  // <cache>/boot/<cell>-<pid>: the kept name, which `smtlab cache gc` leaves alone until
  // --unused-days (<cell>.<pid> is the name while it runs, collected once its process is gone).
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m, std::regex(R"(console logs and streams kept in (\S+/boot/([0-9a-f]{12})-\d+)\n)")));
  const std::filesystem::path kept = m[1].str();
  CHECK(smtlab::read_file(kept / "console-vm0.log").find("Linux version") != std::string::npos);
  CHECK(smtlab::read_file(kept / "qemu-vm0.log").find("-name guest=smtlab-" + m[2].str() + "-vm0-") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(kept / "work"));  // overlays and initrds are gone
  std::filesystem::remove_all(kept);
}

TEST_CASE("boot: two guests of 4 vCPUs each share the 2 host CPUs and run a command at the same time") {
  auto r = run_smtlab({"boot", tiny(), "--cell", "topology=overcommit", "--", "sh", "-c", "nproc; sleep 3"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("[vm0] 4\n") != std::string::npos);
  CHECK(r.out.find("[vm1] 4\n") != std::string::npos);
  CHECK(qemu_processes("smtlab-56c35f284691").empty());
}

TEST_CASE("kill -9 of smtlab while a guest runs leaves no QEMU process 5 seconds later, and cache gc removes its files") {
  Background bg({"boot", tiny(), "--cell", "variant=eevdf", "--cell", "topology=smt", "--", "sleep", "600"});
  REQUIRE(bg.wait_for_err("agent ready", 300s));
  REQUIRE_FALSE(qemu_processes("smtlab-7922b7e0fa0f").empty());
  const auto boot_dir = smtlab::cache_dir() / "boot" / ("7922b7e0fa0f." + std::to_string(bg.pid()));
  CHECK(std::filesystem::exists(boot_dir / "work" / "vm0.qcow2"));  // the guest's overlay, while it runs
  kill(bg.pid(), SIGKILL);
  CHECK(bg.wait(10s) == 128 + SIGKILL);
  std::this_thread::sleep_for(5s);
  CHECK(qemu_processes("smtlab-7922b7e0fa0f").empty());
  // What the killed process left (console, overlay, initrd) goes with the next `cache gc`, whose
  // process is gone; no entry is old enough to go with it.
  REQUIRE(std::filesystem::exists(boot_dir));
  auto gc = run_smtlab({"cache", "gc", "--unused-days", "100000"}, 120s);
  INFO(gc.out << gc.err);
  CHECK(gc.status == 0);
  CHECK(gc.out.find("removed " + boot_dir.string() + "\n") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(boot_dir));
}

TEST_CASE("SIGINT tears the guests down and exits with status 130") {
  Background bg({"boot", tiny(), "--cell", "variant=eevdf", "--cell", "topology=smt", "--", "sleep", "600"});
  REQUIRE(bg.wait_for_err("agent ready", 300s));
  kill(bg.pid(), SIGINT);
  int status = bg.wait(60s);
  INFO(bg.err());
  CHECK(status == 130);
  CHECK(bg.err().find("interrupted") != std::string::npos);
  CHECK(qemu_processes("smtlab-7922b7e0fa0f").empty());
  // Without --keep nothing of the boot stays in the cache.
  CHECK_FALSE(std::filesystem::exists(smtlab::cache_dir() / "boot" / ("7922b7e0fa0f." + std::to_string(bg.pid()))));
  CHECK_FALSE(std::filesystem::exists(smtlab::cache_dir() / "boot" / ("7922b7e0fa0f-" + std::to_string(bg.pid()))));
}

TEST_CASE("a kernel that panics is a failed cell with the panic line, the run exits 4, and --retry-failed keeps that attempt") {
  auto dir = scratch_dir("panic");
  auto r = run_smtlab({"run", test_recipe("panic.yaml"), "-o", (dir / "run").string()});
  INFO(r.err);
  CHECK(r.status == 4);
  auto cell = read_json(dir / "run" / "manifest.json")["cells"][0];
  CHECK(cell["status"] == "failed");
  CHECK(cell["error"].get<std::string>().find("Kernel panic - not syncing") != std::string::npos);
  CHECK(cell["console_tail"].get<std::string>().find("Kernel panic") != std::string::npos);
  // A guest that fails before its agent is ready is booted once more (nothing was measured);
  // the first attempt is kept whole under attempts/ and named.
  const std::string id = cell["id"].get<std::string>();
  REQUIRE_FALSE(cell["notes"].empty());
  CHECK(cell["notes"][0].get<std::string>().find("boot attempt 1 failed before the agent was ready: VM 0: kernel panic") == 0);
  CHECK(cell["notes"][0].get<std::string>().find("(kept in attempts/" + id + "/1); booted again") != std::string::npos);
  REQUIRE(cell["attempts"].size() == 1);
  CHECK(cell["attempts"][0]["status"] == "failed");
  auto cell_dir = dir / "run" / "cells" / id;
  auto boot_attempt = dir / "run" / "attempts" / id / "1";
  CHECK(smtlab::read_file(boot_attempt / "console-vm0.log").find("Kernel panic") != std::string::npos);
  CHECK(smtlab::read_file(cell_dir / "console-vm0.log").find("Kernel panic") != std::string::npos);
  CHECK(qemu_processes("smtlab-a227fe4fbc08").empty());
  // With each attempt, QEMU's log from libvirt: the command line that ran, for a post-mortem.
  for (const auto& log : {cell_dir / "qemu-vm0.log", boot_attempt / "qemu-vm0.log"}) {
    INFO(log);
    CHECK(smtlab::read_file(log).find("-name guest=smtlab-a227fe4fbc08-vm0-") != std::string::npos);
  }

  // The run says how to try the failed cell again; doing so keeps the failed attempt whole.
  const std::string run_dir = (dir / "run").string();
  CHECK(r.err.find("-o " + run_dir + " --resume --retry-failed") != std::string::npos);
  auto plain = run_smtlab({"run", test_recipe("panic.yaml"), "-o", run_dir, "--retry-failed"});
  CHECK(plain.status == 2);
  CHECK(plain.err.find("--retry-failed requires --resume") != std::string::npos);
  auto again = run_smtlab({"run", test_recipe("panic.yaml"), "-o", run_dir, "--resume", "--retry-failed"});
  INFO(again.err);
  CHECK(again.status == 4);  // the kernel still panics
  CHECK(again.err.find("cell " + id + " failed before: that attempt is kept in " + run_dir + "/attempts/" + id + "/2") !=
        std::string::npos);
  auto retried = read_json(dir / "run" / "manifest.json")["cells"][0];
  CHECK(retried["status"] == "failed");
  // The first run's two boots, then the retry's first boot (booted again too).
  REQUIRE(retried["attempts"].size() == 3);
  CHECK(retried["attempts"][1]["dir"] == "attempts/" + id + "/2");
  CHECK(retried["attempts"][1]["error"] == cell["error"]);
  auto kept = dir / "run" / "attempts" / id / "2";
  CHECK(smtlab::read_file(kept / "console-vm0.log").find("Kernel panic") != std::string::npos);
  CHECK(read_json(kept / "entry.json")["console_tail"] == cell["console_tail"]);
  CHECK(smtlab::read_file(cell_dir / "console-vm0.log").find("Kernel panic") != std::string::npos);  // the new attempt
  CHECK(qemu_processes("smtlab-a227fe4fbc08").empty());

  // A reproduction ends like a run: its failed cell exits 4, with the command that retries it.
  const std::string reproduced = (dir / "reproduced").string();
  auto repro = run_smtlab({"reproduce", run_dir, "-o", reproduced});
  INFO(repro.err);
  CHECK(repro.status == 4);
  CHECK(read_json(dir / "reproduced" / "manifest.json")["cells"][0]["status"] == "failed");
  CHECK(repro.err.find("smtlab: run the failed cells again with: smtlab reproduce " + run_dir + " -o " + reproduced +
                       " --resume --retry-failed") != std::string::npos);
  CHECK(qemu_processes("smtlab-a227fe4fbc08").empty());
}

TEST_CASE("boot: a kernel that panics on both boots says each panic once, exits 1 and keeps both consoles") {
  auto r = run_smtlab({"boot", test_recipe("panic.yaml"), "--cell", "variant=no-init", "--", "true"});
  INFO(r.err);
  CHECK(r.status == 1);
  // The first boot's panic is said as it happens, not again at the end; the second is the error.
  const std::string first = "boot attempt 1 failed before the agent was ready: VM 0: kernel panic";
  const auto at = r.err.find(first);
  CHECK(at != std::string::npos);
  CHECK(r.err.find(first, at + 1) == std::string::npos);
  CHECK(r.err.find("smtlab: failed: VM 0: kernel panic") != std::string::npos);
  CHECK(r.err.find("console tail:") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m, std::regex(R"(console logs and streams kept in (\S+/boot/[0-9a-f]{12}-\d+)\n)")));
  const std::filesystem::path kept = m[1].str();
  CHECK(smtlab::read_file(kept / "console-vm0.log.attempt-1").find("Kernel panic") != std::string::npos);
  CHECK(smtlab::read_file(kept / "console-vm0.log").find("Kernel panic") != std::string::npos);
  std::filesystem::remove_all(kept);
  CHECK(qemu_processes("smtlab-a227fe4fbc08").empty());
}

TEST_CASE("an interrupted run finished with --resume has the same cells, finished ones not redone") {
  auto dir = scratch_dir("resume") / "run";
  Background bg({"run", tiny(), "--cells", "topology=smt", "-o", dir.string()});
  // Interrupt once the first cell is finished (the second is then booting or running).
  REQUIRE(bg.wait_for_err("cell 1/2", 60s));
  REQUIRE(bg.wait_for_err(": ok in", 600s));
  kill(bg.pid(), SIGINT);
  REQUIRE(bg.wait(120s) == 130);
  auto manifest = read_json(dir / "manifest.json");
  REQUIRE(manifest["cells"][0]["status"] == "ok");
  CHECK(manifest["cells"][1]["status"] == "pending");
  auto first = manifest["cells"][0]["id"].get<std::string>();
  auto samples_before = smtlab::read_file(dir / "cells" / first / "samples.jsonl");
  CHECK_FALSE(samples_before.empty());
  // A cell in a boot of its own has its host CPU account too (the guests' share counted).
  REQUIRE(manifest["cells"][0].contains("host_cpu"));
  CHECK(manifest["cells"][0]["host_cpu"]["guests_pct"].get<double>() > 5);

  // The hint repeats the filter: resuming without it would plan cells the run does not have.
  CHECK(bg.err().find("smtlab: interrupted; finish with: smtlab run " + tiny() + " --cells topology=smt -o " +
                      dir.string() + " --resume\n") != std::string::npos);
  auto r = run_smtlab({"run", tiny(), "--cells", "topology=smt", "-o", dir.string(), "--resume"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(statuses(dir) == std::set<std::string>{"ok"});
  CHECK(smtlab::read_file(dir / "cells" / first / "samples.jsonl") == samples_before);
  auto plan = run_smtlab({"plan", tiny(), "--cells", "topology=smt", "--json"});
  std::set<std::string> planned;
  auto plan_json = nlohmann::json::parse(plan.out);
  for (const auto& c : plan_json["cells"]) planned.insert(c["id"].get<std::string>());
  CHECK(cell_ids(dir) == planned);
  CHECK(r.out.find("Hmean     msgs/s") != std::string::npos);
}

TEST_CASE("shards 1/2 and 2/2, merged, give the cells and comparison rows of one unsharded run") {
  auto dir = scratch_dir("shards");
  std::vector<std::string> cells = {"--cells", "topology=smt"};
  auto run = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", tiny(), "-o", (dir / out).string(), "--no-compare"};
    args.insert(args.end(), cells.begin(), cells.end());
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_smtlab(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
  };
  run("whole", {});
  run("shard1", {"--shard", "1/2"});
  run("shard2", {"--shard", "2/2"});
  CHECK(cell_ids(dir / "shard1").size() == 1);
  auto merged = run_smtlab({"merge", (dir / "shard1").string(), (dir / "shard2").string(), "-o", (dir / "merged").string()});
  INFO(merged.err);
  REQUIRE(merged.status == 0);
  CHECK(cell_ids(dir / "merged") == cell_ids(dir / "whole"));
  CHECK(statuses(dir / "merged") == std::set<std::string>{"ok"});
  auto a = run_smtlab({"compare", (dir / "whole").string()});
  auto b = run_smtlab({"compare", (dir / "merged").string()});
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  CHECK_FALSE(row_labels(a.out).empty());
  CHECK(row_labels(a.out) == row_labels(b.out));
  // One shard alone cannot pass a gate: the other shard's cell was not measured.
  auto alone = run_smtlab({"compare", (dir / "shard1").string(), "--fail-on-regression", "50"});
  INFO(alone.err);
  CHECK(alone.status == 4);
  CHECK(alone.err.find("smtlab: not measured: shard1 shard 2/2: not in this directory, so its cells (" +
                       *cell_ids(dir / "shard2").begin() + ") were not measured") != std::string::npos);
}

TEST_CASE("two guests that both run the benchmark: pooled in one column, or with --per-vm a column each") {
  auto dir = scratch_dir("per-vm") / "run";
  auto r = run_smtlab({"run", tiny(), "--cells", "topology=overcommit", "-o", dir.string(), "--no-compare"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto msgs = [](const nlohmann::json& block) {
    std::map<std::string, size_t> n;  // column -> measured msgs/s samples
    for (const auto& m : block["metrics"])
      if (m["metric"] == "msgs/s")
        for (const auto& c : m["columns"]) n[c["column"].get<std::string>()] = c["n"].get<size_t>();
    return n;
  };
  auto pooled = run_smtlab({"compare", dir.string(), "--format", "json"});
  REQUIRE(pooled.status == 0);
  const auto pb = nlohmann::json::parse(pooled.out)["blocks"][0];
  CHECK(msgs(pb) == std::map<std::string, size_t>{{"eevdf-overcommit", 4}});  // 2 guests x 2 iterations

  auto split = run_smtlab({"compare", dir.string(), "--per-vm", "--format", "json"});
  REQUIRE(split.status == 0);
  const auto sb = nlohmann::json::parse(split.out)["blocks"][0];
  CHECK(msgs(sb) == std::map<std::string, size_t>{{"eevdf-overcommit/vm0", 2}, {"eevdf-overcommit/vm1", 2}});
  REQUIRE(sb["columns"].size() == 2);
  CHECK(sb["columns"][1]["vm"] == 1);
  // Each guest's run queue is either profiled or named as a gap (tiny's chat may end within its 1 s
  // interval), never silently left out.
  std::set<std::string> profiled;
  for (const auto& s : sb["vmstat"]) profiled.insert(s["column"].get<std::string>());
  for (const auto& g : sb["vmstat_gaps"]) {
    INFO(g.dump());
    CHECK(g["interval_s"] == 1.0);
    CHECK(profiled.insert(g["column"].get<std::string>()).second);
  }
  CHECK(profiled == std::set<std::string>{"eevdf-overcommit/vm0", "eevdf-overcommit/vm1"});
  // The text tables head each guest's column "<variant>" over "<topology>/vm<N>".
  auto text = run_smtlab({"compare", dir.string(), "--per-vm"});
  REQUIRE(text.status == 0);
  INFO(text.out);
  CHECK(text.out.find("overcommit/vm0") != std::string::npos);
  CHECK(text.out.find("overcommit/vm1") != std::string::npos);
}

TEST_CASE("reproduce re-runs a results directory's cells with its pinned artifacts and compares the two") {
  auto dir = scratch_dir("reproduce");
  auto original = run_smtlab({"run", tiny(), "--cells", "variant=eevdf", "--cells", "topology=nosmt", "-o",
                              (dir / "original").string(), "--no-compare"});
  INFO(original.err);
  REQUIRE(original.status == 0);

  auto r = run_smtlab({"reproduce", (dir / "original").string(), "-o", (dir / "again").string()});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(cell_ids(dir / "again") == cell_ids(dir / "original"));
  CHECK(statuses(dir / "again") == std::set<std::string>{"ok"});
  auto a = read_json(dir / "original" / "manifest.json");
  auto b = read_json(dir / "again" / "manifest.json");
  CHECK(a["kernels"]["debian-6.12"]["sha256"] == b["kernels"]["debian-6.12"]["sha256"]);
  // Debian's cloud kernels have CONFIG_PVH=y: both runs boot the unpacked vmlinux, not the bzImage.
  CHECK(a["kernels"]["debian-6.12"]["boot_entry"] == "pvh");
  CHECK(b["kernels"]["debian-6.12"]["boot_entry"] == "pvh");
  CHECK(a["image"]["digest"] == b["image"]["digest"]);
  CHECK(r.out.find("Hmean     msgs/s") != std::string::npos);
  // Two columns for the one cell: the original and the reproduction, the latter's difference in
  // parentheses or, when significant, between stars (a loaded host makes chat differ a lot).
  CHECK(std::regex_search(r.out, std::regex(R"(Hmean\s+msgs/s\s+\S+ \(\s*0\.00%\)\s+\S+ [(*]\s*-?\d+\.\d+%[)*])")));

  // Interrupted, a reproduction exits 130 and says how to finish it, which works.
  const std::string orig = (dir / "original").string(), stopped = (dir / "stopped").string();
  Background bg({"reproduce", orig, "-o", stopped});
  // While the guest boots (about 3 s here): the chat's two iterations can end within a second
  // of the first iteration line, before a signal sent on that line lands (seen 2026-12-07).
  REQUIRE(bg.wait_for_err("]: starting", 600s));
  kill(bg.pid(), SIGINT);
  CHECK(bg.wait(120s) == 130);
  CHECK(bg.err().find("smtlab: interrupted; finish with: smtlab reproduce " + orig + " -o " + stopped + " --resume") !=
        std::string::npos);
  auto finished = run_smtlab({"reproduce", orig, "-o", stopped, "--resume"});
  INFO(finished.err);
  CHECK(finished.status == 0);
  CHECK(statuses(dir / "stopped") == std::set<std::string>{"ok"});
  CHECK(cell_ids(dir / "stopped") == cell_ids(dir / "original"));

  // A run whose image cannot be had any more is refused before any guest starts.
  auto manifest = a;
  manifest["image"]["digest"] = std::string(64, '0');
  std::filesystem::create_directories(dir / "altered");
  std::filesystem::copy(dir / "original", dir / "altered", std::filesystem::copy_options::recursive);
  smtlab::write_file_atomic(dir / "altered" / "manifest.json", manifest.dump(2));
  auto refused = run_smtlab({"reproduce", (dir / "altered").string(), "-o", (dir / "refused").string()});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("the original run used 000000000000") != std::string::npos);
  CHECK(refused.err.find("check out the commit the run was made from") != std::string::npos);
}

TEST_CASE("share_boot: two benchmarks of one variant and topology run in one boot, each cell with its own results") {
  auto dir = scratch_dir("shared") / "run";
  auto plan = run_smtlab({"plan", test_recipe("shared.yaml")});
  INFO(plan.err);
  REQUIRE(plan.status == 0);
  CHECK(plan.out.rfind("boot  id", 0) == 0);
  CHECK(plan.out.find("\n2 cells in 1 boot (share_boot") != std::string::npos);

  auto r = run_smtlab({"run", test_recipe("shared.yaml"), "-o", dir.string()});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto m = read_json(dir / "manifest.json");
  REQUIRE(m["cells"].size() == 2);
  const auto first = m["cells"][0]["id"].get<std::string>(), second = m["cells"][1]["id"].get<std::string>();
  // One boot, recorded once: one group with one agent-ready time for its one VM.
  REQUIRE(m["boot_groups"].size() == 1);
  REQUIRE(m["boot_groups"].contains(first));
  const auto& group = m["boot_groups"][first];
  CHECK(group["cells"] == nlohmann::json::array({first, second}));
  REQUIRE(group["ready_s"].size() == 1);
  CHECK(group["ready_s"][0].get<double>() > 0);
  CHECK(group["wall_s"].get<double>() > group["ready_s"][0].get<double>());
  CHECK(group["ok"] == true);
  for (const auto& c : m["cells"]) {
    INFO(c.dump());
    CHECK(c["kernel_cmdline"] == "console=ttyS0 panic=-1 smtlab.root=/dev/vda cryptomgr.notests");
    CHECK(c["status"] == "ok");
    CHECK(c["boot_group"]["id"] == first);
    CHECK(c["job_s"].get<double>() > 0);
    CHECK(c["bench_s"].get<double>() > 0);
    CHECK(c["bench_s"].get<double>() <= c["job_s"].get<double>());
    CHECK_FALSE(c.contains("ready_s"));
  }
  CHECK(m["cells"][1]["job_start_s"].get<double>() >= m["cells"][0]["job_start_s"].get<double>() +
                                                          m["cells"][0]["job_s"].get<double>());
  // One kernel boot: one console, in the group's first cell, with one "Linux version" banner.
  auto console = smtlab::read_file(dir / "cells" / first / "console-vm0.log");
  size_t banners = 0;
  for (size_t at = console.find("Linux version"); at != std::string::npos; at = console.find("Linux version", at + 1)) ++banners;
  CHECK(banners == 1);
  CHECK_FALSE(std::filesystem::exists(dir / "cells" / second / "console-vm0.log"));
  // Each cell's samples are its own benchmark's; the second cell started after a sync and a wait
  // for quiet vCPUs, with the caches kept.
  auto benchmarks_in = [&](const std::string& id) {
    std::set<std::string> names;
    std::istringstream in(smtlab::read_file(dir / "cells" / id / "samples.jsonl"));
    std::string line;
    while (std::getline(in, line)) names.insert(nlohmann::json::parse(line)["benchmark"].get<std::string>());
    return names;
  };
  CHECK(benchmarks_in(first) == std::set<std::string>{"chat"});
  CHECK(benchmarks_in(second) == std::set<std::string>{"listing"});
  CHECK(std::filesystem::file_size(dir / "cells" / second / "monitor.jsonl") > 0);
  auto events = smtlab::read_file(dir / "cells" / second / "events.jsonl");
  bool settle_seen = false;
  {
    std::istringstream in(events);
    std::string line;
    while (std::getline(in, line)) {
      auto e = nlohmann::json::parse(line);
      if (e.value("name", "") != "between-jobs") continue;
      settle_seen = true;
      INFO(line);
      CHECK(e["detail"]["sync"] == true);
      CHECK(e["detail"]["caches"] == "kept");
      const auto& settle = e["detail"]["settle"];
      CHECK(settle["settled"].is_boolean());
      CHECK(settle["waited_s"].get<double>() > 0);
      CHECK(settle["waited_s"].get<double>() < 25);
      CHECK(settle["busiest_cpu_pct"].size() >= 1);
    }
  }
  CHECK(settle_seen);
  CHECK(qemu_processes("smtlab-" + first).empty());

  auto compared = run_smtlab({"compare", dir.string()});
  INFO(compared.err);
  REQUIRE(compared.status == 0);
  CHECK(compared.out.find("Hmean     msgs/s") != std::string::npos);
  CHECK(compared.out.find("elapsed-s") != std::string::npos);
}

TEST_CASE("share_boot: a benchmark that fails fails only its cell, the next one runs in the same boot") {
  auto dir = scratch_dir("shared-fail") / "run";
  auto r = run_smtlab({"run", test_recipe("shared-fail.yaml"), "-o", dir.string()});
  INFO(r.err);
  CHECK(r.status == 4);
  auto m = read_json(dir / "manifest.json");
  REQUIRE(m["cells"].size() == 2);
  const auto& broken = m["cells"][0];
  const auto& chat = m["cells"][1];
  CHECK(broken["benchmark"] == "broken");
  CHECK(broken["status"] == "failed");
  CHECK(broken["error"].get<std::string>() == "VM 0 reported failure: sh exited with status 7");
  CHECK(chat["status"] == "ok");
  CHECK(chat["error"] == "");
  CHECK(std::filesystem::file_size(dir / "cells" / chat["id"].get<std::string>() / "samples.jsonl") > 0);
  // Still one boot, and the boot itself is fine.
  REQUIRE(m["boot_groups"].size() == 1);
  const auto& group = m["boot_groups"][broken["id"].get<std::string>()];
  CHECK(group["ok"] == true);
  CHECK(group["cells"].size() == 2);
}

TEST_CASE("parallel: boots on disjoint host CPUs overlap, never two of one benchmark, each guest kept on its CPU") {
  auto dir = scratch_dir("parallel") / "run";
  auto plan = run_smtlab({"plan", test_recipe("parallel.yaml")});
  INFO(plan.err);
  REQUIRE(plan.status == 0);
  CHECK(plan.out.find("\nparallel: 4 boots in 2 waves") != std::string::npos);

  auto r = run_smtlab({"run", test_recipe("parallel.yaml"), "-o", dir.string()});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto m = read_json(dir / "manifest.json");
  CHECK(m["parallel"] == true);
  REQUIRE(m["cells"].size() == 4);
  struct Seen {
    std::string id, topology, benchmark, started, finished;
    std::set<std::string> alongside;
  };
  std::vector<Seen> cells;
  for (const auto& c : m["cells"]) {
    INFO(c.dump());
    REQUIRE(c["status"] == "ok");
    Seen s{c["id"], c["topology"], c["benchmark"], c["started"], c["finished"], {}};
    for (const auto& id : c["ran_alongside"]) s.alongside.insert(id.get<std::string>());
    // The guest and its emulator threads stay on the topology's one host CPU, and the host CPU
    // account is of that CPU.
    const std::string cpu = s.topology == "cpu0" ? "0" : "1";
    CHECK(c["host_cpu"]["cpus"] == cpu);
    bool confined = false;
    for (const auto& n : c["notes"]) {
      CHECK(n.get<std::string>().find("outside the experiment's set") == std::string::npos);
      confined = confined || n.get<std::string>().find("share its vCPUs' CPUs") != std::string::npos;
    }
    CHECK(confined);
    cells.push_back(std::move(s));
  }
  // Plan order: spin-a on cpu0, spin-a on cpu1, spin-b on cpu0, spin-b on cpu1.
  REQUIRE(cells[0].benchmark == "spin-a");
  REQUIRE(cells[3].topology == "cpu1");
  auto overlap = [](const Seen& a, const Seen& b) { return a.started < b.finished && b.started < a.finished; };
  // Each boot takes several seconds, and the times are whole seconds (ISO 8601 UTC, comparable
  // as text): the pairs of a wave overlap, the cells of one benchmark do not.
  CHECK(overlap(cells[0], cells[3]));
  CHECK(overlap(cells[1], cells[2]));
  CHECK_FALSE(overlap(cells[0], cells[1]));
  CHECK_FALSE(overlap(cells[2], cells[3]));
  CHECK(cells[0].alongside == std::set<std::string>{cells[3].id});
  CHECK(cells[3].alongside == std::set<std::string>{cells[0].id});
  CHECK(cells[1].alongside == std::set<std::string>{cells[2].id});
  CHECK(r.err.find("ran alongside " + cells[3].id) != std::string::npos);
  for (const auto& c : cells) CHECK(qemu_processes("smtlab-" + c.id).empty());

  auto compared = run_smtlab({"compare", dir.string()});
  INFO(compared.err);
  REQUIRE(compared.status == 0);
  // One table per benchmark, a column per topology (the header splits eevdf-cpu0 at its '-').
  CHECK(compared.out.find("\nspin-a\n") != std::string::npos);
  CHECK(compared.out.find("\nspin-b\n") != std::string::npos);
  CHECK(compared.out.find("cpu0") != std::string::npos);
  CHECK(compared.out.find("cpu1") != std::string::npos);
  CHECK(row_labels(compared.out).size() >= 4);  // Amean and Stddev of elapsed-s, per table
  // Every cell ran next to another boot: the comparison lists it as disturbed, naming the other.
  CHECK(compared.out.find("disturbed: eevdf-cpu0 (cell " + cells[0].id + "): ran alongside cell(s) " + cells[3].id) !=
        std::string::npos);
}
