#include "image/dpkg_status.hpp"

#include "util/process.hpp"

namespace smtlab::image {

std::map<std::string, std::string> parse_installed(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    const size_t a = line.find('\t'), b = a == std::string_view::npos ? a : line.find('\t', a + 1);
    if (b == std::string_view::npos || line.find('\t', b + 1) != std::string_view::npos) continue;
    const std::string_view status = line.substr(0, a), name = line.substr(a + 1, b - a - 1),
                           version = line.substr(b + 1);
    if (status == "installed" && !name.empty() && !version.empty()) out.emplace(name, version);
  }
  return out;
}

std::map<std::string, std::string> installed_packages(const std::filesystem::path& rootfs) {
  const auto r = run_checked({"dpkg-query", "--admindir=" + (rootfs / "var/lib/dpkg").string(), "-W", "-f",
                              "${db:Status-Status}\\t${binary:Package}\\t${Version}\\n"});
  return parse_installed(r.out);
}

}  // namespace smtlab::image
