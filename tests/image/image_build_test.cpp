// Slow: builds a small real guest image with mmdebstrap (needs root and the Debian mirror).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "image/image.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;

TEST_CASE("a minimal image builds, is a cache hit the second time, and overlays leave the base alone") {
  if (geteuid() != 0) {
    WARN("not root: image builds need root; skipped");
    return;
  }
  const fs::path root = smtlab::test::scratch_path("image-build");
  smtlab::cache::Cache cache(root);
  smtlab::recipe::ImageSpec spec;
  spec.name = "tiny";
  spec.variant = "minbase";
  spec.packages = {"procps"};
  fs::create_directories(root / "in");
  { std::ofstream(root / "in/hello") << "hello from the host\n"; }
  spec.files.push_back({root / "in/hello", "/etc/smtlab-hello"});
  smtlab::Steps steps("image test");
  auto a = smtlab::image::prepare_image(spec, cache, steps);
  CHECK_FALSE(a.cache_hit);
  CHECK(fs::file_size(a.qcow2) > 50 << 20);
  auto info = smtlab::run_checked({"qemu-img", "info", a.qcow2.string()});
  CHECK(info.out.find("file format: qcow2") != std::string::npos);
  // The file is in the file system.
  auto raw = root / "raw.ext4";
  smtlab::run_checked({"qemu-img", "convert", "-O", "raw", a.qcow2.string(), raw.string()});
  auto cat = smtlab::run_checked({"debugfs", "-R", "cat /etc/smtlab-hello", raw.string()});
  CHECK(cat.out == "hello from the host\n");
  auto ps = smtlab::run_checked({"debugfs", "-R", "stat /usr/bin/ps", raw.string()});
  CHECK(ps.out.find("Type: regular") != std::string::npos);

  // The image records its bytes and what it has installed: the package asked for, and what the
  // minbase variant brings (dpkg itself).
  CHECK(a.sha256 == smtlab::sha256_file(a.qcow2));
  CHECK(a.installed.count("procps") == 1);
  CHECK(a.installed.count("dpkg") == 1);
  CHECK(a.installed.count("gcc-12") == 0);  // not asked for, not there

  auto b = smtlab::image::prepare_image(spec, cache, steps);
  CHECK(b.cache_hit);
  CHECK(b.digest == a.digest);
  CHECK(b.sha256 == a.sha256);  // as the cache entry recorded it, not hashed again
  CHECK(b.installed == a.installed);

  const auto before = fs::last_write_time(a.qcow2);
  smtlab::image::create_overlay(a.qcow2, root / "vm.qcow2");
  auto oinfo = smtlab::run_checked({"qemu-img", "info", (root / "vm.qcow2").string()});
  CHECK(oinfo.out.find("backing file: " + a.qcow2.string()) != std::string::npos);
  CHECK(oinfo.out.find("backing file format: qcow2") != std::string::npos);
  CHECK(fs::last_write_time(a.qcow2) == before);
}
