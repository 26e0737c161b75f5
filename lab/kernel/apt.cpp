#include "kernel/apt.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace smtlab::kernel {
namespace {

const char* kUpdateHint = "run `apt-get update` (as root) so apt knows the current Debian packages";

std::string stat_stamp(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "-";
  return fmt::format("{}.{}:{}", st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
}

bool glob_match(const std::string& pattern, const std::string& name) {
  const auto star = pattern.find('*');
  if (star == std::string::npos) return pattern == name;
  const std::string pre = pattern.substr(0, star), post = pattern.substr(star + 1);
  return name.size() >= pre.size() + post.size() && name.compare(0, pre.size(), pre) == 0 &&
         name.compare(name.size() - post.size(), post.size(), post) == 0;
}

bool lists_present() {
  std::error_code ec;
  for (const auto& f : fs::directory_iterator("/var/lib/apt/lists", ec)) {
    if (f.path().filename().string().find("_Packages") != std::string::npos) return true;
  }
  return false;
}

// "Candidate:" versions from `apt-cache policy a b c`.
std::map<std::string, std::string> candidates(const std::vector<std::string>& names) {
  std::vector<std::string> argv = {"apt-cache", "policy"};
  argv.insert(argv.end(), names.begin(), names.end());
  auto r = run_checked(argv);
  std::map<std::string, std::string> out;
  std::istringstream in(r.out);
  std::string line, current;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ' && line.back() == ':') {
      current = line.substr(0, line.size() - 1);
    } else if (auto p = line.find("Candidate: "); p != std::string::npos && !current.empty()) {
      std::string v = line.substr(p + 11);
      if (v != "(none)") out[current] = v;
    }
  }
  return out;
}

ResolvedPackage show(const std::string& name, const std::string& version) {
  auto r = run_process({"apt-cache", "show", name + "=" + version});
  if (!r.ok()) {
    throw Error(fmt::format("apt does not know {} version {}", name, version), kUpdateHint);
  }
  ResolvedPackage p;
  p.name = name;
  p.version = version;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) break;  // first stanza only
    if (line.rfind("SHA256: ", 0) == 0) p.sha256 = line.substr(8);
    if (line.rfind("Size: ", 0) == 0) p.size = std::stoull(line.substr(6));
  }
  if (p.sha256.size() != 64) {
    throw Error(fmt::format("apt's index has no SHA256 for {}={}", name, version), kUpdateHint);
  }
  return p;
}

ResolvedPackage resolve_uncached(const std::string& pattern, const std::string& version) {
  if (std::count(pattern.begin(), pattern.end(), '*') > 1) {
    throw Error(fmt::format("package pattern '{}' has more than one '*'", pattern),
                "use one '*' for the changing part, e.g. linux-image-6.12.*-cloud-amd64-unsigned");
  }
  std::vector<std::string> names;
  const auto star = pattern.find('*');
  if (star == std::string::npos) {
    names.push_back(pattern);
  } else {
    auto r = run_checked({"apt-cache", "pkgnames", pattern.substr(0, star)});
    std::istringstream in(r.out);
    std::string n;
    while (std::getline(in, n)) {
      if (glob_match(pattern, n)) names.push_back(n);
    }
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    throw Error(fmt::format("no Debian package matches '{}' in the apt lists", pattern), kUpdateHint);
  }
  if (!version.empty()) {
    // Pinned: the first matching name that has that version.
    for (const auto& n : names) {
      auto r = run_process({"apt-cache", "show", n + "=" + version});
      if (r.ok()) return show(n, version);
    }
    throw Error(fmt::format("no package matching '{}' has version {} in the apt lists", pattern, version),
                std::string(kUpdateHint) + "; or drop/adjust the version pin");
  }
  auto cands = candidates(names);
  std::string best_name, best_version;
  for (const auto& [n, v] : cands) {
    if (best_name.empty() || debian_version_less(best_version, v) ||
        (best_version == v && best_name < n)) {
      best_name = n;
      best_version = v;
    }
  }
  if (best_name.empty()) {
    throw Error(fmt::format("no installable candidate for '{}' (apt-cache policy shows none)", pattern),
                kUpdateHint);
  }
  return show(best_name, best_version);
}

}  // namespace

std::string apt_lists_fingerprint() {
  std::string fp = stat_stamp("/var/lib/apt/lists") + "|" + stat_stamp("/etc/apt/sources.list") + "|" +
                   stat_stamp("/etc/apt/sources.list.d") + "|" + stat_stamp("/etc/apt/preferences.d");
  return sha256_hex(fp);
}

bool debian_version_less(const std::string& a, const std::string& b) {
  return run_process({"dpkg", "--compare-versions", a, "lt", b}).exit_code == 0;
}

ResolvedPackage resolve_package(const std::string& pattern, const std::string& version, cache::Cache& cache) {
  if (!lists_present()) {
    if (::geteuid() == 0) {
      note("the apt lists are missing: running apt-get update");
      run_checked({"apt-get", "update"});
    } else {
      throw Error("apt has no package lists (/var/lib/apt/lists is empty)", kUpdateHint);
    }
  }
  Sha256 key;
  key.field("what", "apt-resolution/1").field("pattern", pattern).field("version", version)
      .field("lists", apt_lists_fingerprint());
  ResolvedPackage result;
  bool built = false;
  auto entry = cache.get_or_build("resolve", key.hex(), "apt " + pattern, [&](const fs::path& tmp) {
    result = resolve_uncached(pattern, version);
    built = true;
    json j = {{"name", result.name}, {"version", result.version}, {"sha256", result.sha256},
              {"size", result.size}};
    write_file_atomic(tmp / "resolved.json", j.dump() + "\n");
  });
  if (!built) {
    const json j = json::parse(read_file(entry.dir / "resolved.json"));
    result.name = j.at("name");
    result.version = j.at("version");
    result.sha256 = j.at("sha256");
    result.size = j.at("size");
    result.cached = true;
  }
  return result;
}

fs::path download_package(const ResolvedPackage& pkg, const fs::path& dir) {
  fs::create_directories(dir);
  ProcessOptions opt;
  opt.cwd = dir;
  auto r = run_process({"apt-get", "download", pkg.name + "=" + pkg.version}, opt);
  if (!r.ok()) {
    throw Error(fmt::format("apt-get download {}={} failed: {}", pkg.name, pkg.version, r.err),
                std::string(kUpdateHint) + " (the mirror may have dropped that version)");
  }
  fs::path deb;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() == ".deb") deb = f.path();
  }
  if (deb.empty()) throw Error("apt-get download produced no .deb in " + dir.string());
  const std::string sha = sha256_file(deb);
  if (sha != pkg.sha256) {
    throw Error(fmt::format("{} has sha256 {}, the apt index says {}", deb.string(), sha, pkg.sha256),
                kUpdateHint);
  }
  return deb;
}

void extract_package(const fs::path& deb, const fs::path& dir) {
  fs::create_directories(dir);
  run_checked({"dpkg-deb", "-x", deb.string(), dir.string()});
}

std::string sha256_file_cached(const fs::path& file, cache::Cache& cache) {
  const fs::path abs = fs::absolute(file);
  Sha256 key;
  key.field("what", "file-sha256/1").field("path", abs.string()).field("stat", stat_stamp(abs));
  std::string sha;
  auto e = cache.get_or_build("resolve", key.hex(), "sha256 " + abs.filename().string(),
                              [&](const fs::path& tmp) {
                                sha = sha256_file(abs);
                                write_file_atomic(tmp / "sha256", sha + "\n");
                              });
  if (sha.empty()) {
    sha = read_file(e.dir / "sha256", 1024);
    while (!sha.empty() && sha.back() == '\n') sha.pop_back();
  }
  return sha;
}

}  // namespace smtlab::kernel
