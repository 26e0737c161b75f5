// The pure parts of the initramfs's /init; the whole boot is exercised by every VM test.
#include <catch2/catch.hpp>

#include "guest/boot_init.hpp"

using smtlab::guest::parse_module_list;
using smtlab::guest::root_from_cmdline;

TEST_CASE("boot init: smtlab.root= is read from the kernel command line, the last one wins") {
  CHECK(root_from_cmdline("console=ttyS0 panic=-1 smtlab.root=/dev/vda\n") == "/dev/vda");
  CHECK(root_from_cmdline("smtlab.root=none") == "none");
  CHECK(root_from_cmdline("smtlab.root=/dev/vda quiet smtlab.root=/dev/vdb") == "/dev/vdb");
  CHECK(root_from_cmdline("\tsmtlab.root=/dev/vda\tloglevel=3") == "/dev/vda");
  CHECK_FALSE(root_from_cmdline("console=ttyS0 root=/dev/vda").has_value());
  CHECK_FALSE(root_from_cmdline("xsmtlab.root=/dev/vda").has_value());  // a word, not a substring
  CHECK_FALSE(root_from_cmdline("smtlab.root= quiet").has_value());      // empty is absent
  CHECK_FALSE(root_from_cmdline("").has_value());
}

TEST_CASE("boot init: the module list is one name per line, anything else is refused with its line") {
  using V = std::vector<std::string>;
  CHECK(parse_module_list("virtio_pci\nvirtio_blk\n\next4\n") == V{"virtio_pci", "virtio_blk", "ext4"});
  CHECK(parse_module_list("crc32c-intel") == V{"crc32c-intel"});  // no final newline
  CHECK(parse_module_list("").empty());
  CHECK_THROWS_WITH(parse_module_list("virtio_blk\n../../etc/passwd\n"), Catch::Contains("line 2"));
  CHECK_THROWS_WITH(parse_module_list("ext4 \n"), Catch::Contains("line 1"));
  CHECK_THROWS_WITH(parse_module_list(std::string(65, 'a')), Catch::Contains("line 1"));
}
