// Slow: uses the real apt (downloads a Debian cloud kernel, about 25-30 MB).

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>

#include "kernel/apt.hpp"
#include "kernel/boot_entry.hpp"
#include "kernel/kernel.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;

TEST_CASE("a Debian kernel is resolved, fetched, unpacked, then a fast cache hit") {
  const fs::path root = smtlab::test::scratch_path("debian-fetch");
  smtlab::cache::Cache cache(root);
  smtlab::recipe::KernelSpec spec;
  spec.name = "debian-6.12";
  spec.source = smtlab::recipe::KernelSource::debian;
  spec.package = "linux-image-6.12.*-cloud-amd64-unsigned";
  smtlab::Steps steps("kernel test");
  auto k = smtlab::kernel::prepare_kernel(spec, cache, steps);
  CHECK_FALSE(k.cache_hit);
  CHECK(k.package.rfind("linux-image-6.12.", 0) == 0);
  CHECK(k.release.rfind("6.12.", 0) == 0);
  CHECK(k.release.find("cloud-amd64") != std::string::npos);
  CHECK(k.sha256.size() == 64);
  CHECK(fs::file_size(k.vmlinuz) > 4 << 20);
  CHECK(smtlab::kernel::config_value(k.config, "CONFIG_VIRTIO_BLK") == "m");
  REQUIRE(!k.modules_dir.empty());
  CHECK(fs::exists(k.modules_dir / "modules.dep"));
  CHECK(smtlab::read_file(k.modules_dir / "modules.dep").find("virtio_blk.ko") != std::string::npos);
  // Debian's cloud kernel has CONFIG_PVH=y: the lab boots its unpacked vmlinux (an ELF with the
  // PVH note, several times the bzImage's size).
  CHECK(k.boot_entry == "pvh");
  CHECK(smtlab::kernel::has_pvh_entry(k.boot_image));
  CHECK(fs::file_size(k.boot_image) > 2 * fs::file_size(k.vmlinuz));

  const auto t0 = std::chrono::steady_clock::now();
  auto again = smtlab::kernel::prepare_kernel(spec, cache, steps);
  const double warm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(again.cache_hit);
  CHECK(again.digest == k.digest);
  CHECK(again.release == k.release);
  CHECK(again.boot_image == k.boot_image);
  CHECK(warm_s < 1.0);
}

TEST_CASE("a downloaded package whose sha256 is not the one apt's index gives is refused with both digests") {
  const fs::path root = smtlab::test::scratch_path("apt-digest");
  smtlab::cache::Cache cache(root / "cache");
  // A small package every smtlab machine's apt lists know (smtlab installs it).
  auto pkg = smtlab::kernel::resolve_package("cpio", "", cache);
  REQUIRE(pkg.sha256.size() == 64);
  const auto deb = smtlab::kernel::download_package(pkg, root / "good");
  CHECK(fs::file_size(deb) > 0);

  auto tampered = pkg;
  tampered.sha256 = std::string(64, '0');
  try {
    smtlab::kernel::download_package(tampered, root / "bad");
    FAIL("a package that does not match apt's index was accepted");
  } catch (const smtlab::Error& e) {
    const std::string what = smtlab::describe(e);
    CHECK_THAT(what, Catch::Contains("has sha256 " + pkg.sha256) && Catch::Contains("the apt index says " + tampered.sha256) &&
                         Catch::Contains("apt-get update"));
  }
}
