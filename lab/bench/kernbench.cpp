#include "bench/kernbench.hpp"

#include <glob.h>

#include <algorithm>
#include <filesystem>

#include "bench/spawn.hpp"
#include "util/error.hpp"

namespace smtlab::bench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string find_tarball(const std::string& given) {
  if (!given.empty()) {
    if (!fs::exists(given)) throw Error("kernbench: kernel source tarball " + given + " not found");
    return given;
  }
  glob_t g{};
  std::string found;
  if (glob("/usr/src/linux-source-*.tar.xz", 0, nullptr, &g) == 0 && g.gl_pathc > 0)
    found = g.gl_pathv[g.gl_pathc - 1];
  globfree(&g);
  if (found.empty())
    throw Error("kernbench: no /usr/src/linux-source-*.tar.xz in this system",
                "install Debian's linux-source-6.x package in the guest image, or use tree: synthetic");
  return found;
}

}  // namespace

std::string kernbench_setup(const KernbenchOptions& o, Observer& observer) {
  std::error_code ec;
  fs::remove_all(o.workdir, ec);
  fs::create_directories(o.workdir, ec);
  if (ec) throw Error("kernbench: cannot create " + o.workdir + ": " + ec.message());
  if (o.tree == "synthetic") {
    std::string dir = o.workdir + "/tree";
    write_synthetic_tree(dir, o.files);
    observer.event("setup", {{"tree", "synthetic"}, {"files", o.files}, {"dir", dir}});
    return dir;
  }
  if (o.tree != "linux-source") throw Error("kernbench: unknown tree \"" + o.tree + "\"", "use synthetic or linux-source");
  std::string tarball = find_tarball(o.tarball);
  SpawnOptions so;
  so.timeout_s = o.timeout_s;
  auto untar = spawn_checked({"tar", "-xf", tarball, "-C", o.workdir}, so);
  std::string dir;
  for (auto& e : fs::directory_iterator(o.workdir))
    if (e.is_directory() && fs::exists(e.path() / "Makefile")) dir = e.path();
  if (dir.empty()) throw Error("kernbench: " + tarball + " did not contain a kernel tree with a Makefile");
  so.cwd = dir;
  auto conf = spawn_checked({"make", o.config}, so);
  observer.event("setup", {{"tree", "linux-source"},
                           {"tarball", tarball},
                           {"dir", dir},
                           {"config", o.config},
                           {"untar_s", untar.elapsed_s},
                           {"config_s", conf.elapsed_s}});
  return dir;
}

void run_kernbench(const KernbenchOptions& o, Observer& observer) {
  if (o.jobs.empty()) throw Error("kernbench: no job counts");
  const std::string dir = kernbench_setup(o, observer);
  const std::string target = !o.target.empty() ? o.target : o.tree == "synthetic" ? "all" : "vmlinux";
  SpawnOptions so;
  so.cwd = dir;
  so.timeout_s = o.timeout_s;
  SpawnOptions timed = so;
  timed.coresched = o.coresched;
  auto make_clean = [&] { spawn_checked({"make", "clean"}, so); };

  auto emit = [&](int n, int iteration, bool warmup, const SpawnResult& r) {
    const std::string j = std::to_string(n);
    observer.sample({"kernbench", iteration, warmup, "elsp-" + j, r.elapsed_s, "s", "lower"});
    observer.sample({"kernbench", iteration, warmup, "user-" + j, r.user_s, "s", "lower"});
    observer.sample({"kernbench", iteration, warmup, "syst-" + j, r.sys_s, "s", "lower"});
    observer.sample({"kernbench", iteration, warmup, "vcsw-" + j, static_cast<double>(r.vcsw), "count", "lower"});
    observer.sample({"kernbench", iteration, warmup, "icsw-" + j, static_cast<double>(r.icsw), "count", "lower"});
  };

  if (o.warmup) {
    const int n = *std::max_element(o.jobs.begin(), o.jobs.end());
    make_clean();
    observer.event("warmup", {{"benchmark", "kernbench"}, {"jobs", n}});
    auto r = spawn_checked({"make", "-j" + std::to_string(n), target}, timed);
    emit(n, 0, true, r);
  }
  for (int n : o.jobs)
    for (int it = 1; it <= o.iterations; ++it) {
      make_clean();
      observer.before_iteration("kernbench-j" + std::to_string(n) + "-" + std::to_string(it));
      observer.event("iteration-start", {{"benchmark", "kernbench"}, {"jobs", n}, {"iteration", it}});
      auto r = spawn_checked({"make", "-j" + std::to_string(n), target}, timed);
      json detail = {{"benchmark", "kernbench"}, {"jobs", n}, {"iteration", it}, {"elapsed_s", r.elapsed_s}};
      if (o.coresched) detail["cookie"] = r.cookie;
      observer.event("iteration-end", detail);
      emit(n, it, false, r);
    }
  if (!o.keep_workdir) {
    std::error_code ec;
    fs::remove_all(o.workdir, ec);
  }
}

}  // namespace smtlab::bench
