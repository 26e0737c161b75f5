#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "plan/plan.hpp"
#include "plan/schedule.hpp"
#include "recipe/recipe_loader.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"
#include "checkout.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using namespace smtlab;
using namespace smtlab::plan;
using namespace smtlab::recipe;

namespace {

const fs::path kSource = smtlab::test::source_dir();
const fs::path kGood = kSource / "tests/recipe/good";

std::vector<std::string> ids(const Plan& p) {
  std::vector<std::string> out;
  for (const auto& c : p.cells) out.push_back(c.id);
  return out;
}

std::string triple(const Cell& c) { return c.variant.name + "/" + c.topology.name + "/" + c.benchmark.name; }

std::string error_of(const Recipe& r, const PlanOptions& o) {
  try {
    make_plan(r, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(planned)";
}

}  // namespace

TEST_CASE("the smoke recipe plans its nine cells in matrix order") {
  Recipe r = load_recipe(kSource / "recipes/smoke.yaml");
  Plan p = make_plan(r);
  CHECK(p.recipe_name == "smoke");
  CHECK(p.recipe_sha256 == r.sha256);
  std::vector<std::string> got;
  for (const auto& c : p.cells) got.push_back(triple(c));
  // order: [benchmark, topology, variant], outermost first; overcommit only with eevdf + kernbench.
  CHECK(got == std::vector<std::string>{"cfs/smt/kernbench", "eevdf/smt/kernbench", "cfs/nosmt/kernbench",
                                        "eevdf/nosmt/kernbench", "eevdf/overcommit/kernbench", "cfs/smt/chat",
                                        "eevdf/smt/chat", "cfs/nosmt/chat", "eevdf/nosmt/chat"});
  for (size_t i = 0; i < p.cells.size(); ++i) {
    CHECK(p.cells[i].index == static_cast<int>(i));
    CHECK(p.cells[i].kernel.name == p.cells[i].variant.kernel);
    CHECK(p.cells[i].id.size() == 12);
  }
  const auto all_ids = ids(p);
  CHECK(std::set<std::string>(all_ids.begin(), all_ids.end()).size() == p.cells.size());
  CHECK(p.cells[0].iterations == 2);
  CHECK(p.cells[5].iterations == 3);
}

TEST_CASE("the seed recipes plan every cell of their matrices") {
  Plan cs = make_plan(load_recipe(kSource / "recipes/coresched-kernbench.yaml"));
  REQUIRE(cs.cells.size() == 8);  // {stock, csc} x {alone, overcommit} x {HT, noHT}
  std::set<std::string> seen;
  for (const auto& c : cs.cells) {
    seen.insert(c.variant.name + "/" + c.topology.name);
    CHECK(std::get<KernbenchParams>(c.benchmark.params).jobs == std::vector<int>{2, 4, 8, 16});
    CHECK(c.iterations == 5);
    CHECK(c.topology.vcpus() == (c.topology.smt ? 8 : 4));
    CHECK(c.variant.coresched == (c.variant.name == "csc" ? CoreSchedMode::per_benchmark : CoreSchedMode::none));
  }
  CHECK(seen.size() == 8);
  Plan chat = make_plan(load_recipe(kSource / "recipes/chat-runqueue.yaml"));
  REQUIRE(chat.cells.size() == 3);
  CHECK(chat.cells[2].variant.sched_tunables.at("base_slice_ns") == "15000000");
}

TEST_CASE("every shipped recipe, the bench/ inputs included, loads and plans") {
  int loaded = 0;
  for (const char* dir : {"recipes", "bench/recipes"})
    for (const auto& entry : fs::directory_iterator(kSource / dir)) {
      if (entry.path().extension() != ".yaml") continue;
      INFO(entry.path());
      Plan p = make_plan(load_recipe(entry.path()));
      CHECK_FALSE(p.cells.empty());
      ++loaded;
    }
  CHECK(loaded >= 9);
  // noise-sched's normal topology is noise's cell: BENCHMARKS.md compares runs of the two.
  auto id_of = [](const std::string& recipe, const std::string& topology, const std::string& kind) {
    for (const auto& c : make_plan(load_recipe(kSource / recipe)).cells)
      if (c.topology.name == topology && c.benchmark.kind == kind) return c.id;
    return std::string("none");
  };
  CHECK(id_of("bench/recipes/noise-sched.yaml", "smt", "kernbench") == id_of("bench/recipes/noise.yaml", "smt", "kernbench"));
  CHECK(id_of("bench/recipes/noise-sched.yaml", "smt-batch", "kernbench") !=
        id_of("bench/recipes/noise.yaml", "smt", "kernbench"));
}

TEST_CASE("cell ids are stable across loads and runs") {
  Plan a = make_plan(load_recipe(kSource / "recipes/smoke.yaml"));
  Plan b = make_plan(load_recipe(kSource / "recipes/smoke.yaml"));
  CHECK(ids(a) == ids(b));
  for (const auto& c : a.cells) {
    CHECK(c.id == cell_id(c));
    CHECK(c.id == sha256_hex(cell_definition(c).dump()).substr(0, 12));
  }
  // A fixed expectation: the id is a content hash of the definition, not of the order or the host.
  const Cell& first = a.cells[0];
  nlohmann::json def = cell_definition(first);
  CHECK(def["variant"]["name"] == "cfs");
  CHECK(def["kernel"]["package"] == "linux-image-6.1.*-cloud-amd64-unsigned");
  CHECK(def["topology"]["threads"] == 2);
  CHECK(def["benchmark"]["params"]["jobs"] == nlohmann::json::array({2, 4}));
  CHECK(def["iterations"] == 2);
  CHECK(def.dump().find(kSource.string()) == std::string::npos);  // no host paths
  // host_sched came later: at its default it is not in the definition, so older ids stay.
  CHECK_FALSE(def["topology"].contains("host_sched"));
  // The same cell keeps its id when the plan is filtered or sharded.
  PlanOptions only;
  only.filters = {"topology=overcommit"};
  Plan f = make_plan(load_recipe(kSource / "recipes/smoke.yaml"), only);
  REQUIRE(f.cells.size() == 1);
  CHECK(f.cells[0].id == a.cells[4].id);
  CHECK(f.cells[0].index == 4);
}

TEST_CASE("cell ids change when any parameter changes") {
  Recipe r = load_recipe(kGood / "everything.yaml");
  Plan base = make_plan(r);
  REQUIRE_FALSE(base.cells.empty());
  Cell cell = base.cells[0];
  const std::string id = cell_id(cell);
  auto differs = [&](auto mutate) {
    Cell c = cell;
    mutate(c);
    return cell_id(c) != id;
  };
  CHECK(differs([](Cell& c) { c.iterations += 1; }));
  CHECK(differs([](Cell& c) { c.variant.name = "other"; }));
  CHECK(differs([](Cell& c) { c.variant.cmdline.push_back("quiet"); }));
  CHECK(differs([](Cell& c) { c.variant.sysctls["kernel.foo"] = "1"; }));
  CHECK(differs([](Cell& c) { c.variant.sched_tunables["base_slice_ns"] = "1"; }));
  CHECK(differs([](Cell& c) { c.variant.coresched = CoreSchedMode::per_benchmark; }));
  CHECK(differs([](Cell& c) { c.kernel.package += "x"; }));
  CHECK(differs([](Cell& c) { c.kernel.version = "1"; }));
  CHECK(differs([](Cell& c) { c.kernel.cmdline.push_back("x"); }));
  CHECK(differs([](Cell& c) { c.topology.threads = 1; }));
  CHECK(differs([](Cell& c) { c.topology.memory_mib += 1; }));
  CHECK(differs([](Cell& c) { c.topology.host_cpus = {0}; }));
  CHECK(differs([](Cell& c) { c.topology.pinning = Pinning::core; }));
  CHECK(differs([](Cell& c) { c.topology.host_sched = HostSched::batch; }));
  CHECK(differs([](Cell& c) { c.topology.vms = 4; }));
  CHECK(differs([](Cell& c) { c.topology.noise.load = 10; }));
  CHECK(differs([](Cell& c) { c.topology.cmdline.push_back("nosmt"); }));
  CHECK(differs([](Cell& c) { std::get<KernbenchParams>(c.benchmark.params).files += 1; }));
  CHECK(differs([](Cell& c) { std::get<KernbenchParams>(c.benchmark.params).jobs.push_back(64); }));
  CHECK(differs([](Cell& c) { std::get<KernbenchParams>(c.benchmark.params).warmup = false; }));
  CHECK(differs([](Cell& c) { c.benchmark.params = ChatParams{}; }));
  CHECK_FALSE(differs([](Cell& c) { c.index = 99; }));  // position is not part of the definition
  CHECK_FALSE(differs([](Cell& c) { c.kernel.where.line = 99; }));
}

TEST_CASE("cell ids follow the content of fragment and patch files") {
  const fs::path tmp = smtlab::test::scratch_dir("plan");
  fs::create_directories(tmp / "fragments");
  fs::create_directories(tmp / "patches/q");
  std::ofstream(tmp / "fragments/a.config") << "CONFIG_SCHED_CORE=y\n";
  std::ofstream(tmp / "patches/q/1.patch") << "one\n";
  std::ofstream(tmp / "r.yaml")
      << "kernels: {k: {source: source, tree: debian:linux-source-6.12, fragments: [a.config], patches: q}}\n"
         "image: {name: i}\nvariants: [{name: v}]\ntopologies: [{name: t, cpu: {vcpus: 2}}]\n"
         "benchmarks: [{kind: hackbench}]\n";
  auto id = [&] { return make_plan(load_recipe(tmp / "r.yaml")).cells.at(0).id; };
  const std::string first = id();
  CHECK(id() == first);
  std::ofstream(tmp / "fragments/a.config") << "CONFIG_SCHED_CORE=n\n";
  const std::string second = id();
  CHECK(second != first);
  std::ofstream(tmp / "patches/q/1.patch") << "two\n";
  CHECK(id() != second);
}

TEST_CASE("a local kernel tree or modules directory is the same cell with or without a trailing slash") {
  const fs::path tmp = smtlab::test::scratch_dir("plan");
  fs::create_directories(tmp / "trees/linux-a");
  fs::create_directories(tmp / "trees/linux-b");
  fs::create_directories(tmp / "lib/modules/6.1.0");
  std::ofstream(tmp / "vmlinuz") << "MZ";
  auto id = [&](const std::string& kernel) {
    std::ofstream(tmp / "r.yaml") << "kernels: {k: " + kernel + "}\n"
                                          "image: {name: i}\nvariants: [{name: v}]\ntopologies: [{name: t, cpu: {vcpus: 2}}]\n"
                                          "benchmarks: [{kind: hackbench}]\n";
    return make_plan(load_recipe(tmp / "r.yaml")).cells.at(0).id;
  };
  const std::string a = id("{source: source, tree: trees/linux-a}");
  CHECK(id("{source: source, tree: trees/linux-a/}") == a);
  CHECK(id("{source: source, tree: ./trees//linux-a/.}") == a);
  CHECK(id("{source: source, tree: " + (tmp / "trees/linux-a/").string() + "}") == a);
  CHECK(id("{source: source, tree: trees/linux-b/}") != a);  // the tree's name is in the definition
  const std::string m = id("{source: path, bzimage: vmlinuz, modules: lib/modules/6.1.0}");
  CHECK(id("{source: path, bzimage: vmlinuz, modules: lib/modules/6.1.0/}") == m);
  CHECK(id("{source: path, bzimage: vmlinuz}") != m);
}

TEST_CASE("order follows matrix.order, ties by declaration order") {
  Recipe r = load_recipe(kGood / "everything.yaml");
  Plan p = make_plan(r);
  std::vector<std::string> got;
  for (const auto& c : p.cells) got.push_back(triple(c));
  // order: [variant, benchmark, topology]; include/exclude as in everything.yaml.
  CHECK(got == std::vector<std::string>{
                   "base/quad-ht/kb-default", "base/pinned/kb-default", "base/quad-ht/kb-real", "base/pinned/kb-real",
                   "base/quad-ht/chat",       "base/pinned/chat",       "base/quad-ht/hackbench", "base/trio/hackbench",
                   "base/pinned/hackbench",   "tuned/quad-ht/kb-default", "tuned/flat/kb-default",
                   "tuned/pinned/kb-default", "tuned/quad-ht/chat",     "tuned/flat/chat",      "tuned/pinned/chat",
                   "tuned/quad-ht/hackbench", "tuned/flat/hackbench",   "tuned/trio/hackbench", "tuned/pinned/hackbench"});
  r.matrix.order = {Axis::topology, Axis::variant, Axis::benchmark};
  Plan q = make_plan(r);
  CHECK(triple(q.cells[0]) == "base/quad-ht/kb-default");
  CHECK(triple(q.cells[1]) == "base/quad-ht/kb-real");
  CHECK(triple(q.cells[4]) == "tuned/quad-ht/kb-default");
  CHECK(triple(q.cells.back()) == "tuned/pinned/hackbench");
  CHECK(q.cells.size() == p.cells.size());
}

TEST_CASE("kernbench job counts default to powers of two up to twice the vCPUs") {
  CHECK(default_kernbench_jobs(1) == std::vector<int>{2});
  CHECK(default_kernbench_jobs(4) == std::vector<int>{2, 4, 8});
  CHECK(default_kernbench_jobs(3) == std::vector<int>{2, 4, 6});
  CHECK(default_kernbench_jobs(8) == std::vector<int>{2, 4, 8, 16});
  Plan p = make_plan(load_recipe(kGood / "everything.yaml"));
  for (const auto& c : p.cells)
    if (c.benchmark.name == "kb-default")
      CHECK(std::get<KernbenchParams>(c.benchmark.params).jobs == default_kernbench_jobs(c.topology.vcpus()));
}

TEST_CASE("shards cover every cell exactly once") {
  Recipe r = load_recipe(kGood / "everything.yaml");
  Plan all = make_plan(r);
  for (int n : {1, 2, 3, 4, 7, 19, 25}) {
    std::multiset<std::string> seen;
    for (int k = 0; k < n; ++k) {
      PlanOptions o;
      o.shard_index = k;
      o.shard_count = n;
      Plan s = make_plan(r, o);
      for (const auto& c : s.cells) {
        seen.insert(c.id);
        CHECK(c.index % n == k);  // unfiltered: position == index
      }
    }
    const auto want = ids(all);
    CHECK(seen == std::multiset<std::string>(want.begin(), want.end()));
  }
  PlanOptions bad;
  bad.shard_index = 2;
  bad.shard_count = 2;
  CHECK(error_of(r, bad) == "invalid shard 3/2");
  nlohmann::json m = github_matrix(all, 4);
  CHECK(m.dump() == R"({"include":[{"shard":"1/4"},{"shard":"2/4"},{"shard":"3/4"},{"shard":"4/4"}]})");
  CHECK(github_matrix(all, 100)["include"].size() == all.cells.size());
  CHECK_THROWS_AS(github_matrix(all, 0), Error);
}

TEST_CASE("a shard's record names it and every shard's cells, for merge to tell an absent one") {
  Recipe r = load_recipe(kGood / "everything.yaml");
  PlanOptions o;
  o.filters = {"benchmark=" + make_plan(r).cells[0].benchmark.name};
  o.iterations = 2;
  const Plan filtered = make_plan(r, o);
  REQUIRE(filtered.cells.size() >= 3);
  CHECK(shard_record(filtered, o).is_null());  // not sharded: nothing to record
  o.shard_index = 1;
  o.shard_count = 3;
  const Plan s = make_plan(r, o);
  const nlohmann::json rec = shard_record(s, o);
  CHECK(rec["index"] == 2);  // 1-based, as --shard 2/3
  CHECK(rec["count"] == 3);
  CHECK(rec["method"] == "position-mod-count");
  CHECK(rec["plan_cells"].get<std::vector<std::string>>() == ids(filtered));  // the filtered plan, before sharding
  CHECK(rec["filters"] == nlohmann::json(o.filters));
  CHECK(rec["iterations"] == 2);
  // The method as written: shard k holds the positions p of plan_cells with p mod n = k - 1.
  std::vector<std::string> mine;
  for (size_t p = 1; p < filtered.cells.size(); p += 3) mine.push_back(filtered.cells[p].id);
  CHECK(ids(s) == mine);
}

TEST_CASE("filters select cells by id prefix or by name, and reject what matches nothing") {
  Recipe r = load_recipe(kSource / "recipes/smoke.yaml");
  Plan all = make_plan(r);
  PlanOptions o;
  o.filters = {"variant=cfs"};
  CHECK(make_plan(r, o).cells.size() == 4);
  o.filters = {"variant=cfs", "benchmark=chat"};  // different kinds: both hold
  CHECK(make_plan(r, o).cells.size() == 2);
  o.filters = {"topology=smt", "topology=overcommit"};  // same kind: either
  CHECK(make_plan(r, o).cells.size() == 5);
  o.filters = {all.cells[3].id.substr(0, 6)};
  REQUIRE(make_plan(r, o).cells.size() == 1);
  CHECK(make_plan(r, o).cells[0].id == all.cells[3].id);
  o.filters = {"variant=rsdl"};
  CHECK(error_of(r, o) == "no cell of recipe 'smoke' matches filter 'variant=rsdl'");
  o.filters = {"colour=red"};
  CHECK(error_of(r, o) == "unknown filter 'colour=red'");
  o.filters = {"variant=cfs", "topology=overcommit"};  // each matches, together nothing
  CHECK(error_of(r, o) == "the filters together select no cell");
  o.filters = {};
  o.iterations = 7;
  for (const auto& c : make_plan(r, o).cells) CHECK(c.iterations == 7);
  CHECK(ids(make_plan(r, o)) != ids(all));  // iterations are part of the definition
  // Chat's discard is warm-up runs before the measured ones: one measured iteration is still one.
  o.iterations = 1;
  Plan one = make_plan(r, o);
  REQUIRE(one.cells.size() == all.cells.size());
  for (const auto& c : one.cells) {
    CHECK(c.iterations == 1);
    if (auto* chat = std::get_if<ChatParams>(&c.benchmark.params)) CHECK(chat->discard == 1);
  }
}

TEST_CASE("the plan table is aligned, one row per cell, and deterministic") {
  // The table without boot groups (smoke shares boots; the share_boot test checks that table).
  Recipe r = load_recipe(kSource / "recipes/smoke.yaml");
  r.share_boot = false;
  Plan p = make_plan(r);
  std::string table = format_plan_table(p, 2);
  CHECK(table == format_plan_table(p, 2));
  std::vector<std::string> lines;
  std::string line;
  for (char ch : table) {
    if (ch == '\n') lines.push_back(line), line.clear();
    else line += ch;
  }
  REQUIRE(lines.size() == p.cells.size() + 1);
  CHECK(lines[0].rfind("id            variant  kernel       topology    shape    vms  vcpus/host   benchmark  params", 0) == 0);
  CHECK(lines[5] == p.cells[4].id +
                        "  eevdf    debian-6.12  overcommit  1x1x2x2  2    8/2 (4.00x)  kernbench  jobs=2,4 warmup "
                        "synthetic:4 target=all         2");
  // host_cpus "all" uses the host count given; an explicit host_cpus set wins.
  CHECK(format_plan_table(p, 16).find("4/16 (0.25x)") != std::string::npos);
  CHECK(format_plan_table(p, 16).find("8/2 (4.00x)") != std::string::npos);
  const size_t col = lines[0].find("benchmark");
  for (const auto& l : lines) CHECK((l.substr(col, 4) == "benc" || l.substr(col, 4) == "kern" || l.substr(col, 4) == "chat"));
}

TEST_CASE("the plan as JSON carries every cell with its definition") {
  Plan p = make_plan(load_recipe(kSource / "recipes/smoke.yaml"));
  nlohmann::json j = plan_to_json(p);
  CHECK(j["recipe"] == "smoke");
  CHECK(j["recipe_sha256"] == p.recipe_sha256);
  REQUIRE(j["cells"].size() == p.cells.size());
  const auto& c = j["cells"][4];
  CHECK(c["id"] == p.cells[4].id);
  CHECK(c["index"] == 4);
  CHECK(c["topology"] == "overcommit");
  CHECK(c["shape"] == "1x1x2x2");
  CHECK(c["vms"] == 2);
  CHECK(c["vcpus_per_vm"] == 4);
  CHECK(c["host_cpus"] == "0-1");
  CHECK(c["roles"] == nlohmann::json::array({"benchmark", "noise"}));
  CHECK(c["definition"] == cell_definition(p.cells[4]));
  CHECK(sha256_hex(c["definition"].dump()).substr(0, 12) == p.cells[4].id);
}

TEST_CASE("with share_boot the cells of one kernel, variant and topology form a boot group, and ids do not change") {
  Recipe shared = load_recipe(kSource / "recipes/smoke.yaml");
  CHECK(shared.share_boot);  // smoke's setting (the default is false)
  Recipe alone = shared;
  alone.share_boot = false;
  Plan p = make_plan(shared);
  Plan q = make_plan(alone);
  CHECK(p.share_boot);
  CHECK_FALSE(q.share_boot);
  CHECK(ids(p) == ids(q));  // share_boot changes how cells run, not what they are

  // smoke's order is benchmark, topology, variant: the kernbench cells first, then chat; each
  // variant x topology's two cells share a boot, overcommit's one kernbench cell boots alone.
  auto groups = boot_groups(p.cells, true);
  REQUIRE(groups.size() == 5);
  CHECK(groups[0] == std::vector<size_t>{0, 5});
  CHECK(groups[1] == std::vector<size_t>{1, 6});
  CHECK(groups[2] == std::vector<size_t>{2, 7});
  CHECK(groups[3] == std::vector<size_t>{3, 8});
  CHECK(groups[4] == std::vector<size_t>{4});
  for (const auto& g : groups)
    for (size_t i : g) {
      CHECK(triple(p.cells[i]).substr(0, triple(p.cells[i]).rfind('/')) ==
            triple(p.cells[g[0]]).substr(0, triple(p.cells[g[0]]).rfind('/')));
      CHECK(boot_group_key(p.cells[i]) == boot_group_key(p.cells[g[0]]));
    }
  CHECK(boot_group_key(p.cells[0]) != boot_group_key(p.cells[1]));
  CHECK(boot_groups(p.cells, false).size() == 9);

  // The table's first column and the JSON name the groups.
  std::string table = format_plan_table(p, 2);
  CHECK(table.rfind("boot  id  ", 0) == 0);
  CHECK(table.find("\ng1    " + p.cells[5].id + "  cfs") != std::string::npos);
  CHECK(table.find("\ng5    " + p.cells[4].id + "  eevdf") != std::string::npos);
  CHECK(format_plan_table(q, 2).rfind("id  ", 0) == 0);
  nlohmann::json j = plan_to_json(p);
  CHECK(j["share_boot"] == true);
  REQUIRE(j["boot_groups"].size() == 5);
  CHECK(j["boot_groups"][0] == nlohmann::json::array({p.cells[0].id, p.cells[5].id}));
  CHECK(j["cells"][5]["boot_group"] == p.cells[0].id);
  CHECK(j["cells"][4]["boot_group"] == p.cells[4].id);
  CHECK(plan_to_json(q)["cells"][5]["boot_group"] == p.cells[5].id);

  // A shard keeps its own cells' groups: the group is formed from what the shard runs.
  PlanOptions half;
  half.shard_count = 2;
  Plan s = make_plan(shared, half);
  for (const auto& g : boot_groups(s.cells, true))
    for (size_t i : g) CHECK(boot_group_key(s.cells[i]) == boot_group_key(s.cells[g[0]]));
}

namespace {
Boot boot_on(std::vector<int> cpus, std::set<std::string> benchmarks, std::vector<size_t> cells = {0}) {
  return Boot{std::move(cells), std::move(cpus), std::move(benchmarks)};
}
}  // namespace

TEST_CASE("boots overlap only on disjoint named host CPUs and with no benchmark in common") {
  CHECK(may_run_together(boot_on({0}, {"kernbench"}), boot_on({1}, {"chat"})));
  CHECK_FALSE(may_run_together(boot_on({0}, {"kernbench"}), boot_on({1}, {"kernbench"})));  // compared cells
  CHECK_FALSE(may_run_together(boot_on({0, 1}, {"kernbench"}), boot_on({1, 2}, {"chat"})));  // CPU 1 in both
  CHECK_FALSE(may_run_together(boot_on({}, {"kernbench"}), boot_on({1}, {"chat"})));        // the whole host
  CHECK_FALSE(may_run_together(boot_on({0}, {"kernbench", "chat"}), boot_on({1}, {"chat"})));  // a shared boot
}

TEST_CASE("the boot schedule starts what fits, in plan order, and nothing else until a boot ends") {
  // a: CPU 0 kernbench, b: CPU 1 kernbench, c: CPU 0 chat, d: CPU 1 chat, e: the whole host.
  std::vector<Boot> boots = {boot_on({0}, {"kernbench"}), boot_on({1}, {"kernbench"}), boot_on({0}, {"chat"}),
                             boot_on({1}, {"chat"}), boot_on({}, {"hackbench"})};
  SECTION("parallel") {
    BootSchedule s(boots, true);
    CHECK(s.next() == 0u);
    CHECK(s.next() == 3u);  // b shares kernbench with a, c CPU 0 with a: d goes first
    CHECK_FALSE(s.next());
    s.finished(0);
    CHECK_FALSE(s.next());  // b needs d's CPU 1; c would run chat next to d's chat
    s.finished(3);
    CHECK(s.next() == 1u);
    CHECK(s.next() == 2u);  // c: CPU 0, chat, next to b's CPU 1, kernbench
    CHECK(s.running() == std::vector<size_t>{1, 2});
    CHECK_FALSE(s.next());  // e needs the whole host
    s.finished(2);
    s.finished(1);
    CHECK(s.next() == 4u);
    CHECK_FALSE(s.done());
    s.finished(4);
    CHECK(s.done());
  }
  SECTION("one at a time without parallel, in plan order") {
    BootSchedule s(boots, false);
    for (size_t i = 0; i < boots.size(); ++i) {
      CHECK(s.next() == i);
      CHECK_FALSE(s.next());
      s.finished(i);
    }
    CHECK_FALSE(s.next());
    CHECK(s.done());
  }
  SECTION("stop: no boot starts after an interrupt, and done once the running ones end") {
    BootSchedule s(boots, true);
    CHECK(s.next() == 0u);
    CHECK(s.next() == 3u);
    s.stop();
    s.finished(0);
    CHECK_FALSE(s.next());
    CHECK_FALSE(s.done());
    s.finished(3);
    CHECK(s.done());
  }
  SECTION("waves for smtlab plan") {
    CHECK(schedule_waves(boots, true) == std::vector<std::vector<size_t>>{{0, 3}, {1, 2}, {4}});
    CHECK(schedule_waves(boots, false).size() == 5);
  }
}
