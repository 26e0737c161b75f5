#pragma once
// The recipe model: what an experiment is, as value types. Parsing and validation live in
// recipe_loader.hpp; nothing here knows about VMs, caches or results.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace smtlab::recipe {

// Where something was written, for error messages ("file:line:column").
struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
  std::string str() const;
};

// ---- kernels (kernels/*.yaml, or inline in a recipe) ------------------------------------------
enum class KernelSource { debian, source, path };

struct KernelSpec {
  std::string name;
  KernelSource source = KernelSource::debian;
  // debian: a Debian kernel image package. `package` may end in a glob-free prefix such as
  // "linux-image-6.12.*-cloud-amd64-unsigned"; resolution to an exact name+version is the
  // kernel module's job. `version` pins it when given.
  std::string package;
  std::string version;
  // source: tree is "debian:linux-source-6.12", a local tarball or directory, or a git URL.
  std::string tree;
  std::string git_ref;
  std::string base_config = "defconfig";  // defconfig | tinyconfig | debian:<image package>
  std::vector<std::filesystem::path> fragments;  // absolute, in order
  std::vector<std::filesystem::path> patches;    // absolute, in apply order
  // path: a prebuilt kernel.
  std::filesystem::path bzimage;
  std::filesystem::path modules_dir;  // optional
  std::vector<std::string> cmdline;   // always added to this kernel's command line
  std::filesystem::path definition_file;  // empty when inline
  SourceLocation where;
};

// ---- guest image (images/*.yaml) ---------------------------------------------------------------
struct ImageFile {
  std::filesystem::path source;  // absolute path on the host
  std::string destination;       // absolute path in the guest
};

struct ImageSpec {
  std::string name;
  std::string suite = "bookworm";
  std::string variant = "apt";  // mmdebstrap variant
  std::string mirror;           // empty: the host's configured Debian mirror
  std::vector<std::string> packages;
  std::vector<ImageFile> files;
  int size_mib = 0;  // 0: fitted to the content
  std::filesystem::path definition_file;
  SourceLocation where;
};

// ---- variants: a kernel plus the settings that make it a different experiment -----------------
enum class CoreSchedMode { none, per_benchmark };

struct Variant {
  std::string name;    // column name in comparison tables
  std::string kernel;  // key into Recipe::kernels
  std::vector<std::string> cmdline;
  std::map<std::string, std::string> sysctls;       // "kernel.sched_autogroup_enabled" -> "0"
  std::map<std::string, std::string> sched_tunables;  // under /sys/kernel/debug/sched: "base_slice_ns"
  CoreSchedMode coresched = CoreSchedMode::none;
  SourceLocation where;
};

// ---- topologies --------------------------------------------------------------------------------
enum class Pinning { none, vcpu, core, shared };
// The host scheduling policy of the guests' QEMU threads: normal (SCHED_OTHER, as a plain libvirt
// guest) or batch (SCHED_BATCH: a woken vCPU thread does not preempt the one running on its host
// CPU, so vCPU threads overcommitting host CPUs switch less often).
enum class HostSched { normal, batch };
enum class VmRole { benchmark, noise };

struct NoiseSpec {
  int workers = 0;  // 0: one per vCPU
  int load = 100;   // percent
};

struct Topology {
  std::string name;
  int vms = 1;
  int sockets = 1, dies = 1, cores = 1, threads = 1;
  bool smt = false;  // threads > 1
  int memory_mib = 1024;
  std::vector<std::string> cmdline;  // e.g. "nosmt"
  std::vector<int> host_cpus;        // empty: all host CPUs
  Pinning pinning = Pinning::none;
  HostSched host_sched = HostSched::normal;
  std::vector<VmRole> roles;  // one per VM
  NoiseSpec noise;
  SourceLocation where;
  int vcpus() const { return sockets * dies * cores * threads; }
  std::string shape() const;  // "SxDxCxT", e.g. "1x1x2x2"
};

// ---- benchmarks --------------------------------------------------------------------------------
struct KernbenchParams {
  std::vector<int> jobs;  // empty: powers of two up to 2 x vCPUs, as mmtests does
  bool warmup = true;
  // Scale: "synthetic" (a generated C tree of `files` files, for TCG/CI) or "linux-source"
  // (Debian's linux-source tree with `config`, the real kernbench, for KVM).
  std::string tree = "synthetic";
  int files = 24;
  std::string config = "defconfig";
  std::string target;  // empty: "all" for synthetic, "vmlinux" for linux-source
};

enum class YieldMode { both, rx, tx, none };

struct ChatParams {
  int rooms = 10;
  int users = 20;
  int count = 100;
  YieldMode yield = YieldMode::both;
  int port = 8000;
  // Warm-up runs before the `iterations` measured ones (reported as warm-up, left out of the statistics):
  // the guest runs discard + iterations. With the default 3 iterations, Volano's protocol: 4 runs, the last 3 measured.
  int discard = 1;
  // `stall`: a run in which no message arrives for this many seconds fails at once, saying where
  // every user stood (instead of waiting out the cell timeout). Not part of the cell's definition.
  int stall_s = 60;
};

struct HackbenchParams {
  std::vector<int> groups = {1, 2, 4};
  int loops = 100;
  int fds = 20;
  bool threads = false;
  bool pipes = false;
};

// A user's own workload, timed per iteration in the guest: `argv` runs once per iteration, without
// a shell (write [sh, -c, "..."] for one); a non-zero exit fails the cell.
struct CommandParams {
  std::vector<std::string> argv;  // non-empty; argv[0] is a program name or path in the guest
};

using BenchmarkParams = std::variant<KernbenchParams, ChatParams, HackbenchParams, CommandParams>;

struct Benchmark {
  std::string name;  // defaults to the kind
  std::string kind;  // "kernbench" | "chat" | "hackbench" | "command"
  int iterations = 3;
  BenchmarkParams params;
  SourceLocation where;
};

// ---- monitors ----------------------------------------------------------------------------------
struct Monitors {
  bool vmstat = true;
  double vmstat_interval_s = 10;
  bool schedstat = true;
  bool cpu_busy = true;
};

// ---- which combinations, in which order --------------------------------------------------------
enum class Axis { variant, topology, benchmark };

struct MatrixFilter {  // empty field = any
  std::string variant, topology, benchmark;
  SourceLocation where;
  bool matches(const std::string& v, const std::string& t, const std::string& b) const;
};

struct Matrix {
  std::vector<MatrixFilter> include;  // empty: the full product
  std::vector<MatrixFilter> exclude;
  std::vector<Axis> order = {Axis::benchmark, Axis::topology, Axis::variant};  // outermost first
  // (matrix 'interleave: true', variants alternating per iteration, is refused by the loader: not
  // supported yet.)
  // Whether the combination is a cell: it matches an include filter (or there are none) and no
  // exclude filter.
  bool selects(const std::string& variant, const std::string& topology, const std::string& benchmark) const;
};

struct Timeouts {
  int boot_s = 300;   // domain start to the agent's first record
  int cell_s = 3600;  // whole cell
};

struct Recipe {
  std::string name;
  std::string description;
  std::filesystem::path file;  // absolute
  std::string text;            // the recipe file as read
  std::string sha256;          // of text
  std::map<std::string, KernelSpec> kernels;
  ImageSpec image;
  std::vector<Variant> variants;
  std::vector<Topology> topologies;
  std::vector<Benchmark> benchmarks;
  Monitors monitors;
  Matrix matrix;
  Timeouts timeouts;
  // share_boot: the cells of one variant and topology (everything but the benchmark) run in one
  // boot, one benchmark after the other (a sync and a wait for quiet vCPUs between them). Trades isolation
  // (page cache, dirty state, slab) for the boot per cell. Not part of any cell's definition: it
  // changes how cells run, not what they are, so cell ids do not change with it.
  bool share_boot = false;
  // parallel: boots may run at the same time when their topologies name disjoint host_cpus and
  // they share no benchmark (cells of one benchmark are compared with each other, so they never
  // overlap); each such guest's emulator threads stay inside its host_cpus. A topology without
  // host_cpus uses the whole host and runs alone. Not part of any cell's definition either.
  bool parallel = false;
};

std::string to_string(KernelSource);
std::string to_string(CoreSchedMode);
std::string to_string(Pinning);
std::string to_string(HostSched);
std::string to_string(VmRole);
std::string to_string(YieldMode);
std::string to_string(Axis);

}  // namespace smtlab::recipe
