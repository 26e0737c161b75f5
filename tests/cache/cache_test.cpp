#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "cache/cache.hpp"
#include "scratch.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;
using smtlab::cache::Cache;
using smtlab::cache::Verify;

namespace {

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("a built entry is published and then hit") {
  Cache cache(smtlab::test::scratch_dir("hit"));
  int builds = 0;
  auto build = [&](const fs::path& tmp) {
    ++builds;
    put(tmp / "a.txt", "alpha");
    put(tmp / "sub/b.bin", std::string(3000, 'b'));
    fs::create_symlink("a.txt", tmp / "link");
  };
  auto e1 = cache.get_or_build("thing", "k1", "first thing", build);
  CHECK_FALSE(e1.hit);
  CHECK(e1.size == 3005);
  CHECK(smtlab::read_file(e1.dir / "sub/b.bin").size() == 3000);
  auto e2 = cache.get_or_build("thing", "k1", "first thing", build);
  CHECK(e2.hit);
  CHECK(e2.dir == e1.dir);
  CHECK(builds == 1);
  // Each file's sha256 as hashed at publication, on the build and on a hit alike (a symlink has none).
  const std::map<std::string, std::string> sha256 = {{"a.txt", smtlab::sha256_hex("alpha")},
                                                     {"sub/b.bin", smtlab::sha256_hex(std::string(3000, 'b'))}};
  CHECK(e1.sha256 == sha256);
  CHECK(e2.sha256 == sha256);
  auto listed = cache.list();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].name == "first thing");
  CHECK(listed[0].size == 3005);
  CHECK_FALSE(fs::exists(cache.root() / "tmp" / "thing-k1"));
}

TEST_CASE("a failed build leaves nothing published and no temp dir") {
  Cache cache(smtlab::test::scratch_dir("fail"));
  CHECK_THROWS(cache.get_or_build("thing", "k", "x", [](const fs::path& tmp) {
    put(tmp / "half", "half");
    throw std::runtime_error("boom");
  }));
  CHECK_FALSE(cache.lookup("thing", "k"));
  CHECK(fs::is_empty(cache.root() / "tmp"));
}

TEST_CASE("a damaged entry is detected, removed and rebuilt") {
  Cache cache(smtlab::test::scratch_dir("damage"));
  int builds = 0;
  auto build = [&](const fs::path& tmp) {
    ++builds;
    put(tmp / "small", "0123456789");
    put(tmp / "big", std::string((2 << 20) + 7, 'x'));  // above the quick-hash threshold
  };
  auto e = cache.get_or_build("k", "key1", "n", build);

  SECTION("truncated file (size mismatch)") {
    fs::resize_file(e.dir / "big", 100);
  }
  SECTION("same size, other bytes, in a small file (hashed on every lookup)") {
    put(e.dir / "small", "0123456780");
  }
  SECTION("missing file") {
    fs::remove(e.dir / "small");
  }
  SECTION("garbage entry.json") {
    put(e.dir / "entry.json", "{not json");
  }
  CHECK_FALSE(cache.lookup("k", "key1"));
  CHECK_FALSE(fs::exists(e.dir));
  auto again = cache.get_or_build("k", "key1", "n", build);
  CHECK_FALSE(again.hit);
  CHECK(builds == 2);
  CHECK(smtlab::read_file(again.dir / "small") == "0123456789");
  CHECK(cache.get_or_build("k", "key1", "n", build).hit);
}

TEST_CASE("same-size corruption of a large file is found by a full verification") {
  Cache cache(smtlab::test::scratch_dir("full"));
  auto e = cache.get_or_build("k", "key", "n", [](const fs::path& tmp) {
    put(tmp / "big", std::string((2 << 20), 'x'));
  });
  {
    std::fstream f(e.dir / "big", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12345);
    f.put('y');
  }
  CHECK(cache.lookup("k", "key", Verify::quick));  // sizes only for big files
  CHECK_FALSE(cache.lookup("k", "key", Verify::full));
  CHECK_FALSE(fs::exists(e.dir));
}

TEST_CASE("two processes racing for one key: one builds, the other waits and hits") {
  const fs::path root = smtlab::test::scratch_dir("race");
  const fs::path counter = root / "builds.log";
  auto build = [&](const fs::path& tmp) {
    std::ofstream(counter, std::ios::app) << getpid() << "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    put(tmp / "out", "built by " + std::to_string(getpid()));
  };
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int rc = 3;
    try {
      Cache c(root);
      auto e = c.get_or_build("race", "same", "r", build);
      rc = e.hit ? 1 : 0;
    } catch (...) {
    }
    _exit(rc);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the child take the lock
  Cache cache(root);
  auto e = cache.get_or_build("race", "same", "r", build);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  const int child_hit = WEXITSTATUS(status);
  REQUIRE(child_hit != 3);
  // Exactly one of the two built; the other hit the published entry.
  CHECK(child_hit + (e.hit ? 1 : 0) == 1);
  auto log = smtlab::read_file(counter);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(smtlab::read_file(e.dir / "out").rfind("built by ", 0) == 0);
}

TEST_CASE("two threads racing for one key build once") {
  Cache cache(smtlab::test::scratch_dir("threads"));
  std::atomic<int> builds{0};
  auto build = [&](const fs::path& tmp) {
    ++builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    put(tmp / "out", "x");
  };
  std::atomic<int> hits{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] {
      Cache c(cache.root());
      if (c.get_or_build("t", "same", "t", build).hit) ++hits;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(builds == 1);
  CHECK(hits == 2);
}

TEST_CASE("gc removes unused entries, entries over the budget and stale temp dirs") {
  Cache cache(smtlab::test::scratch_dir("gc"));
  auto mk = [&](const std::string& key, size_t bytes) {
    return cache.get_or_build("g", key, key, [&](const fs::path& tmp) { put(tmp / "f", std::string(bytes, 'z')); });
  };
  auto old = mk("old", 100);
  auto mid = mk("mid", 1000);
  auto fresh = mk("fresh", 1000);
  // Pretend "old" was last used 30 days ago and "mid" 2 days ago.
  auto set_used = [](const fs::path& p, int days) {
    fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(24 * days));
  };
  set_used(old.dir / "entry.json", 30);
  set_used(mid.dir / "entry.json", 2);
  fs::create_directories(cache.root() / "tmp" / "g-dead.999999999.0");  // no such pid
  fs::create_directories(cache.root() / "work" / "0123456789abcdef.999999999");
  put(cache.root() / "debs" / "x_1_amd64.deb", "not an entry");

  smtlab::cache::GcOptions dry;
  dry.unused_days = 14;
  dry.dry_run = true;
  auto r0 = cache.gc(dry);
  CHECK(r0.removed.size() == 1);
  CHECK(fs::exists(old.dir));

  smtlab::cache::GcOptions opt;
  opt.unused_days = 14;
  auto r1 = cache.gc(opt);
  REQUIRE(r1.removed.size() == 1);
  CHECK(r1.removed[0].key == "old");
  CHECK_FALSE(fs::exists(old.dir));
  CHECK(r1.removed_tmp.size() == 2);
  CHECK(fs::exists(cache.root() / "debs" / "x_1_amd64.deb"));
  CHECK_FALSE(fs::exists(cache.root() / "work" / "0123456789abcdef.999999999"));
  CHECK_FALSE(fs::exists(cache.root() / "tmp" / "g-dead.999999999.0"));

  smtlab::cache::GcOptions budget;
  budget.max_bytes = 1500;  // only one of the two 1000-byte entries fits: the older use goes
  auto r2 = cache.gc(budget);
  REQUIRE(r2.removed.size() == 1);
  CHECK(r2.removed[0].key == "mid");
  CHECK(fs::exists(fresh.dir));
  CHECK(r2.kept_bytes == 1000);
}

TEST_CASE("boot and vm-test directories are not entries, and gc removes boot directories of dead processes and old kept ones") {
  Cache cache(smtlab::test::scratch_dir("areas"));
  cache.get_or_build("kernel", "k1", "a kernel", [](const fs::path& tmp) { put(tmp / "vmlinuz", "k"); });
  const fs::path boot = cache.root() / "boot";
  const fs::path running = boot / ("0123456789ab." + std::to_string(getpid()));  // this process: runs
  const fs::path killed = boot / "0123456789ab.999999999";                        // no such process
  const fs::path kept = boot / "0123456789ab-4242";                               // --keep, fresh
  const fs::path kept_old = boot / "0123456789ab-4243";                           // --keep, 30 days ago
  for (const auto& d : {running, killed, kept, kept_old}) put(d / "console-vm0.log", "console");
  fs::last_write_time(kept_old, fs::file_time_type::clock::now() - std::chrono::hours(24 * 30));
  put(cache.root() / "vm-test" / "linux-6.12-cloud" / "vmlinuz-path", "/x");
  put(cache.root() / "work" / "run.999999999" / "c" / "vm0.qcow2", "overlay");
  put(cache.root() / "debs" / "own_1_amd64.deb", "own");

  const auto host_apt = cache.root().parent_path() / "host-apt-archives";  // as if the host's apt cache
  put(host_apt / "host_2_amd64.deb", "hostdeb2");
  fs::create_hard_link(host_apt / "host_2_amd64.deb", cache.root() / "debs" / "host_2_amd64.deb");

  auto entries = cache.list();  // neither boot/ nor vm-test/ shows up as a (damaged) entry
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].kind == "kernel");
  std::map<std::string, smtlab::cache::Cache::Area> areas;
  for (const auto& a : cache.areas()) areas[a.name] = a;
  CHECK(areas["boot"].size == 4 * 7);
  CHECK(areas["vm-test"].size == 2);
  CHECK(areas["debs"].size == 3 + 8);
  CHECK(areas["debs"].linked == 8);  // host_2's bytes are also in the host's apt cache
  CHECK(areas.count("logs") == 0);  // only areas that exist

  smtlab::cache::GcOptions opt;
  opt.unused_days = 14;
  auto r = cache.gc(opt);
  CHECK(r.removed.empty());
  CHECK(fs::exists(running));
  CHECK_FALSE(fs::exists(killed));
  CHECK(fs::exists(kept));
  CHECK_FALSE(fs::exists(kept_old));
  CHECK_FALSE(fs::exists(cache.root() / "work" / "run.999999999"));  // a run that was killed
  CHECK(fs::exists(cache.root() / "vm-test" / "linux-6.12-cloud" / "vmlinuz-path"));
  CHECK(r.removed_tmp.size() == 3);
}

TEST_CASE("keys that could escape the cache are refused") {
  Cache cache(smtlab::test::scratch_dir("keys"));
  CHECK_THROWS(cache.lookup("k", "../etc"));
  CHECK_THROWS(cache.lookup("k", "a/b"));
  CHECK_THROWS(cache.lookup("", "a"));
}
