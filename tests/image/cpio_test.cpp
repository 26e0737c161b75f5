
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "image/cpio.hpp"
#include "image/initramfs.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using smtlab::image::CpioWriter;

namespace {
fs::path fresh(const std::string& n) {
  return smtlab::test::scratch_dir("cpio-" + n);
}
}  // namespace

TEST_CASE("the cpio writer's archives are listed and extracted by GNU cpio") {
  const auto d = fresh("gnu");
  CpioWriter w;
  w.add_directory("bin");
  w.add_file("bin/hello", "#!/bin/sh\necho hi\n", 0755);
  w.add_symlink("bin/sh", "hello");
  w.add_file("odd", std::string(5, 'x'));  // sizes that need padding
  w.add_char_device("console", 0600, 5, 1);
  const std::string archive = w.finish();
  CHECK(archive.size() % 512 == 0);
  smtlab::write_file_atomic(d / "a.cpio", archive);

  smtlab::ProcessOptions opt;
  opt.stdin_data = archive;
  auto list = smtlab::run_checked({"cpio", "-t", "--quiet"}, opt);
  CHECK(list.out == "bin\nbin/hello\nbin/sh\nodd\nconsole\n");

  fs::create_directories(d / "x");
  opt.cwd = d / "x";
  smtlab::run_checked({"cpio", "-i", "--quiet", "--no-absolute-filenames", "-d", "--nonmatching", "console"}, opt);
  CHECK(smtlab::read_file(d / "x/bin/hello") == "#!/bin/sh\necho hi\n");
  CHECK(fs::read_symlink(d / "x/bin/sh") == "hello");
  CHECK(smtlab::read_file(d / "x/odd") == "xxxxx");
  CHECK((fs::status(d / "x/bin/hello").permissions() & fs::perms::owner_exec) != fs::perms::none);
  smtlab::ProcessOptions vopt;
  vopt.stdin_data = archive;
  auto verbose = smtlab::run_checked({"cpio", "-tv", "--quiet"}, vopt);
  CHECK(verbose.out.find("crw-------") != std::string::npos);
}

TEST_CASE("the per-VM initrd is the base followed by a cpio holding /job.json and a fresh random seed") {
  const auto d = fresh("job");
  CpioWriter w;
  w.add_file("init", "base init", 0755);
  const std::string base = w.finish();
  smtlab::write_file_atomic(d / "base.cpio", base);
  const std::string job = R"({"schema":1,"cell":"abc","kind":"exec","argv":["uname","-r"]})";
  smtlab::image::write_initrd_with_job(d / "base.cpio", job, d / "vm0.initrd");
  const std::string all = smtlab::read_file(d / "vm0.initrd");
  REQUIRE(all.size() > base.size());
  CHECK(all.compare(0, base.size(), base) == 0);
  smtlab::ProcessOptions opt;
  opt.stdin_data = all.substr(base.size());
  CHECK(smtlab::run_checked({"cpio", "-t", "--quiet"}, opt).out == "job.json\nrandom-seed\n");
  fs::create_directories(d / "x");
  opt.cwd = d / "x";
  smtlab::run_checked({"cpio", "-i", "--quiet"}, opt);
  CHECK(smtlab::read_file(d / "x/job.json") == job);
  const std::string seed = smtlab::read_file(d / "x/random-seed");
  CHECK(seed.size() == 32);
  CHECK((fs::status(d / "x/random-seed").permissions() & fs::perms::others_read) == fs::perms::none);
  CHECK_FALSE(fs::exists(d / "vm0.initrd.tmp"));
  // Every initrd gets its own seed.
  smtlab::image::write_initrd_with_job(d / "base.cpio", job, d / "vm1.initrd");
  opt.stdin_data = smtlab::read_file(d / "vm1.initrd").substr(base.size());
  fs::create_directories(d / "y");
  opt.cwd = d / "y";
  smtlab::run_checked({"cpio", "-i", "--quiet"}, opt);
  CHECK(smtlab::read_file(d / "y/random-seed") != seed);
}
