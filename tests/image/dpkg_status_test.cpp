#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "image/dpkg_status.hpp"

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
