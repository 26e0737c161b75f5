// Slow: the Kconfig path on the real linux-source-6.12 tree (download cached in the user's smtlab
// cache; unpacking and `make tinyconfig` take a minute or two). Nothing is built: the fragment
// turns SMP off, so Kconfig drops SCHED_CORE, and the build must stop naming it.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "kernel/kernel.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;

TEST_CASE("a fragment option that Kconfig drops stops the source build, naming it") {
  const fs::path d = smtlab::test::scratch_dir("kconfig");
  {
    std::ofstream(d / "broken.config") << "CONFIG_64BIT=y\n# CONFIG_SMP is not set\nCONFIG_SCHED_CORE=y\n"
                                          "CONFIG_PRINTK=y\n";
  }
  smtlab::cache::Cache cache;  // reuses the downloaded linux-source tarball
  smtlab::recipe::KernelSpec spec;
  spec.name = "broken-coresched";
  spec.source = smtlab::recipe::KernelSource::source;
  spec.tree = "debian:linux-source-6.12";
  spec.base_config = "tinyconfig";
  spec.fragments = {d / "broken.config"};
  smtlab::Steps steps("kconfig test");
  try {
    smtlab::kernel::prepare_kernel(spec, cache, steps);
    FAIL("expected the build to stop");
  } catch (const smtlab::Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("CONFIG_SCHED_CORE=y requested by broken.config:3") != std::string::npos);
    CHECK(msg.find("CONFIG_PRINTK") == std::string::npos);  // that one stuck
    CHECK(msg.find("CONFIG_SMP") == std::string::npos);     // unset was asked, unset it is
  }
  // The failed build's tree and objects went with it (work/<key>.<pid>).
  std::error_code ec;
  for (const auto& w : fs::directory_iterator(cache.root() / "work", ec)) {
    INFO(w.path());
    CHECK_FALSE(w.path().filename().string().ends_with("." + std::to_string(getpid())));
  }
}
