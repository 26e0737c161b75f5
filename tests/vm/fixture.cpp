#include "fixture.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "scratch.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"

namespace smtlab::vm::test {
namespace fs = std::filesystem;

fs::path debian_cloud_kernel(const std::string& series) {
  std::string pattern;
  if (series == "6.12") pattern = "^linux-image-6\\.12\\.[0-9]+\\+deb12-cloud-amd64-unsigned$";
  else if (series == "6.1") pattern = "^linux-image-6\\.1\\.0-[0-9]+-cloud-amd64-unsigned$";
  else throw Error("test fixture: unknown kernel series " + series);
  fs::path dir = cache_dir() / "vm-test" / ("linux-" + series + "-cloud");
  fs::create_directories(dir);
  // One fetcher at a time (test processes may run in parallel).
  int lock = open((dir / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) throw Error("cannot lock " + dir.string());
  struct Unlock {
    int fd;
    ~Unlock() { close(fd); }
  } unlock{lock};
  fs::path marker = dir / "vmlinuz-path";
  if (fs::exists(marker)) {
    fs::path p = read_file(marker);
    if (fs::exists(p)) return p;
  }
  auto search = run_checked({"apt-cache", "search", "--names-only", pattern});
  std::string names;
  std::istringstream lines(search.out);
  for (std::string line; std::getline(lines, line);)
    if (auto sp = line.find(' '); sp != std::string::npos) names += line.substr(0, sp) + "\n";
  if (names.empty()) throw Error("no linux-image-" + series + " cloud kernel package in the apt lists",
                                 "run apt-get update");
  ProcessOptions sort_input;
  sort_input.stdin_data = names;
  auto sorted = run_checked({"sort", "-V"}, sort_input);
  std::string newest = sorted.out.substr(0, sorted.out.size() - 1);
  if (auto nl = newest.rfind('\n'); nl != std::string::npos) newest = newest.substr(nl + 1);
  fs::remove_all(dir / "dl");
  fs::create_directories(dir / "dl");
  ProcessOptions in_dl;
  in_dl.cwd = dir / "dl";
  run_checked({"apt-get", "download", newest}, in_dl);
  for (auto& e : fs::directory_iterator(dir / "dl"))
    if (e.path().extension() == ".deb") run_checked({"dpkg-deb", "-x", e.path(), dir / "x"});
  for (auto& e : fs::directory_iterator(dir / "x" / "boot"))
    if (e.path().filename().string().rfind("vmlinuz-", 0) == 0) {
      write_file_atomic(marker, e.path().string());
      fs::remove_all(dir / "dl");
      return e.path();
    }
  throw Error("the kernel package " + newest + " has no boot/vmlinuz-*");
}

fs::path debian_612_kernel() { return debian_cloud_kernel("6.12"); }

fs::path make_initramfs(const fs::path& dir, const std::string& init_script) {
  fs::path tree = dir / "initramfs-tree";
  fs::remove_all(tree);
  fs::create_directories(tree / "bin");
  for (auto d : {"proc", "sys", "dev", "tmp", "sbin"}) fs::create_directories(tree / d);
  fs::copy_file("/bin/busybox", tree / "bin" / "busybox");
  fs::create_symlink("busybox", tree / "bin" / "sh");
  if (!init_script.empty()) {
    write_file_atomic(tree / "init", init_script);
    fs::permissions(tree / "init", fs::perms(0755));
  }
  std::string list;
  for (auto& e : fs::recursive_directory_iterator(tree))
    list += e.path().lexically_relative(tree).string() + "\n";
  fs::path image = dir / "initramfs.cpio";
  ProcessOptions in_tree;
  in_tree.cwd = tree;
  in_tree.stdin_data = list;
  auto r = run_checked({"cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"}, in_tree);
  write_file_atomic(image, r.out);
  return image;
}

std::string topology_init_script() {
  return R"SH(#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "smtlab-test: kernel $(uname -r)"
echo "smtlab-test: online $(cat /sys/devices/system/cpu/online)"
echo "smtlab-test: smt $(cat /sys/devices/system/cpu/smt/active 2>/dev/null || echo none)"
for c in /sys/devices/system/cpu/cpu[0-9]*; do
  if [ -f $c/topology/thread_siblings_list ]; then
    echo "smtlab-test: $(basename $c) core $(cat $c/topology/core_id) package $(cat $c/topology/physical_package_id) siblings $(cat $c/topology/thread_siblings_list)"
  fi
done
for p in /sys/class/virtio-ports/*; do
  if [ "$(cat $p/name 2>/dev/null)" = org.smtlab.results.0 ]; then
    echo "results-line $(uname -r)" > /dev/$(basename $p)
  fi
done
echo "smtlab-test: done"
poweroff -f
)SH";
}

fs::path scratch_dir(const std::string& name) { return smtlab::test::scratch_dir(name); }

GuestTopology parse_test_topology(const std::string& console) {
  GuestTopology t;
  std::istringstream in(console);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream words(line);
    std::string tag, key;
    words >> tag >> key;
    if (tag != "smtlab-test:") continue;
    if (key == "online") {
      words >> t.online;
    } else if (key == "smt") {
      std::string v;
      words >> v;
      if (v == "0" || v == "1") t.smt_active = std::stoi(v);
    } else if (key.rfind("cpu", 0) == 0) {
      GuestCpu c;
      std::string w1, w2, w3;
      c.cpu = std::stoi(key.substr(3));
      words >> w1 >> c.core_id >> w2 >> c.package_id >> w3 >> c.siblings;
      t.cpus.push_back(c);
    }
  }
  return t;
}

int pgrep_qemu_under(const fs::path& root) {
  auto r = run_process({"pgrep", "-f", "qemu-system.*" + root.string() + "/"});
  int n = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) ++n;
  return n;
}

}  // namespace smtlab::vm::test
