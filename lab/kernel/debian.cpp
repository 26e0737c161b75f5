// Debian kernel packages: resolve, download, unpack, depmod.
#include <fmt/core.h>

#include "kernel/apt.hpp"
#include "kernel/internal.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;

namespace smtlab::kernel::detail {

std::string take_debian_kernel(const fs::path& unpacked, const fs::path& out) {
  fs::path vmlinuz;
  for (const auto& f : fs::directory_iterator(unpacked / "boot")) {
    if (f.path().filename().string().rfind("vmlinuz-", 0) == 0) vmlinuz = f.path();
  }
  if (vmlinuz.empty()) throw Error("the package has no boot/vmlinuz-*: is it a linux-image package?");
  const std::string release = vmlinuz.filename().string().substr(8);
  fs::path moddir = unpacked / "lib/modules" / release;
  if (!fs::is_directory(moddir)) moddir = unpacked / "usr/lib/modules" / release;
  fs::rename(vmlinuz, out / "vmlinuz");
  if (fs::exists(unpacked / "boot" / ("config-" + release))) {
    fs::rename(unpacked / "boot" / ("config-" + release), out / "config");
  }
  if (fs::is_directory(moddir)) {
    for (const char* link : {"build", "source"}) fs::remove(moddir / link);
    // The package has no modules.dep (its postinst makes it): make it here. depmod -b BASE
    // works on BASE/lib/modules/<release>.
    const fs::path base = moddir.parent_path().parent_path().parent_path();
    run_checked({"depmod", "-b", base.string(), release});
    fs::rename(moddir, out / "modules");
  }
  return release;
}

KernelArtifact prepare_debian(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps) {
  if (spec.package.empty()) throw Error("a debian kernel needs `package:` (e.g. linux-image-6.12.*-cloud-amd64-unsigned)");
  auto pkg = resolve_package(spec.package, spec.version, cache);
  if (!pkg.cached) steps.step(fmt::format("resolved {} to {}={}", spec.package, pkg.name, pkg.version));
  Sha256 key;
  key.field("what", "kernel-debian/1").field("package", pkg.name).field("version", pkg.version)
      .field("sha256", pkg.sha256);
  auto entry = cache.get_or_build("kernel", key.hex(), fmt::format("{} {}={}", spec.name, pkg.name, pkg.version),
                                  [&](const fs::path& tmp) {
    steps.step(fmt::format("downloading {}={} ({:.1f} MiB)", pkg.name, pkg.version, pkg.size / 1048576.0));
    const fs::path deb = download_package(pkg, tmp / ".download");
    steps.step("unpacking " + deb.filename().string());
    extract_package(deb, tmp / ".unpacked");
    Meta meta{pkg.name, pkg.version, take_debian_kernel(tmp / ".unpacked", tmp), pkg.sha256};
    fs::remove_all(tmp / ".download");
    fs::remove_all(tmp / ".unpacked");
    write_meta(tmp, spec, meta);
  });
  return from_entry(entry, spec);
}

}  // namespace smtlab::kernel::detail
