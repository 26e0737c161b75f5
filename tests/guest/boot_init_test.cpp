// The pure parts of the initramfs's /init; the whole boot is exercised by every VM test.
#include <catch2/catch.hpp>

#include "guest/boot_init.hpp"
#include "guest/cmdline.hpp"
#include "util/error.hpp"

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

TEST_CASE("kernel command line: every KEY=VALUE word of a key, in order, and the faults it asks for") {
  using smtlab::guest::cmdline_values;
  using smtlab::guest::faults_from_cmdline;
  using V = std::vector<std::string>;
  CHECK(cmdline_values("a=1 b=2 a=3\n", "a") == V{"1", "3"});
  CHECK(cmdline_values("a= ab=2 a", "a") == V{""});  // "a" alone is no KEY=VALUE word; "ab" is another key
  CHECK(cmdline_values("x.a=1\ta=2=3", "a") == V{"2=3"});
  CHECK(cmdline_values("", "a").empty());

  CHECK(faults_from_cmdline("console=ttyS0 smtlab.root=/dev/vda").empty());
  CHECK(faults_from_cmdline("smtlab.fault=chat-stop-server quiet") == V{"chat-stop-server"});
  CHECK(faults_from_cmdline("smtlab.fault=noise-ends") == V{"noise-ends"});
  try {
    faults_from_cmdline("quiet smtlab.fault=chat-stop-sever");
    FAIL("an unknown fault was accepted");
  } catch (const std::exception& e) {
    const std::string what = smtlab::describe(e);
    CHECK_THAT(what, Catch::Contains("smtlab.fault=chat-stop-sever") && Catch::Contains("not a fault") &&
                         Catch::Contains("smtlab.fault=chat-stop-server") && Catch::Contains("smtlab.fault=noise-ends"));
  }
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
