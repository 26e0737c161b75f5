// Source kernels: what a git tree that cannot be resolved tells the user (no network needed: a
// file:// URL that does not exist fails at once).

#include <catch2/catch.hpp>
#include <filesystem>

#include "kernel/kernel.hpp"
#include "util/error.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;

TEST_CASE("an unresolvable git ref names the kernel definition's key, ref") {
  const fs::path d = smtlab::test::scratch_dir("source-tree");
  smtlab::cache::Cache cache(d / "cache");
  smtlab::recipe::KernelSpec spec;
  spec.name = "gitk";
  spec.source = smtlab::recipe::KernelSource::source;
  spec.tree = "file://" + (d / "no-such-linux.git").string();
  spec.git_ref = "v6.12";
  smtlab::Steps steps("test");
  try {
    smtlab::kernel::prepare_kernel(spec, cache, steps);
    FAIL("resolved a git tree that does not exist");
  } catch (const smtlab::Error& e) {
    INFO(e.what());
    REQUIRE(std::string(e.what()).rfind("kernel gitk: cannot resolve git ref 'v6.12' of " + spec.tree, 0) == 0);
    CHECK(e.hint() == "check the URL and `ref:` of the kernel definition (a branch, tag or full commit id); this needs "
                      "network access");
  }
}
