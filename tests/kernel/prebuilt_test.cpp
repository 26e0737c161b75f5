// Prebuilt (path) kernels, with a fake bzImage carrying a real x86 boot header.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "kernel/kernel.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;

namespace {
// The boot protocol: "HdrS" at 0x202; at 0x20E a 16-bit offset (from 0x200) of the version string.
void fake_bzimage(const fs::path& p, const std::string& version) {
  std::string img(0x400, '\0');
  img.replace(0x202, 4, "HdrS");
  const unsigned off = 0x300 - 0x200;
  img[0x20E] = static_cast<char>(off & 0xff);
  img[0x20F] = static_cast<char>(off >> 8);
  img.replace(0x300, version.size(), version);
  std::ofstream(p, std::ios::binary) << img;
}
}  // namespace

TEST_CASE("a prebuilt bzImage is cached with its release and sha256") {
  const fs::path d = smtlab::test::scratch_dir("prebuilt");
  fake_bzimage(d / "bzImage", "6.12.0-mine (me@host) #1 SMP");
  smtlab::cache::Cache cache(d / "cache");
  smtlab::recipe::KernelSpec spec;
  spec.name = "mine";
  spec.source = smtlab::recipe::KernelSource::path;
  spec.bzimage = d / "bzImage";
  smtlab::Steps steps("test");
  auto k = smtlab::kernel::prepare_kernel(spec, cache, steps);
  CHECK_FALSE(k.cache_hit);
  CHECK(k.release == "6.12.0-mine");
  CHECK(k.sha256 == smtlab::sha256_file(d / "bzImage"));
  CHECK(smtlab::read_file(k.vmlinuz) == smtlab::read_file(d / "bzImage"));
  CHECK(k.modules_dir.empty());
  CHECK(smtlab::kernel::prepare_kernel(spec, cache, steps).cache_hit);

  // A rebuilt kernel (other bytes) is another artifact.
  fake_bzimage(d / "bzImage", "6.12.1-mine (me@host) #2 SMP");
  auto k2 = smtlab::kernel::prepare_kernel(spec, cache, steps);
  CHECK_FALSE(k2.cache_hit);
  CHECK(k2.release == "6.12.1-mine");
  CHECK(k2.digest != k.digest);

  // Not a kernel: a clear error.
  std::ofstream(d / "notakernel") << "hello";
  spec.bzimage = d / "notakernel";
  CHECK_THROWS_WITH(smtlab::kernel::prepare_kernel(spec, cache, steps), Catch::Contains("not a bzImage"));
}
