#include "guest/results_port.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "bench/procfs.hpp"

namespace smtlab::guest {

std::optional<std::string> find_virtio_port(const std::string& name, double wait_s, const std::string& sys_root,
                                            const std::string& dev_root) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(wait_s * 1000));
  for (;;) {
    if (DIR* d = opendir(sys_root.c_str())) {
      std::optional<std::string> found;
      while (auto* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        auto n = bench::read_proc(sys_root + "/" + e->d_name + "/name", 256);
        if (!n) continue;
        std::string s = *n;
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        struct stat st {};
        std::string dev = dev_root + "/" + e->d_name;
        if (s == name && stat(dev.c_str(), &st) == 0) found = dev;
      }
      closedir(d);
      if (found) return found;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace smtlab::guest
