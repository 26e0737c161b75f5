// Recipes: the top-level file that names kernels, variants, topologies and benchmarks.
#include "recipe/recipe_loader.hpp"

#include <algorithm>

#include "recipe/spec_parsers.hpp"
#include "recipe/suggest.hpp"
#include "util/cpulist.hpp"
#include "util/limits.hpp"
#include "util/sha256.hpp"

namespace smtlab::recipe {

namespace fs = std::filesystem;
using namespace detail;

namespace {

const std::vector<std::string> kRecipeKeys = {"name",       "description", "image",    "kernels", "variants",
                                              "topologies", "benchmarks",  "monitors", "matrix",  "timeouts",
                                              "share_boot", "parallel"};
const std::vector<std::string> kVariantKeys = {"name", "kernel", "cmdline", "sysctls", "sched", "coresched"};
const std::vector<std::string> kTopologyKeys = {"name",      "vms",     "cpu",   "memory", "cmdline",
                                                "host_cpus", "pinning", "host_sched", "roles", "noise"};
const std::vector<std::string> kCpuKeys = {"sockets", "dies", "cores", "threads", "vcpus", "smt"};
const std::vector<std::string> kKinds = {"kernbench", "chat", "hackbench", "command"};

std::string quoted_list(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

// Remembers names per section to report duplicates with the first definition.
struct Names {
  std::string what;  // "variant"
  std::vector<std::pair<std::string, SourceLocation>> seen;
  void add(const Entry& e, const std::string& n) {
    for (const auto& [s, where] : seen)
      if (s == n)
        e.fail("duplicate " + what + " name '" + n + "'",
               "the first is at " + where.str() + "; " + what + " names must be unique");
    seen.emplace_back(n, e.where());
  }
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    for (const auto& [s, w] : seen) out.push_back(s);
    return out;
  }
};

// ---- kernels and image ---------------------------------------------------------------------------
KernelSpec kernel_entry(const YamlFile& f, const Entry& e) {
  if (e.value.IsMap()) return parse_kernel(f, e.value, "kernel '" + e.key + "'", &e.key_node);
  if (e.value.IsScalar() && e.value.Scalar().empty())
    e.fail("kernel '" + e.key + "' is empty", "name a kernel file, e.g. ../kernels/debian-6.12.yaml, or write the kernel inline as a mapping");
  std::string written = path_text(e);
  fs::path p = f.resolve(written);
  if (auto why = path_problem(p, PathKind::file); !why.empty())
    e.fail("kernel file '" + f.display_of(written).string() + "' " + why,
           "paths are relative to the directory of " + f.display().string() + "; or write the kernel inline as a mapping");
  auto kf = YamlFile::load(p, f.display_of(written));
  KernelSpec k = parse_kernel(kf, kf.root(), "kernel definition", nullptr);
  k.definition_file = kf.absolute();
  return k;
}

ImageSpec image_entry(const YamlFile& f, const Entry& e) {
  if (e.value.IsMap()) return parse_image(f, e.value, "image", &e.key_node);
  std::string written = path_text(e);
  fs::path p = f.resolve(written);
  if (auto why = path_problem(p, PathKind::file); !why.empty())
    e.fail("image file '" + f.display_of(written).string() + "' " + why,
           "paths are relative to the directory of " + f.display().string() + "; or write the image inline as a mapping");
  auto imf = YamlFile::load(p, f.display_of(written));
  ImageSpec img = parse_image(imf, imf.root(), "image definition", nullptr);
  img.definition_file = imf.absolute();
  return img;
}

// ---- variants ------------------------------------------------------------------------------------
bool valid_setting_key(const std::string& k, bool allow_dots) {
  if (k.empty() || k[0] == '/' || k[0] == '.' || k.find("..") != std::string::npos || k.back() == '/') return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '/' || (allow_dots && c == '.')))
      return false;
  return true;
}

std::map<std::string, std::string> settings(const YamlFile& f, const Entry& e, bool sysctl) {
  auto out = string_map(e);
  for (const auto& kv : e.value) {
    std::string k = kv.first.Scalar(), v = kv.second.Scalar();
    if (!valid_setting_key(k, sysctl))
      f.fail(kv.first, "'" + k + "' is not a valid " + (sysctl ? "sysctl name" : "scheduler tunable name"),
             sysctl ? "write it as in sysctl -a, e.g. kernel.sched_autogroup_enabled"
                    : "write a file name under /sys/kernel/debug/sched, e.g. base_slice_ns");
    if (v.empty() || v.find('\n') != std::string::npos)
      f.fail(kv.second.IsNull() ? kv.first : kv.second, "'" + k + "' needs a one-line value");
  }
  return out;
}

Variant parse_variant(const YamlFile& f, const YAML::Node& node, const std::map<std::string, KernelSpec>& kernels) {
  Map m(f, node, "variant", kVariantKeys);
  Variant v;
  v.where = f.at(node);
  v.name = name(m.need("name", "the name is the column of comparison tables, e.g. name: eevdf"));
  std::vector<std::string> kernel_names;
  for (const auto& [n, k] : kernels) kernel_names.push_back(n);
  if (auto e = m.get("kernel")) {
    v.kernel = text(*e);
    if (!kernels.count(v.kernel))
      e->fail("unknown kernel '" + v.kernel + "'", did_you_mean(v.kernel, kernel_names, "kernels defined"));
  } else if (kernels.size() == 1) {
    v.kernel = kernels.begin()->first;
  } else {
    m.fail("missing key 'kernel' in variant '" + v.name + "'", "kernels defined: " + quoted_list(kernel_names));
  }
  if (auto e = m.get("cmdline")) v.cmdline = words(*e);
  if (auto e = m.get("sysctls")) v.sysctls = settings(f, *e, true);
  if (auto e = m.get("sched")) v.sched_tunables = settings(f, *e, false);
  if (auto e = m.get("coresched"))
    v.coresched = choice<CoreSchedMode>(*e, {{"none", CoreSchedMode::none}, {"per-benchmark", CoreSchedMode::per_benchmark}});
  return v;
}

// ---- topologies ----------------------------------------------------------------------------------
void parse_cpu(const YamlFile& f, const Entry& cpu_entry, Topology& t) {
  Map c(f, cpu_entry.value, "cpu of topology '" + t.name + "'", kCpuKeys, &cpu_entry.key_node);
  std::optional<bool> smt;
  if (auto e = c.get("smt")) smt = boolean(*e);
  std::optional<long> vcpus;
  if (auto e = c.get("vcpus")) vcpus = integer(*e, 1, limits::kMaxVcpusPerVm);
  bool shape = c.has("sockets") || c.has("dies") || c.has("cores") || c.has("threads");
  if (shape) {
    t.sockets = c.has("sockets") ? static_cast<int>(integer(*c.get("sockets"), 1, 16)) : 1;
    t.dies = c.has("dies") ? static_cast<int>(integer(*c.get("dies"), 1, 16)) : 1;
    if (auto e = c.get("cores")) t.cores = static_cast<int>(integer(*e, 1, 512));
    else if (vcpus) t.cores = 0;  // derived below
    else c.fail("cpu of topology '" + t.name + "' has no 'cores'", "give cores (and sockets, dies, threads), or vcpus");
    if (auto e = c.get("threads")) {
      t.threads = static_cast<int>(integer(*e, 1, 8));
      if (smt == false && t.threads > 1)
        e->fail("threads: " + std::to_string(t.threads) + " contradicts smt: off",
                "SMT off means one thread per core: set threads: 1, or smt: on");
    } else {
      t.threads = smt == true ? 2 : 1;
    }
    if (smt == true && t.threads == 1)
      c.get("smt")->fail("smt: on needs threads > 1", "set threads: 2, or smt: off");
    if (t.cores == 0) {
      long per_core = static_cast<long>(t.sockets) * t.dies * t.threads;
      if (*vcpus % per_core != 0)
        c.get("vcpus")->fail("vcpus: " + std::to_string(*vcpus) + " is not a multiple of sockets x dies x threads = " +
                                 std::to_string(per_core),
                             "give cores explicitly, or a vcpus count that divides evenly");
      t.cores = static_cast<int>(*vcpus / per_core);
    }
    long product = static_cast<long>(t.sockets) * t.dies * t.cores * t.threads;
    if (vcpus && product != *vcpus)
      c.get("vcpus")->fail("vcpus: " + std::to_string(*vcpus) + " does not match sockets x dies x cores x threads = " +
                               t.shape() + " = " + std::to_string(product),
                           "give either vcpus or the shape, or make them agree");
    if (product > limits::kMaxVcpusPerVm)
      cpu_entry.fail("topology '" + t.name + "' has " + std::to_string(product) + " vCPUs per VM (" + t.shape() + ")",
                     "at most " + std::to_string(limits::kMaxVcpusPerVm) + " vCPUs per VM (QEMU's q35 machine)");
  } else if (vcpus) {
    t.threads = smt == true ? 2 : 1;
    if (*vcpus % t.threads != 0)
      c.get("vcpus")->fail("vcpus: " + std::to_string(*vcpus) + " with smt: on needs an even number",
                           "two threads per core: give an even vcpus, or the shape (sockets, dies, cores, threads)");
    t.cores = static_cast<int>(*vcpus / t.threads);
  } else {
    c.fail("cpu of topology '" + t.name + "' gives no vCPU count",
           "give vcpus (with smt: on|off), or sockets, dies, cores, threads");
  }
  t.smt = t.threads > 1;
}

Topology parse_topology(const YamlFile& f, const YAML::Node& node) {
  Map m(f, node, "topology", kTopologyKeys);
  Topology t;
  t.where = f.at(node);
  t.name = name(m.need("name", "e.g. name: smt"));
  if (auto e = m.get("vms")) t.vms = static_cast<int>(integer(*e, 1, 16));
  parse_cpu(f, m.need("cpu", "e.g. cpu: {sockets: 1, dies: 1, cores: 2, threads: 2} or cpu: {vcpus: 4, smt: on}"), t);
  if (auto e = m.get("memory")) t.memory_mib = mebibytes(*e, 64, 1024 * 1024);
  if (auto e = m.get("cmdline")) t.cmdline = words(*e);
  std::optional<Entry> host = m.get("host_cpus");
  if (host) {
    std::string s = text(*host);
    if (s != "all") {
      try {
        t.host_cpus = parse_cpulist(s);
      } catch (const Error& err) {
        host->fail("host_cpus " + std::string(err.what()), "write a CPU list such as 0-3,8-11, or all");
      }
      if (t.host_cpus.empty()) host->fail("host_cpus is empty", "write a CPU list such as 0-3,8-11, or all");
    }
  }
  std::optional<Entry> pin = m.get("pinning");
  if (pin)
    t.pinning = choice<Pinning>(*pin, {{"none", Pinning::none}, {"vcpu", Pinning::vcpu}, {"core", Pinning::core},
                                       {"shared", Pinning::shared}});
  if (t.pinning == Pinning::vcpu && !t.host_cpus.empty()) {
    long need = static_cast<long>(t.vms) * t.vcpus();
    if (need > static_cast<long>(t.host_cpus.size()))
      pin->fail("pinning: vcpu needs a host CPU for each of the " + std::to_string(need) + " vCPUs (" +
                    std::to_string(t.vms) + " VM x " + std::to_string(t.vcpus()) + "), but host_cpus '" +
                    host->value.Scalar() + "' has " + std::to_string(t.host_cpus.size()),
                "say pinning: shared to overcommit those CPUs, give more host_cpus, or use fewer vCPUs");
  }
  if (t.pinning == Pinning::core && !t.host_cpus.empty()) {
    long need = static_cast<long>(t.vms) * t.sockets * t.dies * t.cores;
    if (need > static_cast<long>(t.host_cpus.size()))
      pin->fail("pinning: core needs a host core for each of the " + std::to_string(need) + " virtual cores (" +
                    std::to_string(t.vms) + " VM x " + std::to_string(t.sockets * t.dies * t.cores) +
                    "), but host_cpus '" + host->value.Scalar() + "' has " + std::to_string(t.host_cpus.size()) +
                    " CPUs",
                "say pinning: shared to overcommit those CPUs, give more host_cpus, or use fewer cores");
  }
  if (auto e = m.get("host_sched"))
    t.host_sched = choice<HostSched>(*e, {{"normal", HostSched::normal}, {"batch", HostSched::batch}});
  if (auto e = m.get("roles")) {
    if (!e->value.IsSequence()) e->fail("'roles' must be a list, one role per VM", "write e.g. [benchmark, noise]");
    no_empty_items(*e, "a role (benchmark or noise)");
    for (const auto& item : e->value) {
      Entry sub{&f, "role", item, item};
      t.roles.push_back(choice<VmRole>(sub, {{"benchmark", VmRole::benchmark}, {"noise", VmRole::noise}}));
    }
    if (static_cast<int>(t.roles.size()) != t.vms)
      e->fail("'roles' lists " + std::to_string(t.roles.size()) + " role(s) for " + std::to_string(t.vms) + " VM(s)",
              "give one role per VM: benchmark or noise");
    if (std::find(t.roles.begin(), t.roles.end(), VmRole::benchmark) == t.roles.end())
      e->fail("no VM of topology '" + t.name + "' has role benchmark", "at least one VM must run the benchmark");
  } else {
    t.roles.assign(t.vms, VmRole::noise);
    t.roles[0] = VmRole::benchmark;
  }
  if (auto e = m.get("noise")) {
    Map n(f, e->value, "noise of topology '" + t.name + "'", {"workers", "load"}, &e->key_node);
    if (auto w = n.get("workers")) t.noise.workers = static_cast<int>(integer(*w, 0, 1024));
    if (auto l = n.get("load")) t.noise.load = static_cast<int>(integer(*l, 1, 100));
    if (std::find(t.roles.begin(), t.roles.end(), VmRole::noise) == t.roles.end())
      f.fail(e->key_node, "'noise' is set but no VM of topology '" + t.name + "' has role noise",
             "add noise to 'roles' (one role per VM), or remove 'noise'");
  }
  return t;
}

// ---- benchmarks ----------------------------------------------------------------------------------
std::vector<std::string> benchmark_keys(const std::string& kind) {
  std::vector<std::string> keys = {"kind", "name", "iterations"};
  std::vector<std::string> extra;
  if (kind == "kernbench") extra = {"jobs", "warmup", "scale"};
  if (kind == "chat") extra = {"rooms", "users", "count", "yield", "port", "discard", "stall"};
  if (kind == "hackbench") extra = {"groups", "loops", "fds", "threads", "pipes"};
  if (kind == "command") extra = {"run"};
  keys.insert(keys.end(), extra.begin(), extra.end());
  return keys;
}

// run: [program, arg, ...]: a list of one-line strings, run without a shell.
CommandParams command_params(const YamlFile& f, const Entry& e) {
  const std::string hint = "write the command as a list, e.g. run: [sh, -c, \"sleep 1\"] (no shell unless you name one)";
  auto kind_of = [](const YAML::Node& n) -> std::string {
    return n.IsScalar() ? "'" + n.Scalar() + "'" : n.IsSequence() ? "a list" : n.IsMap() ? "a mapping" : "nothing";
  };
  if (!e.value.IsSequence())
    e.fail("'run' must be a list of strings (the program and its arguments), got " + kind_of(e.value), hint);
  if (e.value.size() == 0) e.fail("'run' is empty", hint);
  no_empty_items(e, "the program or an argument (\"\" for an empty one)");
  CommandParams p;
  for (const auto& item : e.value) {
    if (!item.IsScalar())
      f.fail(item.IsNull() ? e.value : item, "items of 'run' must be strings, got " + kind_of(item), hint);
    const std::string& s = item.Scalar();
    if (s.find('\0') != std::string::npos || s.size() > 65536)
      f.fail(item, "an item of 'run' holds a NUL byte or is longer than 64 KiB", hint);
    if (p.argv.empty() && s.empty()) f.fail(item, "the program (first item of 'run') is empty", hint);
    p.argv.push_back(s);
  }
  return p;
}

Benchmark parse_benchmark(const YamlFile& f, const YAML::Node& node) {
  // The kind decides which keys are allowed, so it is checked first: a misspelt kind is reported as
  // that, not as an unknown key of the kind it was meant to be ("kind: kernbenc, jobs: [2]").
  if (!node.IsMap()) Map(f, node, "benchmark", benchmark_keys(""));  // says it must be a mapping
  Benchmark b;
  b.where = f.at(node);
  std::optional<Entry> kind_entry;
  for (const auto& kv : node)
    if (!kind_entry && kv.first.IsScalar() && kv.first.Scalar() == "kind") kind_entry = Entry{&f, "kind", kv.first, kv.second};
  if (!kind_entry) f.fail(node, "missing key 'kind' in benchmark", "allowed: " + quoted_list(kKinds));
  b.kind = text(*kind_entry);
  if (std::find(kKinds.begin(), kKinds.end(), b.kind) == kKinds.end())
    kind_entry->fail("unknown benchmark kind '" + b.kind + "'", did_you_mean(b.kind, kKinds));
  Map m(f, node, b.kind + " benchmark", benchmark_keys(b.kind));
  b.name = m.has("name") ? name(*m.get("name")) : b.kind;
  if (auto e = m.get("iterations")) b.iterations = static_cast<int>(integer(*e, 1, 1000));
  if (b.kind == "kernbench") {
    KernbenchParams p;
    if (auto e = m.get("jobs")) for (long j : integers(*e, 1, 4096)) p.jobs.push_back(static_cast<int>(j));
    if (auto e = m.get("warmup")) p.warmup = boolean(*e);
    if (auto e = m.get("scale")) {
      Map s(f, e->value, "scale of benchmark '" + b.name + "'", {"tree", "files", "config", "target"}, &e->key_node);
      if (auto t = s.get("tree"))
        p.tree = choice<std::string>(*t, {{"synthetic", "synthetic"}, {"linux-source", "linux-source"}});
      if (auto x = s.get("files")) {
        if (p.tree != "synthetic")
          f.fail(x->key_node, "'files' applies only to tree: synthetic", "remove it, or set tree: synthetic");
        p.files = static_cast<int>(integer(*x, 1, 100000));
      }
      if (auto x = s.get("config")) {
        if (p.tree != "linux-source")
          f.fail(x->key_node, "'config' applies only to tree: linux-source", "remove it, or set tree: linux-source");
        p.config = name(*x);
      }
      if (auto x = s.get("target")) p.target = name(*x);
    }
    if (p.target.empty()) p.target = p.tree == "synthetic" ? "all" : "vmlinux";
    b.params = p;
  } else if (b.kind == "chat") {
    ChatParams p;
    if (auto e = m.get("rooms")) p.rooms = static_cast<int>(integer(*e, 1, limits::kChatMaxRooms));
    if (auto e = m.get("users")) p.users = static_cast<int>(integer(*e, limits::kChatMinUsers, limits::kChatMaxUsers));
    if (auto e = m.get("count")) p.count = static_cast<int>(integer(*e, 1, 10000000));
    if (auto e = m.get("yield"))
      p.yield = choice<YieldMode>(*e, {{"both", YieldMode::both}, {"rx", YieldMode::rx}, {"tx", YieldMode::tx},
                                       {"none", YieldMode::none}});
    if (auto e = m.get("port")) p.port = static_cast<int>(integer(*e, 1024, 65535));
    if (auto e = m.get("stall")) p.stall_s = static_cast<int>(integer(*e, 1, 86400));
    // Warm-up runs before the `iterations` measured ones, as the guest runs them (discard + iterations).
    if (auto e = m.get("discard")) p.discard = static_cast<int>(integer(*e, 0, 1000));
    b.params = p;
  } else if (b.kind == "command") {
    b.params = command_params(f, m.need("run", "give the command as a list, e.g. run: [sh, -c, \"make -j4\"]"));
  } else {
    HackbenchParams p;
    if (auto e = m.get("groups")) {
      p.groups.clear();
      for (long g : integers(*e, 1, 1000)) p.groups.push_back(static_cast<int>(g));
    }
    if (auto e = m.get("loops")) p.loops = static_cast<int>(integer(*e, 1, 10000000));
    if (auto e = m.get("fds")) p.fds = static_cast<int>(integer(*e, 1, 1000));
    if (auto e = m.get("threads")) p.threads = boolean(*e);
    if (auto e = m.get("pipes")) p.pipes = boolean(*e);
    b.params = p;
  }
  return b;
}

// ---- monitors, matrix, timeouts ------------------------------------------------------------------
Monitors parse_monitors(const YamlFile& f, const Entry& e) {
  Monitors mon;
  Map m(f, e.value, "monitors", {"vmstat", "schedstat", "cpu_busy"}, &e.key_node);
  if (auto v = m.get("vmstat")) {
    if (v->value.IsMap()) {
      Map vm(f, v->value, "vmstat monitor", {"interval"}, &v->key_node);
      mon.vmstat = true;
      if (auto i = vm.get("interval")) mon.vmstat_interval_s = number(*i, 0.1, 3600);
    } else {
      mon.vmstat = boolean(*v);
    }
  }
  if (auto v = m.get("schedstat")) mon.schedstat = boolean(*v);
  if (auto v = m.get("cpu_busy")) mon.cpu_busy = boolean(*v);
  return mon;
}

MatrixFilter parse_filter(const YamlFile& f, const YAML::Node& node, const std::string& list, const Names& variants,
                          const Names& topologies, const Names& benchmarks) {
  Map m(f, node, "matrix " + list + " filter", {"variant", "topology", "benchmark"});
  MatrixFilter flt;
  flt.where = f.at(node);
  auto known = [&](const char* key, const Names& names, std::string& out) {
    if (auto e = m.get(key)) {
      out = text(*e);
      auto all = names.list();
      if (std::find(all.begin(), all.end(), out) == all.end())
        e->fail("matrix " + list + " names unknown " + key + " '" + out + "'", did_you_mean(out, all, std::string(key) + "s defined"));
    }
  };
  known("variant", variants, flt.variant);
  known("topology", topologies, flt.topology);
  known("benchmark", benchmarks, flt.benchmark);
  if (m.entries().empty()) m.fail("an empty matrix " + list + " filter matches everything", "name a variant, topology and/or benchmark");
  return flt;
}

Matrix parse_matrix(const YamlFile& f, const Entry& e, const Names& variants, const Names& topologies, const Names& benchmarks) {
  Matrix mx;
  Map m(f, e.value, "matrix", {"include", "exclude", "order", "interleave"}, &e.key_node);
  for (const char* list : {"include", "exclude"})
    if (auto l = m.get(list))
      for (const auto& item : sequence(*l, "{variant, topology, benchmark} filter"))
        (std::string(list) == "include" ? mx.include : mx.exclude)
            .push_back(parse_filter(f, item, list, variants, topologies, benchmarks));
  if (auto o = m.get("order")) {
    const std::string hint = "list the three axes, outermost first, e.g. [benchmark, topology, variant]";
    if (!o->value.IsSequence() || o->value.size() != 3)
      o->fail("'order' must list variant, topology and benchmark once each", hint);
    no_empty_items(*o, "an axis (variant, topology or benchmark)");
    mx.order.clear();
    for (const auto& item : o->value) {
      Entry sub{&f, "axis", item, item};
      Axis a = choice<Axis>(sub, {{"variant", Axis::variant}, {"topology", Axis::topology}, {"benchmark", Axis::benchmark}});
      if (std::find(mx.order.begin(), mx.order.end(), a) != mx.order.end())
        f.fail(item, "axis '" + to_string(a) + "' is listed twice in 'order'", hint);
      mx.order.push_back(a);
    }
  }
  // Accepted as false, so that recipes can say so; true is refused here, at plan time, not by the run.
  if (auto i = m.get("interleave"); i && boolean(*i))
    f.fail(i->key_node, "matrix 'interleave: true' is not supported yet: variants run one cell after the other, in plan order",
           "remove 'interleave' (or set it to false); to run each variant right after the others, order the matrix with "
           "variant innermost, e.g. order: [benchmark, topology, variant]");
  return mx;
}

Timeouts parse_timeouts(const YamlFile& f, const Entry& e) {
  Timeouts t;
  Map m(f, e.value, "timeouts", {"boot", "cell"}, &e.key_node);
  if (auto b = m.get("boot")) t.boot_s = static_cast<int>(integer(*b, 10, 86400));
  if (auto c = m.get("cell")) t.cell_s = static_cast<int>(integer(*c, 10, 7 * 86400));
  return t;
}

}  // namespace

Recipe load_recipe(const fs::path& file) {
  auto f = YamlFile::load(file, file);
  Recipe r;
  r.file = f.absolute();
  r.text = f.text();
  r.sha256 = sha256_hex(r.text);
  if (f.root().IsNull()) f.fail(f.root(), "the recipe is empty", "see recipes/smoke.yaml for an annotated example");
  Map top(f, f.root(), "recipe", kRecipeKeys);
  r.name = top.has("name") ? name(*top.get("name")) : default_name(f, f.root(), "the recipe");
  if (auto e = top.get("description")) r.description = text(*e);

  auto kernels = top.need("kernels", "name each kernel: a file (kernels/*.yaml) or an inline mapping");
  const std::string kernels_hint =
      "name each kernel, one per line: a file (e.g. debian-6.12: ../kernels/debian-6.12.yaml) or an inline mapping";
  if (kernels.value.IsNull() || (kernels.value.IsMap() && kernels.value.size() == 0))
    kernels.fail("'kernels' is empty", kernels_hint);
  Map km(f, kernels.value, "kernels", {}, &kernels.key_node, kernels_hint);
  for (const auto& e : km.entries()) {
    Entry named{&f, "kernel name", e.key_node, e.key_node};
    name(named);
    KernelSpec k = kernel_entry(f, e);
    k.name = e.key;
    r.kernels.emplace(e.key, std::move(k));
  }
  r.image = image_entry(f, top.need("image", "name the guest image file, e.g. image: ../images/bench.yaml"));

  Names variants{"variant", {}}, topologies{"topology", {}}, benchmarks{"benchmark", {}};
  for (const auto& node : sequence(top.need("variants", "list the variants to compare (each a kernel plus settings)"), "variant")) {
    r.variants.push_back(parse_variant(f, node, r.kernels));
    variants.add(*Map(f, node, "variant", kVariantKeys).get("name"), r.variants.back().name);
  }
  for (const auto& node : sequence(top.need("topologies", "list the guest topologies (VMs, vCPUs, SMT, pinning)"), "topology")) {
    r.topologies.push_back(parse_topology(f, node));
    topologies.add(*Map(f, node, "topology", kTopologyKeys).get("name"), r.topologies.back().name);
  }
  for (const auto& node : sequence(top.need("benchmarks", "list the benchmarks: kernbench, chat, hackbench, command"), "benchmark")) {
    r.benchmarks.push_back(parse_benchmark(f, node));
    Benchmark& b = r.benchmarks.back();
    Map m(f, node, "benchmark", benchmark_keys(b.kind));
    if (auto e = m.get("name")) benchmarks.add(*e, b.name);
    else benchmarks.add(m.need("kind"), b.name);
  }
  if (auto e = top.get("monitors")) r.monitors = parse_monitors(f, *e);
  if (auto e = top.get("matrix")) {
    r.matrix = parse_matrix(f, *e, variants, topologies, benchmarks);
    bool any = false;
    for (const auto& v : r.variants)
      for (const auto& t : r.topologies)
        for (const auto& b : r.benchmarks) any = any || r.matrix.selects(v.name, t.name, b.name);
    if (!any) f.fail(e->key_node, "the matrix selects no cells", "loosen 'include' or 'exclude'");
  }
  if (auto e = top.get("timeouts")) r.timeouts = parse_timeouts(f, *e);
  if (auto e = top.get("share_boot")) r.share_boot = boolean(*e);
  if (auto e = top.get("parallel")) r.parallel = boolean(*e);
  return r;
}

}  // namespace smtlab::recipe
