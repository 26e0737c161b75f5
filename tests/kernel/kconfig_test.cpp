#include <catch2/catch.hpp>

#include "kernel/kconfig.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "checkout.hpp"

using namespace smtlab::kernel;

TEST_CASE("fragments merge onto a base config, later fragments win") {
  const std::string base =
      "#\n# Automatically generated\n#\nCONFIG_SMP=y\n# CONFIG_SCHED_CORE is not set\nCONFIG_NR_CPUS=8\n";
  auto a = parse_fragment("CONFIG_SCHED_CORE=y\n# a comment\n\nCONFIG_NR_CPUS=64\n", "a.config");
  auto b = parse_fragment("# CONFIG_SMP is not set\nCONFIG_NEW_THING=m\nCONFIG_NR_CPUS=16\n", "b.config");
  auto all = a;
  all.insert(all.end(), b.begin(), b.end());
  const auto merged = parse_config(merge_config(base, all));
  CHECK(merged.at("CONFIG_SCHED_CORE") == "y");
  CHECK(merged.at("CONFIG_SMP") == "n");
  CHECK(merged.at("CONFIG_NR_CPUS") == "16");
  CHECK(merged.at("CONFIG_NEW_THING") == "m");
}

TEST_CASE("a fragment option that silently disappeared after olddefconfig is named") {
  auto frag = parse_fragment("CONFIG_SMP=y\nCONFIG_SCHED_CORE=y\n# CONFIG_DEBUG_INFO is not set\nCONFIG_LOG_BUF_SHIFT=16\n",
                             "coresched.config");
  // What olddefconfig produced: SCHED_CORE dropped (its dependency SCHED_SMT is off),
  // LOG_BUF_SHIFT changed, DEBUG_INFO absent (fine: unset was asked).
  const std::string final_config = "CONFIG_SMP=y\n# CONFIG_SCHED_SMT is not set\nCONFIG_LOG_BUF_SHIFT=17\n";
  auto bad = check_fragment_options(final_config, frag);
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].wanted.option == "CONFIG_SCHED_CORE");
  CHECK(bad[0].actual == "n");
  CHECK(bad[0].wanted.line == 2);
  CHECK(bad[1].wanted.option == "CONFIG_LOG_BUF_SHIFT");
  CHECK(bad[1].actual == "17");
  try {
    require_fragment_options(final_config, frag, "/x/.config");
    FAIL("expected an error");
  } catch (const smtlab::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("CONFIG_SCHED_CORE=y requested by coresched.config:2") != std::string::npos);
    CHECK(msg.find("CONFIG_LOG_BUF_SHIFT=16") != std::string::npos);
    CHECK(msg.find("CONFIG_SMP") == std::string::npos);
  }
  CHECK_NOTHROW(require_fragment_options("CONFIG_SMP=y\nCONFIG_SCHED_CORE=y\nCONFIG_LOG_BUF_SHIFT=16\n", frag, "x"));
}

TEST_CASE("a module where =y was asked is a mismatch") {
  auto frag = parse_fragment("CONFIG_VIRTIO_BLK=y\n", "f");
  CHECK(check_fragment_options("CONFIG_VIRTIO_BLK=m\n", frag).size() == 1);
}

TEST_CASE("fragment syntax errors name the file and line") {
  CHECK_THROWS_WITH(parse_fragment("CONFIG_A=y\nSCHED_CORE=y\n", "bad.config"),
                    Catch::Contains("bad.config:2"));
  CHECK_THROWS_WITH(parse_fragment("CONFIG_A=\n", "bad.config"), Catch::Contains("bad.config:1"));
}

TEST_CASE("the shipped coresched fragment asks for what the guests need") {
  const auto text = smtlab::read_file((smtlab::test::source_dir() / "kernels/fragments/coresched.config").string());
  const auto opts = parse_config(text);
  for (const char* o : {"CONFIG_SMP", "CONFIG_SCHED_SMT", "CONFIG_SCHED_CORE", "CONFIG_VIRTIO_PCI", "CONFIG_VIRTIO_BLK",
                        "CONFIG_VIRTIO_CONSOLE", "CONFIG_EXT4_FS", "CONFIG_ACPI", "CONFIG_BLK_DEV_INITRD",
                        "CONFIG_SERIAL_8250_CONSOLE", "CONFIG_DEVTMPFS", "CONFIG_INET", "CONFIG_DEBUG_FS",
                        "CONFIG_SCHED_DEBUG", "CONFIG_FUTEX", "CONFIG_UNIX"}) {
    INFO(o);
    CHECK(opts.count(o) == 1);
    CHECK(opts.at(o) == "y");
  }
  CHECK_NOTHROW(parse_fragment(text, "coresched.config"));
}
