// Kernels built from source: tree (Debian linux-source package, local tarball or directory, git),
// patches, base config + fragments (verified after olddefconfig), out-of-tree make.
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "kernel/apt.hpp"
#include "kernel/internal.hpp"
#include "kernel/kconfig.hpp"
#include "kernel/patches.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;

namespace smtlab::kernel::detail {
namespace {

constexpr const char* kBuildTimestamp = "Thu Jan  1 00:00:00 UTC 2026";

struct Tree {
  enum Kind { tarball, directory, git } kind = tarball;
  fs::path path;             // tarball or directory
  std::string url, commit;   // git
  std::string identity;      // what the cache key covers (a sha256 or a commit)
  std::string package, version;  // debian: trees
};

bool is_git_url(const std::string& t) {
  return t.rfind("https://", 0) == 0 || t.rfind("http://", 0) == 0 || t.rfind("git://", 0) == 0 ||
         t.rfind("ssh://", 0) == 0 || t.rfind("git@", 0) == 0 || t.ends_with(".git");
}

std::string dir_fingerprint(const fs::path& dir) {
  std::vector<std::string> lines;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename() == ".git" && it->is_directory()) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) {
      lines.push_back(fmt::format("{} {} {}", it->path().lexically_relative(dir).string(), it->file_size(),
                                  it->last_write_time().time_since_epoch().count()));
    }
  }
  std::sort(lines.begin(), lines.end());
  Sha256 h;
  for (const auto& l : lines) h.field("f", l);
  return h.hex();
}

Tree resolve_tree(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps) {
  Tree t;
  const std::string& tree = spec.tree;
  if (tree.empty()) {
    throw Error("a source kernel needs `tree:` (debian:linux-source-6.12, a tarball, a directory or a git URL)");
  }
  if (tree.rfind("debian:", 0) == 0) {
    auto pkg = resolve_package(tree.substr(7), "", cache);
    Sha256 key;
    key.field("what", "source-tarball/1").field("package", pkg.name).field("version", pkg.version)
        .field("sha256", pkg.sha256);
    auto e = cache.get_or_build("source", key.hex(), fmt::format("{}={}", pkg.name, pkg.version),
                                [&](const fs::path& tmp) {
      steps.step(fmt::format("downloading {}={} ({:.0f} MiB)", pkg.name, pkg.version, pkg.size / 1048576.0));
      const fs::path deb = download_package(pkg, tmp / ".download");
      extract_package(deb, tmp / ".unpacked");
      fs::path tarball;
      for (const auto& f : fs::directory_iterator(tmp / ".unpacked/usr/src")) {
        const std::string n = f.path().filename().string();
        if (n.rfind("linux-source-", 0) == 0 && n.find(".tar.") != std::string::npos) tarball = f.path();
      }
      if (tarball.empty()) throw Error(pkg.name + " has no /usr/src/linux-source-*.tar.*: not a kernel source package?");
      fs::rename(tarball, tmp / ("linux-source" + tarball.filename().string().substr(tarball.filename().string().find(".tar."))));
      fs::remove_all(tmp / ".download");
      fs::remove_all(tmp / ".unpacked");
    });
    for (const auto& f : fs::directory_iterator(e.dir)) {
      if (f.path().filename().string().rfind("linux-source.tar.", 0) == 0) t.path = f.path();
    }
    t.kind = Tree::tarball;
    t.identity = sha256_file_cached(t.path, cache);
    t.package = pkg.name;
    t.version = pkg.version;
  } else if (is_git_url(tree)) {
    const std::string ref = spec.git_ref.empty() ? "HEAD" : spec.git_ref;
    if (ref.size() == 40 && ref.find_first_not_of("0123456789abcdef") == std::string::npos) {
      t.commit = ref;
    } else {
      auto r = run_process({"git", "ls-remote", tree, ref});
      if (!r.ok() || r.out.size() < 40) {
        throw Error(fmt::format("cannot resolve git ref '{}' of {}: {}", ref, tree, r.err),
                    "check the URL and `ref:` of the kernel definition (a branch, tag or full commit id); this needs "
                    "network access");
      }
      t.commit = r.out.substr(0, 40);
    }
    t.kind = Tree::git;
    t.url = tree;
    t.identity = "git:" + t.commit;
  } else if (fs::is_directory(tree)) {
    t.kind = Tree::directory;
    t.path = fs::absolute(tree);
    t.identity = "dir:" + dir_fingerprint(t.path);
  } else if (fs::is_regular_file(tree)) {
    t.kind = Tree::tarball;
    t.path = fs::absolute(tree);
    t.identity = sha256_file_cached(t.path, cache);
  } else {
    throw Error(fmt::format("kernel tree '{}' is neither debian:<package>, a git URL, a directory nor a tarball", tree),
                "e.g. tree: debian:linux-source-6.12");
  }
  return t;
}

void unpack_tree(const Tree& t, const std::string& ref, const fs::path& src) {
  fs::create_directories(src);
  switch (t.kind) {
    case Tree::tarball:
      run_checked({"tar", "-xf", t.path.string(), "-C", src.string(), "--strip-components=1"});
      break;
    case Tree::directory:
      fs::remove(src);
      run_checked({"cp", "-a", t.path.string(), src.string()});
      break;
    case Tree::git: {
      run_checked({"git", "init", "-q", src.string()});
      ProcessOptions o;
      o.cwd = src;
      auto r = run_process({"git", "fetch", "-q", "--depth", "1", t.url, t.commit}, o);
      if (!r.ok()) run_checked({"git", "fetch", "-q", "--depth", "1", t.url, ref.empty() ? "HEAD" : ref}, o);
      run_checked({"git", "checkout", "-q", "FETCH_HEAD"}, o);
      break;
    }
  }
  if (!fs::exists(src / "Makefile") || !fs::exists(src / "Kconfig")) {
    throw Error("the kernel tree has no top-level Makefile and Kconfig: is it a Linux source tree?");
  }
}

int make_jobs() {
  if (const char* j = std::getenv("SMTLAB_JOBS"); j && std::atoi(j) > 0) return std::atoi(j);
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string gcc_identity() {
  auto r = run_process({"gcc", "--version"});
  if (!r.ok()) throw Error("gcc is not installed", "apt-get install gcc make flex bison bc libelf-dev libssl-dev");
  return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

KernelArtifact prepare_source(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps) {
  for (const char* tool : {"make", "gcc", "flex", "bison", "bc"}) {
    if (!find_program(tool)) {
      throw Error(fmt::format("building a kernel needs '{}', which is not installed", tool),
                  "apt-get install make gcc flex bison bc libelf-dev libssl-dev");
    }
  }
  const Tree tree = resolve_tree(spec, cache, steps);

  // Base config: a make target (tinyconfig, defconfig, ...), a Debian package's config, or a file.
  std::string base_text;  // when not a make target
  if (spec.base_config.rfind("debian:", 0) == 0) {
    recipe::KernelSpec deb;
    deb.name = spec.name + "-base-config";
    deb.source = recipe::KernelSource::debian;
    deb.package = spec.base_config.substr(7);
    auto k = prepare_debian(deb, cache, steps);
    if (k.config.empty()) throw Error(deb.package + " ships no config file");
    base_text = read_file(k.config, 16 << 20);
  } else if (spec.base_config.find('/') != std::string::npos) {
    base_text = read_file(spec.base_config, 16 << 20);
  } else if (!spec.base_config.ends_with("config")) {
    throw Error(fmt::format("base_config '{}' is not a make *config target, debian:<package> or a file",
                            spec.base_config),
                "use tinyconfig, defconfig, debian:linux-image-6.12.*-cloud-amd64-unsigned or a path");
  }
  std::vector<FragmentOption> options;
  Sha256 key;
  key.field("what", "kernel-source/1").field("tree", tree.identity).field("base_config", spec.base_config)
      .field("base_text", base_text).field("compiler", gcc_identity());
  for (const auto& f : spec.fragments) {
    const std::string text = read_file(f, 1 << 20);
    auto parsed = parse_fragment(text, f.filename().string());
    options.insert(options.end(), parsed.begin(), parsed.end());
    key.field("fragment", f.filename().string()).field("text", text);
  }
  for (const auto& p : spec.patches) {
    key.field("patch", p.filename().string()).field("text", read_file(p, 64 << 20));
  }
  const std::string digest = key.hex();

  auto entry = cache.get_or_build("kernel", digest, fmt::format("{} (source)", spec.name), [&](const fs::path& out) {
    // The tree and the build: removed on every path (`smtlab cache gc` takes it after a kill).
    const ScopedDirectory work_dir(cache.root() / "work" / fmt::format("{}.{}", digest.substr(0, 16), ::getpid()));
    const fs::path& work = work_dir.path();
    const fs::path src = work / "src", obj = work / "obj";
    const fs::path logs = cache.root() / "logs";
    fs::create_directories(logs);
    const fs::path log = logs / fmt::format("kernel-{}-{}.log", spec.name, digest.substr(0, 12));
    std::string log_text;
    try {
      steps.step("unpacking the kernel tree");
      unpack_tree(tree, spec.git_ref, src);
      if (!spec.patches.empty()) {
        steps.step(fmt::format("applying {} patch(es)", spec.patches.size()));
        apply_patches(src, spec.patches);
      }
      fs::create_directories(obj);
      std::vector<std::string> make = {"make", "-C", src.string(), "O=" + obj.string(),
                                       "KBUILD_BUILD_TIMESTAMP=" + std::string(kBuildTimestamp),
                                       "KBUILD_BUILD_USER=smtlab", "KBUILD_BUILD_HOST=smtlab"};
      if (find_program("ccache")) make.push_back("CC=ccache gcc");
      ProcessOptions opt;
      opt.timeout = std::chrono::hours(4);
      opt.env["LC_ALL"] = "C";
      opt.max_capture = 64 << 20;
      auto run_make = [&](std::vector<std::string> extra) {
        auto argv = make;
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto r = run_process(argv, opt);
        log_text += "$ " + shell_quote(argv) + "\n" + r.out + r.err;
        write_file_atomic(log, log_text);
        if (!r.ok()) {
          std::string tail = r.err.size() > 3000 ? r.err.substr(r.err.size() - 3000) : r.err;
          throw Error(fmt::format("`make {}` failed (exit {}):\n{}", fmt::join(extra, " "), r.exit_code, tail),
                      "full log: " + log.string());
        }
        return r;
      };
      steps.step(fmt::format("configuring: {} + {} fragment(s)", spec.base_config, spec.fragments.size()));
      if (base_text.empty()) {
        run_make({spec.base_config});
        base_text = read_file(obj / ".config", 16 << 20);
      }
      write_file_atomic(obj / ".config", merge_config(base_text, options));
      run_make({"olddefconfig"});
      const std::string final_config = read_file(obj / ".config", 16 << 20);
      fs::copy_file(obj / ".config", out / "config");
      require_fragment_options(final_config, options, log.parent_path() / (log.stem().string() + ".config"));
      const int jobs = make_jobs();
      steps.step(fmt::format("make -j{} bzImage (log: {})", jobs, log.string()));
      run_make({fmt::format("-j{}", jobs), "bzImage"});
      const auto modules = parse_config(final_config);
      const std::string release = [&] {
        auto r = run_make({"-s", "kernelrelease"});
        std::string rel = r.out;
        while (!rel.empty() && (rel.back() == '\n' || rel.back() == '\r')) rel.pop_back();
        return rel;
      }();
      if (modules.count("CONFIG_MODULES") && modules.at("CONFIG_MODULES") == "y") {
        steps.step(fmt::format("make -j{} modules", jobs));
        run_make({fmt::format("-j{}", jobs), "modules"});
        run_make({"INSTALL_MOD_PATH=" + (work / "mods").string(), "INSTALL_MOD_STRIP=1", "modules_install"});
        const fs::path moddir = work / "mods/lib/modules" / release;
        for (const char* link : {"build", "source"}) fs::remove(moddir / link);
        if (!fs::exists(moddir / "modules.dep")) {
          run_checked({"depmod", "-b", (work / "mods").string(), release});
        }
        fs::rename(moddir, out / "modules");
      }
      fs::copy_file(obj / "arch/x86/boot/bzImage", out / "vmlinuz");
      write_meta(out, spec, Meta{tree.package, tree.version, release, tree.kind == Tree::git ? tree.commit
                                 : tree.identity.rfind("dir:", 0) == 0 ? tree.identity.substr(4) : tree.identity});
    } catch (const Error& e) {
      if (fs::exists(obj / ".config")) {
        std::error_code ec;
        fs::copy_file(obj / ".config", log.parent_path() / (log.stem().string() + ".config"),
                      fs::copy_options::overwrite_existing, ec);
      }
      throw;
    }
  });
  return from_entry(entry, spec);
}

}  // namespace smtlab::kernel::detail
