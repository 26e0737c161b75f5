// The boot initramfs with a fake kernel (config + modules dir), so it runs in a second.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "image/initramfs.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using smtlab::kernel::KernelArtifact;

namespace {

fs::path fresh(const std::string& n) {
  return smtlab::test::scratch_dir("initramfs-" + n);
}

void put(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << s;
}

// A kernel like Debian's 6.1 cloud one: virtio_pci/blk/console and ext4 as modules (.ko.xz),
// ext4 with dependencies and a softdep on crc32c (an alias of crc32c_generic), virtio built in.
KernelArtifact fake_kernel(const fs::path& d) {
  KernelArtifact k;
  k.name = "fake";
  k.release = "6.1.0-fake";
  k.digest = "0123456789abcdef";
  k.config = d / "config";
  put(k.config, "CONFIG_VIRTIO=y\nCONFIG_VIRTIO_PCI=m\nCONFIG_VIRTIO_BLK=m\nCONFIG_VIRTIO_CONSOLE=m\nCONFIG_EXT4_FS=m\n");
  k.modules_dir = d / "modules";
  const fs::path m = k.modules_dir;
  const std::vector<std::string> mods = {"kernel/drivers/virtio/virtio_pci.ko", "kernel/drivers/virtio/virtio_pci_modern_dev.ko",
                                         "kernel/drivers/block/virtio_blk.ko", "kernel/drivers/char/virtio_console.ko",
                                         "kernel/fs/ext4/ext4.ko", "kernel/fs/jbd2/jbd2.ko", "kernel/fs/mbcache.ko",
                                         "kernel/lib/crc16.ko", "kernel/crypto/crc32c_generic.ko",
                                         "kernel/drivers/net/unrelated.ko"};
  for (const auto& rel : mods) {
    put(m / rel, "\x7f" "ELF module " + rel);
    smtlab::run_checked({"xz", "-z", (m / rel).string()});
  }
  put(m / "modules.dep",
      "kernel/drivers/virtio/virtio_pci.ko.xz: kernel/drivers/virtio/virtio_pci_modern_dev.ko.xz\n"
      "kernel/drivers/virtio/virtio_pci_modern_dev.ko.xz:\n"
      "kernel/drivers/block/virtio_blk.ko.xz:\n"
      "kernel/drivers/char/virtio_console.ko.xz:\n"
      "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz kernel/fs/mbcache.ko.xz kernel/lib/crc16.ko.xz\n"
      "kernel/fs/jbd2/jbd2.ko.xz:\n"
      "kernel/fs/mbcache.ko.xz:\n"
      "kernel/lib/crc16.ko.xz:\n"
      "kernel/crypto/crc32c_generic.ko.xz:\n"
      "kernel/drivers/net/unrelated.ko.xz:\n");
  put(m / "modules.softdep", "# Soft dependencies\nsoftdep ext4 pre: crc32c\n");
  put(m / "modules.alias", "alias crypto-crc32c crc32c_generic\nalias crc32c crc32c_generic\nalias pci:v*d* virtio_pci\n");
  put(m / "modules.builtin", "kernel/drivers/virtio/virtio.ko\n");
  return k;
}

// Any static executable stands in for the agent (busybox-static is one of the lab's packages).
fs::path stand_in_agent(const fs::path& d) {
  fs::copy_file("/bin/busybox", d / "agent", fs::copy_options::overwrite_existing);
  fs::permissions(d / "agent", fs::perms(0755));
  return d / "agent";
}

std::string listing(const fs::path& cpio) {
  smtlab::ProcessOptions opt;
  opt.stdin_data = smtlab::read_file(cpio);
  return smtlab::run_checked({"cpio", "-t", "--quiet"}, opt).out;
}

}  // namespace

TEST_CASE("boot modules: the needed ones plus dependencies and softdeps, in load order") {
  const auto d = fresh("order");
  auto k = fake_kernel(d);
  const auto mods = smtlab::image::boot_modules(k);
  const std::vector<std::string> expected = {"virtio_pci_modern_dev", "virtio_pci", "virtio_blk", "virtio_console",
                                             "crc32c_generic", "crc16", "mbcache", "jbd2", "ext4"};
  CHECK(mods == expected);
}

TEST_CASE("boot modules: built-in drivers need no module, a missing driver is an error") {
  const auto d = fresh("builtin");
  auto k = fake_kernel(d);
  put(k.config, "CONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_BLK=y\nCONFIG_VIRTIO_CONSOLE=y\nCONFIG_EXT4_FS=y\n");
  CHECK(smtlab::image::boot_modules(k).empty());
  put(k.config, "CONFIG_VIRTIO_PCI=y\n# CONFIG_VIRTIO_BLK is not set\nCONFIG_VIRTIO_CONSOLE=y\nCONFIG_EXT4_FS=y\n");
  CHECK_THROWS_WITH(smtlab::image::boot_modules(k), Catch::Contains("CONFIG_VIRTIO_BLK"));
}

TEST_CASE("the initramfs holds the agent as /init, the decompressed modules and their load order, with a stable digest") {
  const auto d = fresh("content");
  auto k = fake_kernel(d);
  const auto agent = stand_in_agent(d);
  smtlab::cache::Cache c1(d / "cache1"), c2(d / "cache2");
  auto a = smtlab::image::prepare_initramfs(k, agent, c1);
  CHECK_FALSE(a.cache_hit);
  auto b = smtlab::image::prepare_initramfs(k, agent, c2);
  CHECK(a.digest == b.digest);
  CHECK(smtlab::read_file(a.path) == smtlab::read_file(b.path));  // byte-identical
  CHECK(smtlab::image::prepare_initramfs(k, agent, c1).cache_hit);

  const std::string list = listing(a.path);
  for (const char* p : {"init\n", "dev/console\n", "newroot\n", "proc\n", "sys\n", "lib/modules/load-order\n",
                        "lib/modules/virtio_blk.ko\n", "lib/modules/ext4.ko\n", "lib/modules/crc32c_generic.ko\n"}) {
    INFO(p);
    CHECK(list.find(p) != std::string::npos);
  }
  CHECK(list.find("unrelated") == std::string::npos);
  CHECK(list.find(".xz") == std::string::npos);
  CHECK(list.find("bin/") == std::string::npos);  // no shell, no other program

  fs::create_directories(d / "x");
  smtlab::ProcessOptions opt;
  opt.stdin_data = smtlab::read_file(a.path);
  opt.cwd = d / "x";
  smtlab::run_checked({"cpio", "-i", "--quiet", "-d", "--nonmatching", "dev/*"}, opt);
  CHECK(smtlab::read_file(d / "x/lib/modules/ext4.ko") == "\x7f" "ELF module kernel/fs/ext4/ext4.ko");
  CHECK(smtlab::read_file(d / "x/init") == smtlab::read_file(agent));
  CHECK((fs::status(d / "x/init").permissions() & fs::perms::owner_exec) != fs::perms::none);
  // The load order /init follows: dependencies before what needs them.
  CHECK(smtlab::read_file(d / "x/lib/modules/load-order") ==
        "virtio_pci_modern_dev\nvirtio_pci\nvirtio_blk\nvirtio_console\ncrc32c_generic\ncrc16\nmbcache\njbd2\next4\n");

  // Another agent: another digest.
  { std::ofstream(agent, std::ios::app) << "another build"; }
  CHECK(smtlab::image::prepare_initramfs(k, agent, c1).digest != a.digest);
}

TEST_CASE("an agent that is not a static executable is refused: the kernel could not start it as /init") {
  const auto d = fresh("dynamic");
  auto k = fake_kernel(d);
  smtlab::cache::Cache c(d / "cache");
  put(d / "script", "#!/bin/sh\necho hello\n");
  CHECK_THROWS_WITH(smtlab::image::prepare_initramfs(k, d / "script", c), Catch::Contains("not a statically linked"));
  CHECK_THROWS_WITH(smtlab::image::prepare_initramfs(k, "/bin/true", c), Catch::Contains("not a statically linked"));
  CHECK_THROWS_WITH(smtlab::image::prepare_initramfs(k, d / "missing", c), Catch::Contains("does not exist"));
}
