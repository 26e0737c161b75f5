#include "image/image.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "image/dpkg_status.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/packages.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace smtlab::image {
namespace {

// Every image is stamped with this time: same inputs, same bytes.
constexpr const char* kSourceDateEpoch = "1700000000";
constexpr std::uint64_t kWorkHeadroomMib = 3072;  // free space for kernbench trees and builds

std::uint64_t tree_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    std::error_code ec;
    if (it->is_symlink(ec)) {
      total += 4096;
      continue;
    }
    if (it->is_regular_file(ec)) total += (it->file_size(ec) + 4095) / 4096 * 4096;
    else total += 4096;
  }
  return total;
}

// A UUID (8-4-4-4-12) made from the digest, for mke2fs -U and the htree hash seed.
std::string uuid_from(const std::string& hex, const std::string& salt) {
  const std::string h = sha256_hex(salt + hex);
  return fmt::format("{}-{}-4{}-a{}-{}", h.substr(0, 8), h.substr(8, 4), h.substr(13, 3), h.substr(17, 3),
                     h.substr(20, 12));
}

std::string hook_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

ImageArtifact prepare_image(const recipe::ImageSpec& spec, cache::Cache& cache, Steps& steps) {
  std::vector<std::string> packages = spec.packages;
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  Sha256 key;
  key.field("what", "image/1").field("suite", spec.suite).field("variant", spec.variant)
      .field("mirror", spec.mirror).field("epoch", kSourceDateEpoch)
      .field("size_mib", std::to_string(spec.size_mib));
  for (const auto& p : packages) key.field("package", p);
  for (const auto& f : spec.files) {
    if (!fs::is_regular_file(f.source)) {
      throw Error(fmt::format("image {}: file '{}' does not exist", spec.name, f.source.string()),
                  "fix the `files:` entry of the image definition");
    }
    if (f.destination.empty() || f.destination.front() != '/' || f.destination.find("..") != std::string::npos) {
      throw Error(fmt::format("image {}: destination '{}' must be an absolute path in the guest", spec.name,
                              f.destination));
    }
    const auto perms = fs::status(f.source).permissions();
    const bool exec = (perms & fs::perms::owner_exec) != fs::perms::none;
    key.field("file", f.destination).field("sha256", sha256_file(f.source)).field("exec", exec ? "1" : "0");
  }
  const std::string digest = key.hex();

  std::uint64_t fs_mib = 0;
  auto entry = cache.get_or_build("image", digest, "image " + spec.name, [&](const fs::path& tmp) {
    if (::geteuid() != 0) {
      throw Error(fmt::format("image {}: building a guest image needs root", spec.name),
                  "run `smtlab image build` as root (mmdebstrap --mode=root keeps file ownership for mke2fs -d), "
                  "or build it once as root and share the cache (SMTLAB_CACHE)");
    }
    const fs::path rootfs = tmp / ".rootfs";
    const fs::path debs = cache.root() / "debs";
    fs::create_directories(debs);
    std::vector<std::string> argv = {"mmdebstrap", "--mode=root", "--variant=" + spec.variant, "--quiet"};
    if (!packages.empty()) argv.push_back(fmt::format("--include={}", fmt::join(packages, ",")));
    // Reuse downloaded packages (the host's apt cache and smtlab's own): hard links, no copies.
    const std::string seed = "mkdir -p \"$1/var/cache/apt/archives\"; for d in /var/cache/apt/archives " +
                             hook_quote(debs.string()) +
                             "; do for f in \"$d\"/*.deb; do [ -f \"$f\" ] || continue; "
                             "ln -f \"$f\" \"$1/var/cache/apt/archives/\" 2>/dev/null || "
                             "cp -f \"$f\" \"$1/var/cache/apt/archives/\"; done; done; true";
    const std::string keep = "for f in \"$1\"/var/cache/apt/archives/*.deb; do [ -f \"$f\" ] || continue; "
                             "ln -f \"$f\" " + hook_quote(debs.string() + "/") + " 2>/dev/null || true; done; true";
    argv.push_back("--setup-hook=" + seed);
    argv.push_back("--customize-hook=" + keep);
    argv.push_back(spec.suite);
    argv.push_back(rootfs.string());
    if (!spec.mirror.empty()) argv.push_back(spec.mirror);
    ProcessOptions opt;
    opt.env["SOURCE_DATE_EPOCH"] = kSourceDateEpoch;
    opt.env["LC_ALL"] = "C.UTF-8";
    opt.timeout = std::chrono::minutes(60);
    steps.step(fmt::format("mmdebstrap {} ({} variant, {} packages)", spec.suite, spec.variant, packages.size()));
    run_checked(argv, opt);

    for (const auto& f : spec.files) {
      const fs::path dst = rootfs / f.destination.substr(1);
      fs::create_directories(dst.parent_path());
      fs::copy_file(f.source, dst, fs::copy_options::overwrite_existing);
      const auto perms = fs::status(f.source).permissions();
      fs::permissions(dst, (perms & fs::perms::owner_exec) != fs::perms::none ? fs::perms(0755) : fs::perms(0644));
    }
    fs::create_directories(rootfs / "run");
    // What mmdebstrap installed (the guest's gcc, make, libc: what kernbench's times depend on).
    const auto installed = installed_packages(rootfs);

    const std::uint64_t content_mib = tree_bytes(rootfs) / (1 << 20);
    fs_mib = spec.size_mib > 0 ? static_cast<std::uint64_t>(spec.size_mib)
                               : (content_mib * 5 / 4 + kWorkHeadroomMib + 255) / 256 * 256;
    if (spec.size_mib > 0 && fs_mib < content_mib * 11 / 10) {
      throw Error(fmt::format("image {}: size_mib {} is too small for {} MiB of content", spec.name, spec.size_mib,
                              content_mib),
                  "raise size_mib or leave it 0 (fitted to the content plus room for benchmark work)");
    }
    steps.step(fmt::format("mke2fs ext4 {} MiB ({} MiB of content)", fs_mib, content_mib));
    const fs::path ext4 = tmp / ".root.ext4";
    ProcessOptions mk;
    mk.env["E2FSPROGS_FAKE_TIME"] = kSourceDateEpoch;
    run_checked({"mke2fs", "-q", "-F", "-t", "ext4", "-L", "smtlab-root", "-m", "0", "-U", uuid_from(digest, "fs"),
                 "-E", "hash_seed=" + uuid_from(digest, "hash") + ",lazy_itable_init=0,nodiscard", "-d",
                 rootfs.string(), ext4.string(), fmt::format("{}M", fs_mib)},
                mk);
    fs::remove_all(rootfs);
    steps.step("qemu-img convert to qcow2");
    run_checked({"qemu-img", "convert", "-O", "qcow2", ext4.string(), (tmp / "base.qcow2").string()});
    fs::remove(ext4);
    json meta = {{"schema", 1},           {"name", spec.name},       {"suite", spec.suite},
                 {"variant", spec.variant}, {"mirror", spec.mirror}, {"packages", packages},
                 {"fs_size_mib", fs_mib},  {"source_date_epoch", kSourceDateEpoch},
                 {"installed", installed}};
    write_file_atomic(tmp / "meta.json", meta.dump(1) + "\n");
  });
  ImageArtifact a;
  a.name = spec.name;
  a.qcow2 = entry.dir / "base.qcow2";
  a.digest = entry.key;
  a.size = fs::file_size(a.qcow2);
  a.cache_hit = entry.hit;
  a.dir = entry.dir;
  const json meta = json::parse(read_file(entry.dir / "meta.json", 1 << 20));
  a.fs_size_mib = meta.value("fs_size_mib", std::uint64_t{0});
  // The cache hashed base.qcow2 when it published the entry; entries built before the installed
  // packages were recorded have none (the run's manifest then has no "installed").
  if (auto it = entry.sha256.find("base.qcow2"); it != entry.sha256.end()) a.sha256 = it->second;
  if (meta.contains("installed") && meta["installed"].is_object())
    for (const auto& [name, version] : meta["installed"].items())
      if (version.is_string()) a.installed.emplace(name, version.get<std::string>());
  return a;
}

void create_overlay(const fs::path& base, const fs::path& overlay) {
  if (!fs::is_regular_file(base)) throw Error("base image " + base.string() + " does not exist");
  const fs::path tmp = overlay.string() + ".tmp";
  fs::remove(tmp);
  run_checked({"qemu-img", "create", "-q", "-f", "qcow2", "-b", fs::absolute(base).string(), "-F", "qcow2",
               tmp.string()});
  fs::rename(tmp, overlay);
}

std::string summary(const ImageArtifact& a) {
  // The guest's compiler, when the image recorded its packages: kernbench's times depend on it.
  std::string compilers;
  for (const auto& [package, version] : a.installed)
    if (is_gcc_package(package)) compilers += ", " + package + " " + version;
  return fmt::format("image {}: {} qcow2 ({} MiB ext4), digest {}{}, cache {}", a.name,
                     cache::Cache::human_size(a.size), a.fs_size_mib, a.digest.substr(0, 12), compilers,
                     a.cache_hit ? "hit" : "miss");
}

}  // namespace smtlab::image
