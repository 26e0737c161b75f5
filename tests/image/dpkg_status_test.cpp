#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "image/dpkg_status.hpp"
#include "image/image.hpp"

TEST_CASE("an image's installed packages: dpkg-query's installed lines only, names and versions verbatim") {
  const auto got = smtlab::image::parse_installed(
      "installed\tgcc-12\t12.2.0-14\n"
      "config-files\told-tool\t1.0\n"           // removed, its configuration left: not installed
      "not-installed\tnever\t\n"
      "installed\tlibc6:i386\t2.36-9+deb12u4\n"  // a foreign architecture keeps its suffix
      "installed\ttoo\tmany\tfields\n"
      "installed\tno-version\t\n"
      "garbage\n"
      "installed\tmake\t4.3-4.1");              // no final newline
  CHECK(got == std::map<std::string, std::string>{
                   {"gcc-12", "12.2.0-14"}, {"libc6:i386", "2.36-9+deb12u4"}, {"make", "4.3-4.1"}});
  CHECK(smtlab::image::parse_installed("").empty());
}

TEST_CASE("the image's summary names the guest's gcc when the image recorded its packages") {
  smtlab::image::ImageArtifact a;
  a.name = "bench";
  a.size = 3 << 20;
  a.fs_size_mib = 512;
  a.digest = "1a2b3c4d5e6f" + std::string(52, '0');
  CHECK(smtlab::image::summary(a) == "image bench: 3.0 MiB qcow2 (512 MiB ext4), digest 1a2b3c4d5e6f, cache miss");
  a.installed = {{"gcc-12", "12.2.0-14"}, {"gcc-12-base", "12.2.0-14"}, {"libgcc-s1", "12.2.0-14"}, {"make", "4.3-4.1"}};
  a.cache_hit = true;
  CHECK(smtlab::image::summary(a) ==
        "image bench: 3.0 MiB qcow2 (512 MiB ext4), digest 1a2b3c4d5e6f, gcc-12 12.2.0-14, cache hit");
}
