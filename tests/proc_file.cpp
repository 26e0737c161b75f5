#include "proc_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace smtlab::test {

std::string read_proc_file(const std::filesystem::path& file, size_t max_bytes) {
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[4096];
  while (out.size() < max_bytes) {
    const ssize_t n = read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.clear();
      break;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

}  // namespace smtlab::test
