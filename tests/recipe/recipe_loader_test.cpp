#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "recipe/recipe_loader.hpp"
#include "util/limits.hpp"
#include "util/sha256.hpp"
#include "checkout.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using namespace smtlab::recipe;

namespace {

const fs::path kSource = smtlab::test::source_dir();
const fs::path kGood = kSource / "tests/recipe/good";

// A scratch directory of its own (scratch.hpp: kept when the test process fails).
struct TempDir {
  fs::path path = smtlab::test::scratch_dir("recipe");
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
};

const Topology& topology(const Recipe& r, const std::string& name) {
  for (const auto& t : r.topologies)
    if (t.name == name) return t;
  FAIL("no topology " + name);
  throw;
}

const Benchmark& benchmark(const Recipe& r, const std::string& name) {
  for (const auto& b : r.benchmarks)
    if (b.name == name) return b;
  FAIL("no benchmark " + name);
  throw;
}

std::string error_of(const fs::path& file) {
  try {
    load_recipe(file);
  } catch (const RecipeError& e) {
    return e.what();
  }
  return "(loaded)";
}

const std::string kMinimalTail =
    "variants: [{name: v}]\n"
    "topologies: [{name: t, cpu: {vcpus: 2}}]\n"
    "benchmarks: [{kind: hackbench}]\n";

}  // namespace

TEST_CASE("the value types print as the recipe format writes them") {
  CHECK(SourceLocation{"r.yaml", 3, 7}.str() == "r.yaml:3:7");
  CHECK(SourceLocation{"r.yaml", 3, 0}.str() == "r.yaml:3");
  CHECK(SourceLocation{"r.yaml", 0, 0}.str() == "r.yaml");
  Topology t;
  t.sockets = 2, t.dies = 1, t.cores = 4, t.threads = 2;
  CHECK(t.shape() == "2x1x4x2");
  CHECK(t.vcpus() == 16);
  CHECK(to_string(Pinning::shared) == "shared");
  CHECK(to_string(CoreSchedMode::per_benchmark) == "per-benchmark");
  CHECK(to_string(YieldMode::rx) == "rx");
  CHECK(to_string(Axis::topology) == "topology");
  CHECK(to_string(KernelSource::path) == "path");
  CHECK(to_string(VmRole::noise) == "noise");
  RecipeError e({"x.yaml", 2, 5}, "bad thing", "do this");
  CHECK(std::string(e.what()) == "x.yaml:2:5: error: bad thing");
  CHECK(e.message() == "bad thing");
  CHECK(e.hint() == "do this");
}

TEST_CASE("a recipe using every section loads with its values") {
  Recipe r = load_recipe(kGood / "everything.yaml");
  CHECK(r.name == "everything");
  CHECK(r.description == "all the keys");
  CHECK(r.file == (kGood / "everything.yaml").lexically_normal());
  CHECK(r.sha256 == smtlab::sha256_hex(r.text));
  CHECK(r.sha256 == smtlab::sha256_file(kGood / "everything.yaml"));

  // Image and kernels come from files relative to the recipe.
  CHECK(r.image.name == "img");
  CHECK(r.image.variant == "minbase");
  CHECK(r.image.size_mib == 2048);
  REQUIRE(r.kernels.size() == 2);
  const KernelSpec& built = r.kernels.at("built");
  CHECK(built.source == KernelSource::source);
  CHECK(built.tree == "debian:linux-source-6.12");
  CHECK(built.base_config == "tinyconfig");
  CHECK(built.fragments == std::vector<fs::path>{kGood / "kernels/fragments/core.config",
                                                 kGood / "kernels/fragments/virtio.config"});
  // Patches of a directory: every *.patch, in name order; other files ignored.
  CHECK(built.patches == std::vector<fs::path>{kGood / "kernels/patches/demo/0001-first.patch",
                                               kGood / "kernels/patches/demo/0002-second.patch"});
  CHECK(built.cmdline == std::vector<std::string>{"quiet"});
  CHECK(built.definition_file == kGood / "kernels/built.yaml");
  const KernelSpec& stock = r.kernels.at("stock");
  CHECK(stock.source == KernelSource::debian);
  CHECK(stock.package == "linux-image-6.12.*+deb12-cloud-amd64-unsigned");
  CHECK(stock.version == "6.12.48-1~bpo12+1");
  CHECK(stock.definition_file.empty());  // inline

  REQUIRE(r.variants.size() == 2);
  CHECK(r.variants[0].coresched == CoreSchedMode::none);
  const Variant& tuned = r.variants[1];
  CHECK(tuned.kernel == "built");
  CHECK(tuned.cmdline == std::vector<std::string>{"mitigations=off", "nohz=on"});
  CHECK(tuned.sysctls == std::map<std::string, std::string>{{"kernel.sched_autogroup_enabled", "0"}, {"vm.swappiness", "10"}});
  CHECK(tuned.sched_tunables == std::map<std::string, std::string>{{"base_slice_ns", "15000000"}});
  CHECK(tuned.coresched == CoreSchedMode::per_benchmark);
  CHECK(tuned.where.line == 11);
  CHECK(tuned.where.column == 5);

  const Topology& quad = topology(r, "quad-ht");
  CHECK(quad.shape() == "1x1x2x2");  // vcpus 4 with smt on: two threads per core
  CHECK(quad.smt);
  CHECK(quad.memory_mib == 1536);
  CHECK(quad.roles == std::vector<VmRole>{VmRole::benchmark});
  const Topology& flat = topology(r, "flat");
  CHECK(flat.shape() == "1x1x3x1");
  CHECK_FALSE(flat.smt);
  CHECK(flat.memory_mib == 512);
  const Topology& trio = topology(r, "trio");
  CHECK(trio.vms == 3);
  CHECK(trio.shape() == "2x1x2x2");
  CHECK(trio.vcpus() == 8);
  CHECK(trio.cmdline == std::vector<std::string>{"nosmt"});
  CHECK(trio.host_cpus == std::vector<int>{0, 1, 2, 3, 8});
  CHECK(trio.pinning == Pinning::shared);
  CHECK(trio.roles == std::vector<VmRole>{VmRole::noise, VmRole::benchmark, VmRole::noise});
  CHECK(trio.noise.workers == 0);
  CHECK(trio.noise.load == 50);
  const Topology& pinned = topology(r, "pinned");
  CHECK(pinned.roles == std::vector<VmRole>{VmRole::benchmark, VmRole::noise});  // default roles
  CHECK(pinned.pinning == Pinning::vcpu);
  CHECK(pinned.host_sched == HostSched::batch);
  CHECK(trio.host_sched == HostSched::normal);  // the default

  const auto& kb = std::get<KernbenchParams>(benchmark(r, "kb-default").params);
  CHECK(kb.jobs.empty());  // resolved per topology by the plan
  CHECK(kb.warmup);
  CHECK(kb.tree == "synthetic");
  CHECK(kb.target == "all");
  CHECK(benchmark(r, "kb-default").iterations == 3);
  const auto& real = std::get<KernbenchParams>(benchmark(r, "kb-real").params);
  CHECK(real.jobs == std::vector<int>{8});
  CHECK_FALSE(real.warmup);
  CHECK(real.tree == "linux-source");
  CHECK(real.config == "tinyconfig");
  CHECK(real.target == "vmlinux");
  const Benchmark& chat = benchmark(r, "chat");
  const auto& cp = std::get<ChatParams>(chat.params);
  CHECK(chat.iterations == 1);
  CHECK(cp.rooms == 3);
  CHECK(cp.users == 4);
  CHECK(cp.count == 50);
  CHECK(cp.yield == YieldMode::rx);
  CHECK(cp.port == 9000);
  CHECK(cp.discard == 1);  // the default warm-up run, before the one measured iteration
  CHECK(cp.stall_s == 300);
  const auto& hb = std::get<HackbenchParams>(benchmark(r, "hackbench").params);
  CHECK(hb.groups == std::vector<int>{1, 4});
  CHECK(hb.loops == 10);
  CHECK(hb.fds == 5);
  CHECK(hb.threads);
  CHECK(hb.pipes);

  CHECK_FALSE(r.monitors.vmstat);
  CHECK_FALSE(r.monitors.schedstat);
  CHECK(r.monitors.cpu_busy);
  CHECK(r.matrix.include.size() == 4);
  CHECK(r.matrix.exclude.size() == 1);
  CHECK(r.matrix.order == std::vector<Axis>{Axis::variant, Axis::benchmark, Axis::topology});
  CHECK(r.matrix.selects("tuned", "flat", "chat"));
  CHECK_FALSE(r.matrix.selects("base", "flat", "chat"));
  CHECK_FALSE(r.matrix.selects("tuned", "quad-ht", "kb-real"));
  CHECK(r.timeouts.boot_s == 60);
  CHECK(r.timeouts.cell_s == 600);
}

TEST_CASE("kernel and image files load on their own") {
  KernelSpec k = load_kernel_spec(kGood / "kernels/series.yaml");
  CHECK(k.name == "series");  // default: the file name
  CHECK(k.tree == "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git");
  CHECK(k.git_ref == "v6.12.1");
  CHECK(k.base_config == "defconfig");
  // A series file lists patches in apply order, with comments.
  CHECK(k.patches == std::vector<fs::path>{kGood / "kernels/patches/queue/fix.patch", kGood / "kernels/patches/queue/add.patch"});

  ImageSpec img = load_image_spec(kGood / "images/img.yaml");
  CHECK(img.packages == std::vector<std::string>{"gcc", "make"});
  CHECK(img.mirror == "http://deb.debian.org/debian");
  REQUIRE(img.files.size() == 1);
  CHECK(img.files[0].source == kGood / "files/hello.txt");
  CHECK(img.files[0].destination == "/etc/hello");
  CHECK(img.definition_file == kGood / "images/img.yaml");
}

TEST_CASE("the shipped kernels and images load") {
  for (const char* name : {"debian-6.1", "debian-6.12"}) {
    KernelSpec k = load_kernel_spec(kSource / "kernels" / (std::string(name) + ".yaml"));
    CHECK(k.name == name);
    CHECK(k.source == KernelSource::debian);
    CHECK(std::count(k.package.begin(), k.package.end(), '*') == 1);
  }
  KernelSpec cs = load_kernel_spec(kSource / "kernels/coresched-6.12.yaml");
  CHECK(cs.source == KernelSource::source);
  CHECK(cs.tree == "debian:linux-source-6.12");
  CHECK(cs.base_config == "tinyconfig");
  CHECK(cs.fragments == std::vector<fs::path>{kSource / "kernels/fragments/coresched.config"});
  CHECK_FALSE(cs.patches.empty());
  for (const auto& p : cs.patches) {
    CHECK(p.parent_path() == kSource / "kernels/patches/coresched-6.12");
    CHECK(p.extension() == ".patch");
  }
  ImageSpec bench = load_image_spec(kSource / "images/bench.yaml");
  ImageSpec kernel = load_image_spec(kSource / "images/bench-kernel.yaml");
  CHECK(bench.suite == "bookworm");
  CHECK(bench.variant == "apt");
  for (const auto& p : bench.packages) CHECK(std::count(kernel.packages.begin(), kernel.packages.end(), p) == 1);
  CHECK(std::count(kernel.packages.begin(), kernel.packages.end(), "linux-source-6.12") == 1);
}

TEST_CASE("the shipped recipes load with the seeds' shapes") {
  Recipe smoke = load_recipe(kSource / "recipes/smoke.yaml");
  CHECK(smoke.image.name == "bench");
  CHECK(topology(smoke, "smt").shape() == "1x1x2x2");
  CHECK(topology(smoke, "nosmt").shape() == "1x1x2x1");
  CHECK(topology(smoke, "nosmt").memory_mib == 768);
  const Topology& over = topology(smoke, "overcommit");
  CHECK(over.vms == 2);
  CHECK(over.pinning == Pinning::shared);
  CHECK(over.host_cpus == std::vector<int>{0, 1});
  CHECK(over.noise.workers == 2);
  CHECK(smoke.monitors.vmstat_interval_s == 1);

  Recipe cs = load_recipe(kSource / "recipes/coresched-kernbench.yaml");
  CHECK(cs.variants.size() == 2);
  CHECK(cs.topologies.size() == 4);
  for (const auto& t : cs.topologies) {
    CHECK(t.cores == 4);  // the seed's 8-CPU box: 4 cores, with or without their SMT siblings
    CHECK(t.vcpus() == (t.smt ? 8 : 4));
    CHECK(t.vms == (t.name.rfind("overcommit", 0) == 0 ? 2 : 1));
  }
  CHECK(std::get<KernbenchParams>(cs.benchmarks.at(0).params).jobs == std::vector<int>{2, 4, 8, 16});
  CHECK(cs.benchmarks.at(0).iterations == 5);

  Recipe chat = load_recipe(kSource / "recipes/chat-runqueue.yaml");
  const auto& cp = std::get<ChatParams>(chat.benchmarks.at(0).params);
  CHECK(cp.rooms == 10);
  CHECK(cp.users == 20);
  CHECK(cp.count == 10000);
  CHECK(cp.stall_s == 60);  // the default
  CHECK(chat.monitors.vmstat_interval_s == 10);
  CHECK(chat.variants.at(2).sched_tunables.at("base_slice_ns") == "15000000");
}

TEST_CASE("relative paths resolve against the file that names them") {
  TempDir tmp;
  tmp.write("k/fragments/a.config", "CONFIG_X=y\n");
  tmp.write("k/extra/b.config", "CONFIG_Y=y\n");
  tmp.write("k/p/1.patch", "x\n");
  tmp.write("k/kernel.yaml", "source: source\ntree: debian:linux-source-6.12\nfragments: [a.config, extra/b.config]\npatches: ../k/p\n");
  tmp.write("img.yaml", "name: i\n");
  auto recipe = tmp.write("sub/r.yaml", "kernels: {k: ../k/kernel.yaml}\nimage: ../img.yaml\n" + kMinimalTail);
  Recipe r = load_recipe(recipe);
  const KernelSpec& k = r.kernels.at("k");
  CHECK(k.fragments == std::vector<fs::path>{tmp.path / "k/fragments/a.config", tmp.path / "k/extra/b.config"});
  CHECK(k.patches == std::vector<fs::path>{tmp.path / "k/p/1.patch"});
  CHECK(r.name == "r");  // default: the file name
  CHECK(r.variants.at(0).kernel == "k");  // the only kernel
}

TEST_CASE("file problems name the file, the place and what to do") {
  TempDir tmp;
  tmp.write("img.yaml", "name: i\n");
  fs::create_directories(tmp.path / "patches/empty");
  tmp.write("k.yaml", "source: source\ntree: debian:linux-source-6.12\npatches: empty\n");
  auto r = tmp.write("r.yaml", "kernels: {k: k.yaml}\nimage: img.yaml\n" + kMinimalTail);
  CHECK(load_recipe(r).kernels.at("k").patches.empty());  // an empty patch queue is fine
  tmp.write("k.yaml", "source: source\ntree: debian:linux-source-6.12\npatches: absent\n");
  CHECK(error_of(r) == (tmp.path / "k.yaml").string() + ":3:10: error: patches '" + (tmp.path / "patches/absent").string() +
                           "' not found");
  tmp.write("k.yaml", "source: path\nbzimage: vmlinuz\n");
  CHECK(error_of(r) == (tmp.path / "k.yaml").string() + ":2:10: error: kernel image '" + (tmp.path / "vmlinuz").string() +
                           "' not found");
  tmp.write("vmlinuz", "MZ");
  Recipe ok = load_recipe(r);
  CHECK(ok.kernels.at("k").bzimage == tmp.path / "vmlinuz");
  tmp.write("k.yaml", "source: debian\npackage: linux-image-*-*\n");
  CHECK(error_of(r) == (tmp.path / "k.yaml").string() + ":2:10: error: 'linux-image-*-*' is not a Debian package name");
  tmp.write("k.yaml", "source: debian\npackage: linux-image-6.1.*-cloud-amd64-unsigned\ntree: debian:linux-source-6.1\n");
  CHECK(error_of(r) == (tmp.path / "k.yaml").string() + ":3:1: error: 'tree' does not apply to source: debian");
  tmp.write("k.yaml", "source: source\ntree: https://example.org/linux.git\n");
  CHECK(error_of(r) == (tmp.path / "k.yaml").string() + ":1:1: error: missing key 'ref' in kernel definition");
  tmp.write("k.yaml", "source: source\ntree: [a, b]\n");
  CHECK(error_of(r) == (tmp.path / "k.yaml").string() + ":2:7: error: 'tree' must be a single value (text), got a list");
}

TEST_CASE("host CPUs beyond this machine are left to the run to check") {
  TempDir tmp;
  auto r = tmp.write("r.yaml",
                     "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
                     "image: {name: i}\nvariants: [{name: v}]\n"
                     "topologies: [{name: big, vms: 2, cpu: {vcpus: 64}, host_cpus: 0-4095, pinning: vcpu}]\n"
                     "benchmarks: [{kind: hackbench}]\n");
  Recipe loaded = load_recipe(r);
  CHECK(loaded.topologies.at(0).host_cpus.size() == 4096);
}

TEST_CASE("a missing recipe file is an error naming it") {
  try {
    load_recipe("/nonexistent/recipe.yaml");
    FAIL("loaded");
  } catch (const RecipeError& e) {
    CHECK(std::string(e.what()).rfind("/nonexistent/recipe.yaml: error: cannot read /nonexistent/recipe.yaml", 0) == 0);
  }
}

TEST_CASE("a command benchmark keeps its argv verbatim, and a bad 'run' is a located error") {
  TempDir tmp;
  const std::string head =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\nvariants: [{name: v}]\ntopologies: [{name: t, cpu: {vcpus: 2}}]\n";
  auto r = tmp.write("r.yaml", head +
                                   "benchmarks:\n"
                                   "  - kind: command\n"
                                   "    name: build\n"
                                   "    run: [sh, -c, \"make -j4 'a b' $(x) <&>\", \"\"]\n"
                                   "    iterations: 2\n"
                                   "  - {kind: command, run: [true]}\n");
  Recipe loaded = load_recipe(r);
  const Benchmark& b = benchmark(loaded, "build");
  CHECK(b.kind == "command");
  CHECK(b.iterations == 2);
  REQUIRE(std::holds_alternative<CommandParams>(b.params));
  CHECK(std::get<CommandParams>(b.params).argv ==
        std::vector<std::string>{"sh", "-c", "make -j4 'a b' $(x) <&>", ""});
  const Benchmark& d = benchmark(loaded, "command");
  CHECK(d.iterations == 3);
  CHECK(std::get<CommandParams>(d.params).argv == std::vector<std::string>{"true"});

  tmp.write("r.yaml", head + "benchmarks: [{kind: command}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":5:14: error: missing key 'run' in command benchmark");
  tmp.write("r.yaml", head + "benchmarks: [{kind: command, run: \"make -j4\"}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() +
                           ":5:35: error: 'run' must be a list of strings (the program and its arguments), got 'make -j4'");
  tmp.write("r.yaml", head + "benchmarks: [{kind: command, run: []}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":5:35: error: 'run' is empty");
  tmp.write("r.yaml", head + "benchmarks: [{kind: command, run: [\"\", x]}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":5:36: error: the program (first item of 'run') is empty");
  tmp.write("r.yaml", head + "benchmarks: [{kind: command, run: [sh, [x]]}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":5:40: error: items of 'run' must be strings, got a list");
  tmp.write("r.yaml", head + "benchmarks: [{kind: command, run: [true], groups: 2}]\n");
  CHECK(error_of(r).find("5:43: error: unknown key 'groups' in command benchmark") != std::string::npos);
}

TEST_CASE("share_boot and parallel are top-level true/false, false by default, and a wrong value is a located error") {
  TempDir tmp;
  const std::string head =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\n" + kMinimalTail;
  auto r = tmp.write("r.yaml", head);
  CHECK_FALSE(load_recipe(r).share_boot);
  CHECK_FALSE(load_recipe(r).parallel);
  for (std::string key : {"share_boot", "parallel"}) {
    INFO(key);
    auto value = [&](const Recipe& recipe) { return key == "share_boot" ? recipe.share_boot : recipe.parallel; };
    tmp.write("r.yaml", head + key + ": true\n");
    CHECK(value(load_recipe(r)));
    tmp.write("r.yaml", head + key + ": off\n");
    CHECK_FALSE(value(load_recipe(r)));
    tmp.write("r.yaml", head + key + ": [true]\n");
    CHECK(error_of(r).rfind((tmp.path / "r.yaml").string() + ":6:" + std::to_string(key.size() + 3) + ": error: '" + key +
                                "' must be true or false",
                            0) == 0);
  }
  CHECK(load_recipe(kSource / "recipes/smoke.yaml").share_boot);  // documented there, on
  CHECK_FALSE(load_recipe(kSource / "recipes/smoke.yaml").parallel);  // documented there, off
}

TEST_CASE("chat's discard counts warm-up runs before the measured iterations, as the guest runs them") {
  TempDir tmp;
  const std::string head =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\nvariants: [{name: v}]\ntopologies: [{name: t, cpu: {vcpus: 2}}]\n";
  auto chat = [&](const std::string& benchmark) {
    auto r = tmp.write("r.yaml", head + "benchmarks: [{kind: chat" + benchmark + "}]\n");
    const Recipe recipe = load_recipe(r);  // kept: b refers into it
    const Benchmark& b = recipe.benchmarks.at(0);
    return std::make_pair(b.iterations, std::get<ChatParams>(b.params).discard);
  };
  CHECK(chat("") == std::make_pair(3, 1));                             // Volano's 4 runs, the last 3 measured
  CHECK(chat(", iterations: 1") == std::make_pair(1, 1));              // the default warm-up stays
  CHECK(chat(", iterations: 2, discard: 2") == std::make_pair(2, 2));  // 4 runs, 2 measured
  CHECK(chat(", iterations: 1, discard: 5") == std::make_pair(1, 5));
  CHECK(chat(", iterations: 1, discard: 0") == std::make_pair(1, 0));
  auto r = tmp.write("r.yaml", head + "benchmarks: [{kind: chat, discard: -1}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":5:36: error: 'discard' must be between 0 and 1000, got -1");
}

TEST_CASE("vCPUs and chat sizes are refused at load time where the run would refuse them, at the same limits") {
  TempDir tmp;
  const std::string head =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\nvariants: [{name: v}]\n";
  const std::string max = std::to_string(smtlab::limits::kMaxVcpusPerVm);
  const std::string over = std::to_string(smtlab::limits::kMaxVcpusPerVm + 1);
  auto r = tmp.write("r.yaml", head + "topologies: [{name: t, cpu: {vcpus: " + max + "}}]\nbenchmarks: [{kind: hackbench}]\n");
  CHECK(load_recipe(r).topologies.at(0).vcpus() == smtlab::limits::kMaxVcpusPerVm);
  tmp.write("r.yaml", head + "topologies: [{name: t, cpu: {vcpus: " + over + "}}]\nbenchmarks: [{kind: hackbench}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":4:37: error: 'vcpus' must be between 1 and " + max + ", got " + over);
  tmp.write("r.yaml", head + "topologies: [{name: t, cpu: {cores: " + over + "}}]\nbenchmarks: [{kind: hackbench}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":4:29: error: topology 't' has " + over + " vCPUs per VM (1x1x" + over + "x1)");

  const std::string chat = "topologies: [{name: t, cpu: {vcpus: 2}}]\nbenchmarks: [{kind: chat, ";
  auto sizes = [&](const std::string& params) {
    tmp.write("r.yaml", head + chat + params + "}]\n");
    const Recipe recipe = load_recipe(r);  // kept: p refers into it
    const auto& p = std::get<ChatParams>(recipe.benchmarks.at(0).params);
    return std::make_pair(p.rooms, p.users);
  };
  CHECK(sizes("rooms: 1, users: 2") == std::make_pair(1, smtlab::limits::kChatMinUsers));
  CHECK(sizes("rooms: 999, users: 999") == std::make_pair(smtlab::limits::kChatMaxRooms, smtlab::limits::kChatMaxUsers));
  tmp.write("r.yaml", head + chat + "rooms: 1000}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":5:34: error: 'rooms' must be between 1 and 999, got 1000");
  tmp.write("r.yaml", head + chat + "users: 1000}]\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() + ":5:34: error: 'users' must be between 2 and 999, got 1000");
}

TEST_CASE("bytes that are not UTF-8 are a located error, in values, comments and referenced files") {
  TempDir tmp;
  const std::string head =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\n";
  const std::string tail = "topologies: [{name: t, cpu: {vcpus: 2}}]\nbenchmarks: [{kind: hackbench}]\n";
  const std::string file = (tmp.path / "r.yaml").string();
  auto r = tmp.write("r.yaml", head + "variants: [{name: v, sysctls: {kernel.x: \"\xe9\"}}]\n" + tail);
  CHECK(error_of(r) == file + ":3:43: error: the file is not valid UTF-8: byte 0xe9 here");
  // A truncated sequence, an overlong form and a surrogate; the column counts bytes, as yaml-cpp's do.
  tmp.write("r.yaml", head + "variants: [{name: v}]  # \xc3\xa9t\xc3\n" + tail);
  CHECK(error_of(r) == file + ":3:29: error: the file is not valid UTF-8: byte 0xc3 here");
  tmp.write("r.yaml", head + "variants: [{name: v}]  # \xc0\xaf\n" + tail);
  CHECK(error_of(r) == file + ":3:26: error: the file is not valid UTF-8: byte 0xc0 here");
  tmp.write("r.yaml", head + "variants: [{name: v}]  # \xed\xa0\x80\n" + tail);
  CHECK(error_of(r) == file + ":3:26: error: the file is not valid UTF-8: byte 0xed here");
  // Well-formed UTF-8 anywhere is fine.
  tmp.write("r.yaml", head + "description: caf\xc3\xa9 \xf0\x9f\x90\xa7\nvariants: [{name: v}]\n" + tail);
  CHECK(load_recipe(r).description == "caf\xc3\xa9 \xf0\x9f\x90\xa7");
  tmp.write("img.yaml", "name: i\ndescription: \xff\n");
  tmp.write("r.yaml",
            "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\nimage: img.yaml\n"
            "variants: [{name: v}]\n" + tail);
  CHECK(error_of(r) == (tmp.path / "img.yaml").string() + ":2:14: error: the file is not valid UTF-8: byte 0xff here");
}

TEST_CASE("a patch whose file name is not UTF-8 is a located error saying to rename it") {
  // Its name goes into the cell's definition, hashed for the id and written into the results as
  // text: `smtlab plan` died in the JSON of the definition (type_error.316) before this check.
  TempDir tmp;
  tmp.write("patches/q/0001-ok.patch", "a\n");
  tmp.write("patches/q/p\xe9.diff", "x\n");  // Latin-1 e-acute
  const std::string head = "kernels: {k: {source: source, tree: debian:linux-source-6.12, patches: ";
  auto r = tmp.write("r.yaml", head + "q}}\nimage: {name: i}\n" + kMinimalTail);
  const std::string file = r.string();
  CHECK(error_of(r) == file + ":1:72: error: patch 'p?.diff' in the patch directory '" + (tmp.path / "patches/q").string() +
                           "' has a name that is not UTF-8 (byte 0xe9)");
  try {
    load_recipe(r);
  } catch (const RecipeError& e) {
    CHECK(e.hint().rfind("rename the file to a UTF-8 name", 0) == 0);
  }
  // In a series file: located at the byte, in the series file.
  tmp.write("patches/series", "# queue\n0001-ok.patch\n  p\xe9.diff  # Latin-1\n");
  fs::copy(tmp.path / "patches/q/0001-ok.patch", tmp.path / "patches/0001-ok.patch");
  fs::copy(tmp.path / "patches/q/p\xe9.diff", tmp.path / "patches/p\xe9.diff");
  tmp.write("r.yaml", head + "series}}\nimage: {name: i}\n" + kMinimalTail);
  CHECK(error_of(r) == (tmp.path / "patches/series").string() +
                           ":3:4: error: patch name 'p?.diff' is not UTF-8 (byte 0xe9 here)");
  // Renamed to UTF-8, both load.
  fs::rename(tmp.path / "patches/q/p\xe9.diff", tmp.path / "patches/q/p\xc3\xa9.diff");
  tmp.write("r.yaml", head + "q}}\nimage: {name: i}\n" + kMinimalTail);
  CHECK(load_recipe(r).kernels.at("k").patches.back().filename() == "p\xc3\xa9.diff");
  tmp.write("patches/series", "0001-ok.patch\np\xc3\xa9.diff\n");
  fs::rename(tmp.path / "patches/p\xe9.diff", tmp.path / "patches/p\xc3\xa9.diff");
  tmp.write("r.yaml", head + "series}}\nimage: {name: i}\n" + kMinimalTail);
  CHECK(load_recipe(r).kernels.at("k").patches.size() == 2);
}

TEST_CASE("a name taken from the file name is checked like a written one") {
  TempDir tmp;
  const std::string body =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\n" + kMinimalTail;
  CHECK(load_recipe(tmp.write("good-name_1.2+x.yaml", body)).name == "good-name_1.2+x");
  for (const std::string& bad : std::vector<std::string>{"my recipe", "caf\xe9", "-x", std::string(65, 'a')}) {
    INFO(bad);
    auto r = tmp.write(bad + ".yaml", body);
    CHECK(error_of(r) == r.string() + ":1:1: error: the recipe has no 'name', and its file name '" + bad +
                             "' is not a valid name");
    tmp.write(bad + ".yaml", "name: ok\n" + body);
    CHECK(load_recipe(r).name == "ok");  // a written name is all it needs
  }
  // An image file without a name is named by its file too; so is a kernel file built on its own.
  tmp.write("my image.yaml", "suite: bookworm\n");
  auto r = tmp.write("r.yaml",
                     "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
                     "image: my image.yaml\n" + kMinimalTail);
  CHECK(error_of(r) == (tmp.path / "my image.yaml").string() +
                           ":1:1: error: the image has no 'name', and its file name 'my image' is not a valid name");
  auto k = tmp.write("my kernel.yaml", "source: debian\npackage: linux-image-6.12.*+deb12-cloud-amd64-unsigned\n");
  try {
    load_kernel_spec(k);
    FAIL("loaded");
  } catch (const RecipeError& e) {
    CHECK(std::string(e.what()) == k.string() + ":1:1: error: the kernel has no 'name', and its file name 'my kernel' is not a valid name");
    CHECK(e.hint().rfind("add name: NAME (names are up to 64 letters", 0) == 0);
  }
  tmp.write("r.yaml", "kernels: {k: my kernel.yaml}\nimage: {name: i}\n" + kMinimalTail);
  CHECK(load_recipe(r).kernels.at("k").name == "k");  // in a recipe, the key names it
}

TEST_CASE("a file is one YAML document: a second one is an error where it starts") {
  TempDir tmp;
  const std::string body =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\n" + kMinimalTail;
  const std::string file = (tmp.path / "r.yaml").string();
  auto r = tmp.write("r.yaml", "---\n" + body + "...\n");  // explicit start and end of the one document
  CHECK(load_recipe(r).benchmarks.size() == 1);
  tmp.write("r.yaml", body + "---\n");  // even an empty second document
  CHECK(error_of(r) == file + ":6:1: error: a second YAML document starts here");
  tmp.write("r.yaml", "---\n" + body + "--- # more\nname: x\n");
  CHECK(error_of(r) == file + ":7:1: error: a second YAML document starts here");
  tmp.write("r.yaml", body + "...\nname: x\n");  // a document after an end marker
  CHECK(error_of(r) == file + ":7:1: error: a second YAML document starts here");
  // Text that starts no value: yaml-cpp makes an empty document of it and stays there (YAML::LoadAll
  // looped forever on these, found by fuzz/run recipe).
  tmp.write("r.yaml", ",");
  CHECK(error_of(r) == file + ":1:1: error: invalid YAML: no value can start with ',' here");
  tmp.write("r.yaml", "[a], b\n");
  CHECK(error_of(r) == file + ":1:4: error: invalid YAML: no value can start with ',' here");
  tmp.write("r.yaml", body + "---\n,\n");  // a second document, whatever is in it
  CHECK(error_of(r) == file + ":6:1: error: a second YAML document starts here");
  tmp.write("k.yaml", "source: debian\npackage: linux-image-6.12.*+deb12-cloud-amd64-unsigned\n---\nsource: path\n");
  tmp.write("r.yaml", "kernels: {k: k.yaml}\nimage: {name: i}\n" + kMinimalTail);
  CHECK(error_of(r) == (tmp.path / "k.yaml").string() + ":3:1: error: a second YAML document starts here");
}

TEST_CASE("an empty path is a located error, not the directory of the file that names it") {
  TempDir tmp;
  const std::string file = (tmp.path / "r.yaml").string();
  auto r = tmp.write("r.yaml", "");
  auto with_kernel = [&](const std::string& kernel, const std::string& image = "{name: i}") {
    tmp.write("r.yaml", "kernels: {k: " + kernel + "}\nimage: " + image + "\n" + kMinimalTail);
    return error_of(r);
  };
  CHECK(with_kernel("{source: source, tree: \"\"}") == file + ":1:37: error: 'tree' is empty");
  CHECK(with_kernel("{source: source, tree: ''}") == file + ":1:37: error: 'tree' is empty");
  CHECK(with_kernel("{source: source, tree: https://example.org/linux.git, ref: ''}") ==
        file + ":1:73: error: 'ref' is empty");
  CHECK(with_kernel("{source: source, tree: debian:linux-source-6.12, patches: ''}") ==
        file + ":1:72: error: 'patches' is empty");
  CHECK(with_kernel("{source: path, bzimage: ''}") == file + ":1:38: error: 'bzimage' is empty");
  tmp.write("vmlinuz", "MZ");
  CHECK(with_kernel("{source: path, bzimage: vmlinuz, modules: ''}") == file + ":1:56: error: 'modules' is empty");
  CHECK(with_kernel("''") == file + ":1:14: error: kernel 'k' is empty");
  CHECK(with_kernel("{source: path, bzimage: vmlinuz}", "''") == file + ":2:8: error: 'image' is empty");
  CHECK(with_kernel("{source: path, bzimage: vmlinuz}", "{name: i, files: [{source: '', destination: /x}]}") ==
        file + ":2:35: error: 'source' is empty");
  try {
    with_kernel("{source: source, tree: ''}");
    load_recipe(r);
  } catch (const RecipeError& e) {
    CHECK(e.hint() == "write a path; relative ones start in the directory of " + file);
  }
}

TEST_CASE("cmdline words are one per item, without whitespace or control characters") {
  TempDir tmp;
  const std::string file = (tmp.path / "r.yaml").string();
  auto r = tmp.write("r.yaml", "");
  auto cmdline = [&](const std::string& value) {
    tmp.write("r.yaml",
              "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
              "image: {name: i}\nvariants: [{name: v}]\n"
              "topologies:\n  - name: t\n    cpu: {vcpus: 2}\n    cmdline: " + value + "\n"
              "benchmarks: [{kind: hackbench}]\n");
    try {
      return load_recipe(r).topologies.at(0).cmdline;
    } catch (const RecipeError& e) {
      return std::vector<std::string>{e.what(), e.hint()};
    }
  };
  using W = std::vector<std::string>;
  CHECK(cmdline("[quiet, nosmt]") == W{"quiet", "nosmt"});
  CHECK(cmdline("quiet  nosmt\t") == W{"quiet", "nosmt"});  // one string: split on spaces
  CHECK(cmdline(">-\n      quiet\n      nosmt") == W{"quiet", "nosmt"});  // folded: the line break is a space
  CHECK(cmdline("['nohz=on', 'isolcpus=1-2']") == W{"nohz=on", "isolcpus=1-2"});
  CHECK(cmdline("[quiet, \"nosmt mitigations=off\"]") ==
        W{file + ":7:22: error: item 'nosmt mitigations=off' of 'cmdline' holds whitespace",
          "one word per item: write [nosmt, mitigations=off]"});
  CHECK(cmdline("[\" nosmt\"]") == W{file + ":7:15: error: item ' nosmt' of 'cmdline' holds whitespace",
                                     "one word per item: write [nosmt]"});
  CHECK(cmdline("[\"\\t\"]") == W{file + ":7:15: error: an item of 'cmdline' holds a line break or another control character",
                                   "one word per item, e.g. [quiet, nosmt]"});
  CHECK(cmdline("[\"a\\0b\"]") == W{file + ":7:15: error: an item of 'cmdline' holds a line break or another control character",
                                     "one word per item, e.g. [quiet, nosmt]"});
  CHECK(cmdline("[\"a\\nb\"]")[0] == file + ":7:15: error: an item of 'cmdline' holds a line break or another control character");
  CHECK(cmdline("|\n      quiet\n      nosmt") ==
        W{file + ":7:14: error: 'cmdline' holds a line break or another control character",
          "write the words on one line, e.g. cmdline: quiet nosmt, or as a list: [quiet, nosmt]"});
}

TEST_CASE("a benchmark's kind is checked before the keys it allows") {
  TempDir tmp;
  const std::string file = (tmp.path / "r.yaml").string();
  auto r = tmp.write("r.yaml", "");
  auto error = [&](const std::string& benchmark) {
    tmp.write("r.yaml",
              "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
              "image: {name: i}\nvariants: [{name: v}]\ntopologies: [{name: t, cpu: {vcpus: 2}}]\n"
              "benchmarks:\n  - " + benchmark + "\n");
    try {
      load_recipe(r);
    } catch (const RecipeError& e) {
      return std::string(e.what()) + " | " + e.hint();
    }
    return std::string("(loaded)");
  };
  CHECK(error("{jobs: [2], kind: kernbenc}") ==
        file + ":6:23: error: unknown benchmark kind 'kernbenc' | did you mean 'kernbench'? allowed: kernbench, chat, hackbench, command");
  CHECK(error("{jobs: [2]}") == file + ":6:5: error: missing key 'kind' in benchmark | allowed: kernbench, chat, hackbench, command");
  CHECK(error("{kind: chat, jobs: [2]}") ==
        file + ":6:18: error: unknown key 'jobs' in chat benchmark | allowed: kind, name, iterations, rooms, users, count, yield, port, discard, stall");
  CHECK(error("{kind: [chat]}") == file + ":6:12: error: 'kind' must be a single value (text), got a list | write it on one line, not as a list or mapping");
  CHECK(error("chat") == file + ":6:5: error: benchmark must be a mapping (key: value), got 'chat' | write a mapping of keys: kind, name, iterations");
  CHECK(error("{kind: chat, kind: hackbench}") == file + ":6:18: error: duplicate key 'kind' in chat benchmark | give each key once");
}

TEST_CASE("a directory or an oversized file is not read as a recipe") {
  TempDir tmp;
  try {
    load_recipe(tmp.path);
    FAIL("loaded a directory");
  } catch (const RecipeError& e) {
    CHECK(std::string(e.what()) == tmp.path.string() + ": error: this is a directory, not a YAML file");
    CHECK(e.hint() == "give the file itself, e.g. recipes/smoke.yaml");
  }
  const std::string big = "name: big\n" + std::string(4 << 20, '#');
  auto r = tmp.write("big.yaml", big);
  try {
    load_recipe(r);
    FAIL("loaded a file over 4 MiB");
  } catch (const RecipeError& e) {
    CHECK(std::string(e.what()) == r.string() + ": error: the file is " + std::to_string(big.size()) +
                                       " bytes, more than the 4 MiB a YAML definition may have");
    CHECK(e.hint() == "recipes, kernel and image definitions are small text files: check that this is the file you meant");
  }
}

TEST_CASE("an empty list item is reported at its list, by number") {
  TempDir tmp;
  const std::string file = (tmp.path / "r.yaml").string();
  auto r = tmp.write("r.yaml", "");
  const std::string kernel = "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n";
  const std::string variant = "variants: [{name: v}]\n";
  const std::string topology = "topologies: [{name: t, cpu: {vcpus: 2}}]\n";
  const std::string bench = "benchmarks: [{kind: hackbench}]\n";
  auto error = [&](const std::string& text) {
    tmp.write("r.yaml", text);
    return error_of(r);
  };
  const std::string image = "image: {name: i}\n";
  CHECK(error(kernel + image + variant + topology + "benchmarks:\n  -\n  - kind: hackbench\n") ==
        file + ":5:1: error: item 1 of 'benchmarks' is empty");
  CHECK(error(kernel + image + variant + "topologies:\n  - {name: t, cpu: {vcpus: 2}}\n  - ~\n" + bench) ==
        file + ":4:1: error: item 2 of 'topologies' is empty");
  CHECK(error(kernel + image + variant + topology + bench + "matrix:\n  exclude:\n    -\n") ==
        file + ":7:3: error: item 1 of 'exclude' is empty");
  CHECK(error(kernel + image + variant + topology + bench + "matrix:\n  order:\n    - variant\n    -\n    - topology\n") ==
        file + ":7:3: error: item 2 of 'order' is empty");
  CHECK(error(kernel + image + "variants:\n  - name: v\n    cmdline:\n      - quiet\n      -\n" + topology + bench) ==
        file + ":5:5: error: item 2 of 'cmdline' is empty");
  CHECK(error(kernel + image + variant + topology + "benchmarks:\n  - kind: hackbench\n    groups:\n      - 1\n      -\n") ==
        file + ":7:5: error: item 2 of 'groups' is empty");
  CHECK(error(kernel + image + variant + topology + "benchmarks:\n  - kind: command\n    run:\n      - true\n      -\n") ==
        file + ":7:5: error: item 2 of 'run' is empty");
  CHECK(error(kernel + "image:\n  name: i\n  packages:\n    - gcc\n    -\n" + variant + topology + bench) ==
        file + ":4:3: error: item 2 of 'packages' is empty");
  CHECK(error(kernel + "image:\n  name: i\n  files:\n    -\n" + variant + topology + bench) ==
        file + ":4:3: error: item 1 of 'files' is empty");
  CHECK(error("kernels:\n  k:\n    source: source\n    tree: debian:linux-source-6.12\n    fragments:\n      -\n" + image +
              variant + topology + bench) == file + ":5:5: error: item 1 of 'fragments' is empty");
  CHECK(error("kernels:\n  k:\n    source: source\n    tree: debian:linux-source-6.12\n    patches:\n      -\n" + image +
              variant + topology + bench) == file + ":5:5: error: item 1 of 'patches' is empty");
}

TEST_CASE("a mapping of names that is empty or not a mapping gets a hint saying what to write") {
  TempDir tmp;
  const std::string file = (tmp.path / "r.yaml").string();
  auto r = tmp.write("r.yaml", "");
  auto error = [&](const std::string& kernels) {
    tmp.write("r.yaml", "kernels: " + kernels + "\nimage: {name: i}\n" + kMinimalTail);
    try {
      load_recipe(r);
    } catch (const RecipeError& e) {
      return std::string(e.what()) + " | " + e.hint();
    }
    return std::string("(loaded)");
  };
  const std::string hint =
      " | name each kernel, one per line: a file (e.g. debian-6.12: ../kernels/debian-6.12.yaml) or an inline mapping";
  CHECK(error("") == file + ":1:1: error: 'kernels' is empty" + hint);
  CHECK(error("{}") == file + ":1:10: error: 'kernels' is empty" + hint);
  CHECK(error("[a, b]") == file + ":1:10: error: kernels must be a mapping (key: value), got a list" + hint);
  CHECK(error("{[a]: k.yaml}") == file + ":1:11: error: keys in kernels must be plain words" + hint);
  // Every hint says something: no mapping is left with an empty list of keys.
  for (const std::string& bad : {std::string(""), std::string("{}"), std::string("[a]"), std::string("{[a]: k.yaml}")}) {
    const std::string e = error(bad);
    CHECK(e.substr(e.size() - 2) != ": ");
    CHECK(e.find(" | ") + 3 < e.size());
  }
}

TEST_CASE("matrix interleave: false is accepted, true refused at load time until runs support it") {
  TempDir tmp;
  const std::string head =
      "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
      "image: {name: i}\n" + kMinimalTail;
  auto r = tmp.write("r.yaml", head + "matrix: {interleave: false}\n");
  CHECK(load_recipe(r).variants.size() == 1);
  tmp.write("r.yaml", head + "matrix:\n  order: [topology, benchmark, variant]\n  interleave: on\n");
  CHECK(error_of(r) == (tmp.path / "r.yaml").string() +
                           ":8:3: error: matrix 'interleave: true' is not supported yet: variants run one cell after the other, "
                           "in plan order");
}

TEST_CASE("aliases work, and a merge key says it is not supported wherever it is") {
  TempDir tmp;
  const std::string file = (tmp.path / "r.yaml").string();
  const std::string kernel = "kernels: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n";
  auto r = tmp.write("r.yaml", kernel + "image: {name: i}\nvariants: [{name: v, sysctls: &s {vm.swappiness: 10}}, "
                                         "{name: w, sysctls: *s}]\n" + "topologies: [{name: t, cpu: {vcpus: 2}}]\n"
                                         "benchmarks: [{kind: hackbench}]\n");
  CHECK(load_recipe(r).variants.at(1).sysctls == std::map<std::string, std::string>{{"vm.swappiness", "10"}});
  tmp.write("r.yaml", kernel + "image: {name: i}\nvariants: [{name: v, sysctls: {<<: {vm.swappiness: 10}}}]\n" +
                          "topologies: [{name: t, cpu: {vcpus: 2}}]\nbenchmarks: [{kind: hackbench}]\n");
  CHECK(error_of(r) == file + ":3:32: error: merge keys ('<<') are not supported");
  tmp.write("r.yaml", "kernels:\n  <<: {k: {source: debian, package: linux-image-6.12.*+deb12-cloud-amd64-unsigned}}\n"
                      "image: {name: i}\n" + kMinimalTail);
  CHECK(error_of(r) == file + ":2:3: error: merge keys ('<<') are not supported");
}

TEST_CASE("*.diff files are patches too: in a patch directory and named on their own") {
  TempDir tmp;
  tmp.write("patches/q/0001-a.patch", "a\n");
  tmp.write("patches/q/0002-b.diff", "b\n");
  tmp.write("patches/q/README", "not a patch\n");
  tmp.write("patches/only-diffs/fix.diff", "c\n");
  tmp.write("patches/one.diff", "--- a/x\n+++ b/x\n");
  auto patches = [&](const std::string& written) {
    tmp.write("r.yaml", "kernels: {k: {source: source, tree: debian:linux-source-6.12, patches: " + written +
                            "}}\nimage: {name: i}\n" + kMinimalTail);
    return load_recipe(tmp.path / "r.yaml").kernels.at("k").patches;
  };
  using P = std::vector<fs::path>;
  CHECK(patches("q") == P{tmp.path / "patches/q/0001-a.patch", tmp.path / "patches/q/0002-b.diff"});
  CHECK(patches("only-diffs") == P{tmp.path / "patches/only-diffs/fix.diff"});  // was silently no patch
  CHECK(patches("one.diff") == P{tmp.path / "patches/one.diff"});               // was read as a series file
}
