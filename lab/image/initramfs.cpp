#include "image/initramfs.hpp"

#include <sys/random.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "image/cpio.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;

namespace smtlab::image {
namespace {

std::string random_seed() {
  std::string seed(32, '\0');
  std::size_t got = 0;
  while (got < seed.size()) {
    ssize_t n = getrandom(seed.data() + got, seed.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(std::string("getrandom failed: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  return seed;
}

// The boot path's needs: module name -> the config option that builds it in.
const std::vector<std::pair<std::string, std::string>> kNeeded = {
    {"virtio_pci", "CONFIG_VIRTIO_PCI"},
    {"virtio_blk", "CONFIG_VIRTIO_BLK"},
    {"virtio_console", "CONFIG_VIRTIO_CONSOLE"},
    {"ext4", "CONFIG_EXT4_FS"},
};

std::string module_name(const std::string& path) {
  std::string n = fs::path(path).filename().string();
  n = n.substr(0, n.find(".ko"));
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

std::string decompress(const fs::path& ko) {
  const std::string ext = ko.extension().string();
  std::vector<std::string> argv;
  if (ext == ".xz") argv = {"xz", "-dc", ko.string()};
  else if (ext == ".zst") argv = {"zstd", "-dcq", ko.string()};
  else if (ext == ".gz") argv = {"gzip", "-dc", ko.string()};
  else return read_file(ko, 64 << 20);
  ProcessOptions opt;
  opt.max_capture = 64 << 20;
  return run_checked(argv, opt).out;
}

bool is_static_elf(const fs::path& file) {
  const std::string data = read_file(file, 64 << 20);
  if (data.size() < 64 || data.compare(0, 4, "\x7f" "ELF") != 0 || data[4] != 2) return false;
  auto u64 = [&](size_t off) { std::uint64_t v = 0; for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(data[off + i]); return v; };
  auto u16 = [&](size_t off) { return static_cast<unsigned>(static_cast<unsigned char>(data[off]) | (static_cast<unsigned char>(data[off + 1]) << 8)); };
  const std::uint64_t phoff = u64(32);
  const unsigned phentsize = u16(54), phnum = u16(56);
  for (unsigned i = 0; i < phnum; ++i) {
    const size_t off = phoff + static_cast<size_t>(i) * phentsize;
    if (off + 4 > data.size()) return false;
    if (static_cast<unsigned char>(data[off]) == 3) return false;  // PT_INTERP: dynamically linked
  }
  return true;
}

struct DepTable {
  std::map<std::string, std::string> path;               // name -> relative path
  std::map<std::string, std::vector<std::string>> deps;  // name -> dependency names
  std::map<std::string, std::vector<std::string>> pre;   // softdep pre
  std::map<std::string, std::string> alias;              // exact (glob-free) alias -> module
  std::set<std::string> builtin;
};

DepTable read_dep_table(const fs::path& moddir) {
  DepTable t;
  std::istringstream dep(read_file(moddir / "modules.dep", 64 << 20));
  std::string line;
  while (std::getline(dep, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string file = line.substr(0, colon);
    const std::string name = module_name(file);
    t.path[name] = file;
    std::istringstream rest(line.substr(colon + 1));
    std::string d;
    while (rest >> d) t.deps[name].push_back(module_name(d));
  }
  if (fs::exists(moddir / "modules.builtin")) {
    std::istringstream b(read_file(moddir / "modules.builtin", 64 << 20));
    while (std::getline(b, line)) {
      if (!line.empty()) t.builtin.insert(module_name(line));
    }
  }
  if (fs::exists(moddir / "modules.softdep")) {
    std::istringstream s(read_file(moddir / "modules.softdep", 16 << 20));
    while (std::getline(s, line)) {
      std::istringstream w(line);
      std::string word, name;
      if (!(w >> word) || word != "softdep" || !(w >> name)) continue;
      bool in_pre = false;
      while (w >> word) {
        if (word == "pre:") in_pre = true;
        else if (word == "post:") in_pre = false;
        else if (in_pre) t.pre[module_name(name)].push_back(word);
      }
    }
  }
  if (fs::exists(moddir / "modules.alias")) {
    std::istringstream a(read_file(moddir / "modules.alias", 64 << 20));
    while (std::getline(a, line)) {
      std::istringstream w(line);
      std::string word, al, mod;
      if (w >> word >> al >> mod && word == "alias" && al.find_first_of("*?[") == std::string::npos) {
        t.alias.emplace(al, module_name(mod));
      }
    }
  }
  return t;
}

}  // namespace

std::vector<std::string> boot_modules(const kernel::KernelArtifact& k) {
  auto built_in = [&](const std::string& option) {
    return !k.config.empty() && kernel::config_value(k.config, option) == "y";
  };
  std::vector<std::string> wanted;
  for (const auto& [mod, option] : kNeeded) {
    if (built_in(option)) continue;
    if (!k.config.empty()) {
      const std::string v = kernel::config_value(k.config, option);
      if (v != "m") {
        throw Error(fmt::format("kernel {} ({}) has neither {}=y nor =m: the guest could not reach its "
                                "root disk or the results port", k.name, k.release, option),
                    "enable it in the kernel's config fragment (kernels/fragments/coresched.config has the set "
                    "smtlab needs)");
      }
    }
    wanted.push_back(mod);
  }
  if (wanted.empty()) return {};
  if (k.modules_dir.empty() || !fs::exists(k.modules_dir / "modules.dep")) {
    if (k.config.empty()) return {};  // a prebuilt kernel without modules: assume built in
    throw Error(fmt::format("kernel {} builds {} as modules but has no modules directory with modules.dep",
                            k.name, fmt::join(wanted, ", ")));
  }
  const DepTable t = read_dep_table(k.modules_dir);
  std::vector<std::string> order;
  std::set<std::string> seen;
  std::function<void(const std::string&, bool)> visit = [&](const std::string& name, bool required) {
    std::string n = module_name(name);
    if (!t.path.count(n)) {
      auto a = t.alias.find(name);
      if (a != t.alias.end()) n = a->second;
    }
    if (seen.count(n)) return;
    seen.insert(n);
    if (!t.path.count(n)) {
      if (t.builtin.count(n) || !required) return;
      throw Error(fmt::format("kernel {}: module {} is neither in modules.dep nor built in", k.name, n));
    }
    if (auto p = t.pre.find(n); p != t.pre.end()) {
      for (const auto& s : p->second) visit(s, false);
    }
    if (auto d = t.deps.find(n); d != t.deps.end()) {
      for (auto it = d->second.rbegin(); it != d->second.rend(); ++it) visit(*it, true);
    }
    order.push_back(n);
  };
  for (const auto& w : wanted) visit(w, true);
  return order;
}

std::string module_list(const std::vector<std::string>& modules) {
  std::string s;
  for (const auto& m : modules) s += m + "\n";
  return s;
}

Initramfs prepare_initramfs(const kernel::KernelArtifact& k, const fs::path& agent_binary, cache::Cache& cache) {
  if (!fs::is_regular_file(agent_binary)) {
    throw Error("guest agent '" + agent_binary.string() + "' does not exist", "build the smtlab-guest target first");
  }
  if (!is_static_elf(agent_binary)) {
    throw Error("guest agent '" + agent_binary.string() + "' is not a statically linked executable: the kernel "
                "starts it as /init before any library is reachable",
                "build smtlab-guest with this project's CMake files (they link it with -static)");
  }
  const auto modules = boot_modules(k);
  const std::string order = module_list(modules);
  Sha256 key;
  key.field("what", "initramfs/2").field("kernel", k.digest).field("agent", sha256_file(agent_binary))
      .field("modules", order);
  Initramfs out;
  out.modules = modules;
  auto entry = cache.get_or_build("initramfs", key.hex(), fmt::format("{} initramfs", k.name), [&](const fs::path& tmp) {
    std::map<std::string, std::function<void(CpioWriter&)>> items;  // sorted by path
    for (const char* d : {"dev", "lib", "lib/modules", "newroot", "proc", "sys"}) {
      items[d] = [d](CpioWriter& w) { w.add_directory(d); };
    }
    items["dev/console"] = [](CpioWriter& w) { w.add_char_device("dev/console", 0600, 5, 1); };
    items["dev/null"] = [](CpioWriter& w) { w.add_char_device("dev/null", 0666, 1, 3); };
    const std::string agent = read_file(agent_binary, 256 << 20);
    items["init"] = [&agent](CpioWriter& w) { w.add_file("init", agent, 0755); };
    items["lib/modules/load-order"] = [&order](CpioWriter& w) { w.add_file("lib/modules/load-order", order, 0644); };
    std::map<std::string, std::string> ko;
    if (!modules.empty()) {
      const DepTable t = read_dep_table(k.modules_dir);
      for (const auto& m : modules) ko[m] = decompress(k.modules_dir / t.path.at(m));
    }
    for (const auto& [m, data] : ko) {
      const std::string p = "lib/modules/" + m + ".ko";
      items[p] = [p, &data](CpioWriter& w) { w.add_file(p, data, 0644); };
    }
    CpioWriter w;
    for (const auto& [path, add] : items) add(w);
    write_file_atomic(tmp / "initramfs.cpio", w.finish());
    write_file_atomic(tmp / "modules.txt", order);
  });
  out.path = entry.dir / "initramfs.cpio";
  out.digest = entry.key;
  out.cache_hit = entry.hit;
  out.size = fs::file_size(out.path);
  return out;
}

void write_initrd_with_job(const fs::path& base, const std::string& job_json, const fs::path& out) {
  CpioWriter w;
  w.add_file("job.json", job_json, 0644);
  w.add_file("random-seed", random_seed(), 0600);
  const fs::path tmp = out.string() + ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    std::ifstream in(base, std::ios::binary);
    if (!in) throw Error("cannot read base initramfs " + base.string());
    o << in.rdbuf();
    const std::string extra = w.finish();
    o.write(extra.data(), static_cast<std::streamsize>(extra.size()));
    o.flush();
    if (!o) throw Error("cannot write " + tmp.string() + " (disk full?)");
  }
  fs::rename(tmp, out);
}

}  // namespace smtlab::image
