// The PVH boot entry: a bzImage's payload found from its header, unpacked with the real tool, and
// kept only when the result is an ELF with a PVH entry note. Synthetic kernels: a boot header
// around a compressed ELF that is made here.

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kernel/boot_entry.hpp"
#include "kernel/kernel.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using smtlab::kernel::bzimage_payload;
using smtlab::kernel::has_pvh_entry;

namespace {

void put(std::string& s, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// An ELF64 header, one PT_NOTE program header and its notes: a "GNU" build-id note, then a Xen
// note of `xen_type` (18 is XEN_ELFNOTE_PHYS32_ENTRY), then a body of filler.
std::string fake_elf(std::uint32_t xen_type) {
  std::string notes;
  const auto note = [&](const std::string& name, std::uint32_t type, const std::string& desc) {
    std::string n(12, '\0');
    put(n, 0, name.size() + 1, 4);
    put(n, 4, desc.size(), 4);
    put(n, 8, type, 4);
    std::string padded_name = name + '\0';
    padded_name.resize((padded_name.size() + 3) & ~std::size_t{3}, '\0');
    std::string padded_desc = desc;
    padded_desc.resize((padded_desc.size() + 3) & ~std::size_t{3}, '\0');
    notes += n + padded_name + padded_desc;
  };
  note("GNU", 3, std::string(20, '\x42'));
  note("Xen", xen_type, std::string("\x00\x00\x00\x01", 4));
  std::string elf(64 + 56, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;  // 64-bit
  elf[5] = 1;  // little-endian
  elf[6] = 1;
  put(elf, 0x20, 64, 8);  // e_phoff
  put(elf, 0x36, 56, 2);  // e_phentsize
  put(elf, 0x38, 1, 2);   // e_phnum
  put(elf, 64, 4, 4);     // PT_NOTE
  put(elf, 64 + 0x08, elf.size(), 8);
  put(elf, 64 + 0x20, notes.size(), 8);
  elf += notes;
  elf += std::string(5000, 'k');
  return elf;
}

// A bzImage whose payload is `elf` compressed by `tool` (its argv, reading and writing stdio
// through files here), with the kernel's 4-byte size trailer unless the format is gzip.
std::string fake_bzimage(const fs::path& dir, const std::string& elf, const std::vector<std::string>& tool,
                         bool size_trailer) {
  std::ofstream(dir / "elf", std::ios::binary) << elf;
  auto argv = tool;
  argv.push_back((dir / "elf").string());
  auto r = smtlab::run_checked(argv);
  std::string payload = r.out;
  if (size_trailer) {
    std::string trailer(4, '\0');
    put(trailer, 0, elf.size(), 4);
    payload += trailer;
  }
  std::string img(0x400, '\0');
  img[0x1f1] = 1;  // setup_sects: the payload area starts at (1 + 1) * 512
  img.replace(0x202, 4, "HdrS");
  put(img, 0x206, 0x20f, 2);  // boot protocol 2.15
  put(img, 0x20E, 0x300 - 0x200, 2);
  img.replace(0x300, 13, "6.12.0-fake #");
  img += std::string(16, '\0');  // what the decompressor's code would be
  put(img, 0x248, 16, 4);        // payload_offset (from 0x400)
  put(img, 0x24c, payload.size(), 4);
  return img + payload + std::string(64, '\0');
}

smtlab::kernel::KernelArtifact prepare(const fs::path& bzimage, smtlab::cache::Cache& cache) {
  smtlab::recipe::KernelSpec spec;
  spec.name = "fake";
  spec.source = smtlab::recipe::KernelSource::path;
  spec.bzimage = bzimage;
  smtlab::Steps steps("test");
  return smtlab::kernel::prepare_kernel(spec, cache, steps);
}

}  // namespace

TEST_CASE("the PVH note is found among an ELF's notes, and only there") {
  const fs::path d = smtlab::test::scratch_dir("boot-entry");
  std::ofstream(d / "pvh", std::ios::binary) << fake_elf(18);
  std::ofstream(d / "other-xen-note", std::ios::binary) << fake_elf(17);
  std::ofstream(d / "text", std::ios::binary) << "just text, not ELF";
  std::string truncated = fake_elf(18).substr(0, 100);
  std::ofstream(d / "truncated", std::ios::binary) << truncated;
  CHECK(has_pvh_entry(d / "pvh"));
  CHECK_FALSE(has_pvh_entry(d / "other-xen-note"));
  CHECK_FALSE(has_pvh_entry(d / "text"));
  CHECK_FALSE(has_pvh_entry(d / "truncated"));
  CHECK_FALSE(has_pvh_entry(d / "absent"));
}

TEST_CASE("a bzImage's payload: where it is, its format and its unpacked size") {
  const fs::path d = smtlab::test::scratch_dir("boot-entry");
  const std::string elf = fake_elf(18);
  SECTION("zstd, with the kernel's size trailer") {
    const auto img = fake_bzimage(d, elf, {"zstd", "-q", "-c"}, true);
    const auto p = bzimage_payload(img);
    CHECK(p.format == "zstd");
    CHECK(p.offset == 0x400 + 16);
    CHECK(p.uncompressed == elf.size());
    std::string trailer(4, '\0');
    put(trailer, 0, elf.size(), 4);
    CHECK(img.substr(p.offset + p.length, 4) == trailer);  // the length stops before the trailer
    CHECK(p.offset + p.length + 4 + 64 == img.size());
  }
  SECTION("gzip, whose own trailer ends with the size") {
    const auto img = fake_bzimage(d, elf, {"gzip", "-n", "-c"}, false);
    const auto p = bzimage_payload(img);
    CHECK(p.format == "gzip");
    CHECK(p.uncompressed == elf.size());
    CHECK(p.offset + p.length + 64 == img.size());
  }
  SECTION("not a bzImage, an old boot protocol, an unknown payload") {
    CHECK_THROWS_WITH(bzimage_payload(std::string(0x1000, 'x')), Catch::Contains("no HdrS"));
    auto img = fake_bzimage(d, elf, {"gzip", "-n", "-c"}, false);
    auto old = img;
    put(old, 0x206, 0x206, 2);
    CHECK_THROWS_WITH(bzimage_payload(old), Catch::Contains("older than 2.08"));
    auto unknown = img;
    unknown[0x410] = 'Q';
    CHECK_THROWS_WITH(bzimage_payload(unknown), Catch::Contains("no known compression"));
    auto outside = img;
    put(outside, 0x24c, 1 << 30, 4);
    CHECK_THROWS_WITH(bzimage_payload(outside), Catch::Contains("not inside the file"));
  }
}

TEST_CASE("a kernel with a PVH entry boots its cached vmlinux, others keep the bzImage and say why") {
  const fs::path d = smtlab::test::scratch_dir("boot-entry");
  smtlab::cache::Cache cache(d / "cache");
  const std::string elf = fake_elf(18);
  unsetenv("SMTLAB_BOOT_ENTRY");

  for (const auto& [name, tool, trailer] :
       std::vector<std::tuple<std::string, std::vector<std::string>, bool>>{
           {"zstd", {"zstd", "-q", "-c"}, true},
           {"xz", {"xz", "-c", "--check=crc32"}, true},
           {"lz4", {"lz4", "-l", "-q", "-c"}, true},
           {"gzip", {"gzip", "-n", "-c"}, false}}) {
    INFO(name);
    std::ofstream(d / ("bz-" + name), std::ios::binary) << fake_bzimage(d, elf, tool, trailer);
    const auto k = prepare(d / ("bz-" + name), cache);
    CHECK(k.boot_entry == "pvh");
    CHECK(k.boot_entry_why.empty());
    CHECK(k.boot_image != k.vmlinuz);
    CHECK(smtlab::read_file(k.boot_image) == elf);
    CHECK(smtlab::kernel::summary(k).find("PVH entry") != std::string::npos);
  }
  // The second time, a cache hit with the same file.
  const auto first = prepare(d / "bz-zstd", cache);
  CHECK(prepare(d / "bz-zstd", cache).boot_image == first.boot_image);

  // No PVH note: the bzImage, and why.
  std::ofstream(d / "bz-nonote", std::ios::binary) << fake_bzimage(d, fake_elf(17), {"zstd", "-q", "-c"}, true);
  auto plain = prepare(d / "bz-nonote", cache);
  CHECK(plain.boot_entry == "bzimage");
  CHECK(plain.boot_image == plain.vmlinuz);
  CHECK_THAT(plain.boot_entry_why, Catch::Contains("no PVH entry note"));
  CHECK(smtlab::kernel::summary(plain).find("bzImage entry") != std::string::npos);

  // A size trailer that does not match what unpacks: not booted as PVH.
  auto lying = fake_bzimage(d, elf, {"zstd", "-q", "-c"}, true);
  const auto p = bzimage_payload(lying);
  put(lying, p.offset + p.length, elf.size() + 1, 4);
  std::ofstream(d / "bz-lying", std::ios::binary) << lying;
  CHECK_THAT(prepare(d / "bz-lying", cache).boot_entry_why, Catch::Contains("its bzImage says"));

  // SMTLAB_BOOT_ENTRY: bzimage forces the bzImage, pvh insists, anything else is an error.
  setenv("SMTLAB_BOOT_ENTRY", "bzimage", 1);
  CHECK(prepare(d / "bz-zstd", cache).boot_entry == "bzimage");
  setenv("SMTLAB_BOOT_ENTRY", "pvh", 1);
  CHECK(prepare(d / "bz-zstd", cache).boot_entry == "pvh");
  CHECK_THROWS_WITH(prepare(d / "bz-nonote", cache), Catch::Contains("cannot be booted through PVH"));
  setenv("SMTLAB_BOOT_ENTRY", "fast", 1);
  CHECK_THROWS_WITH(prepare(d / "bz-zstd", cache), Catch::Contains("SMTLAB_BOOT_ENTRY=fast"));
  unsetenv("SMTLAB_BOOT_ENTRY");
}
