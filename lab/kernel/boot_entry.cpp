#include "kernel/boot_entry.hpp"

#include <fmt/core.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;

namespace smtlab::kernel {

namespace {

std::uint64_t le64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

std::uint32_t le32(std::string_view bytes, std::size_t at) {
  return le32(reinterpret_cast<const unsigned char*>(bytes.data() + at));
}

struct Magic {
  const char* format;
  std::string_view bytes;
};

// The compressors the kernel's arch/x86/boot/compressed/Makefile can use, by their stream magic.
constexpr std::array<Magic, 7> kMagics = {{
    {"gzip", {"\x1f\x8b", 2}},
    {"bzip2", {"BZh", 3}},
    {"lzma", {"\x5d\x00\x00", 3}},
    {"xz", {"\xfd" "7zXZ\x00", 6}},
    {"lzo", {"\x89LZO", 4}},
    {"lz4", {"\x02\x21\x4c\x18", 4}},
    {"zstd", {"\x28\xb5\x2f\xfd", 4}},
}};

// The tool and arguments that unpack `in` (named with the format's suffix) into dir/vmlinux.
std::vector<std::string> unpack_command(const std::string& format, const fs::path& in, const fs::path& out) {
  if (format == "zstd") return {"zstd", "-d", "-q", "-f", "--no-progress", in.string(), "-o", out.string()};
  if (format == "lz4") return {"lz4", "-d", "-q", "-f", in.string(), out.string()};
  if (format == "lzo") return {"lzop", "-d", "-q", "-f", in.string(), "-o" + out.string()};
  // gzip, bzip2, xz and lzma unpack next to their input, dropping the suffix (= out).
  if (format == "gzip") return {"gzip", "-d", "-k", "-f", "-q", in.string()};
  if (format == "bzip2") return {"bzip2", "-d", "-k", "-f", "-q", in.string()};
  if (format == "xz") return {"xz", "-d", "-k", "-f", "-q", in.string()};
  return {"xz", "--format=lzma", "-d", "-k", "-f", "-q", in.string()};
}

std::string suffix_of(const std::string& format) {
  if (format == "gzip") return ".gz";
  if (format == "bzip2") return ".bz2";
  if (format == "zstd") return ".zst";
  return "." + format;
}

}  // namespace

BzImagePayload bzimage_payload(std::string_view b) {
  if (b.size() < 0x260 || b.substr(0x202, 4) != "HdrS") {
    throw Error("not a bzImage (no HdrS header)");
  }
  const unsigned protocol = static_cast<unsigned char>(b[0x206]) | (static_cast<unsigned char>(b[0x207]) << 8);
  if (protocol < 0x208) {
    throw Error(fmt::format("boot protocol {:#x} is older than 2.08 and does not say where its payload is", protocol));
  }
  unsigned setup_sects = static_cast<unsigned char>(b[0x1f1]);
  if (setup_sects == 0) setup_sects = 4;
  BzImagePayload p;
  p.offset = (static_cast<std::uint64_t>(setup_sects) + 1) * 512 + le32(b, 0x248);
  const std::uint64_t stored = le32(b, 0x24c);
  if (stored < 8 || p.offset + stored > b.size()) {
    throw Error(fmt::format("its payload ({} bytes at {}) is not inside the file ({} bytes)", stored, p.offset, b.size()));
  }
  const std::string_view payload = b.substr(p.offset, stored);
  for (const auto& m : kMagics) {
    if (payload.substr(0, m.bytes.size()) == m.bytes) p.format = m.format;
  }
  if (p.format.empty()) throw Error("its payload has no known compression magic");
  p.uncompressed = le32(payload, stored - 4);
  // Every compressor but gzip has the size appended by the kernel's build (gzip's own trailer
  // already ends with it).
  p.length = p.format == "gzip" ? stored : stored - 4;
  return p;
}

bool has_pvh_entry(const fs::path& elf) {
  constexpr std::uint32_t kPtNote = 4;
  constexpr std::uint32_t kXenElfnotePhys32Entry = 18;
  std::ifstream in(elf, std::ios::binary);
  unsigned char eh[64] = {};
  if (!in.read(reinterpret_cast<char*>(eh), sizeof eh)) return false;
  if (std::memcmp(eh, "\x7f" "ELF", 4) != 0 || eh[4] != 2 /* ELFCLASS64 */ || eh[5] != 1 /* LSB */) return false;
  const std::uint64_t phoff = le64(eh + 0x20);
  const unsigned phentsize = eh[0x36] | (eh[0x37] << 8);
  const unsigned phnum = eh[0x38] | (eh[0x39] << 8);
  if (phentsize < 56 || phnum == 0 || phnum > 64) return false;
  for (unsigned i = 0; i < phnum; ++i) {
    unsigned char ph[56] = {};
    in.seekg(static_cast<std::streamoff>(phoff + std::uint64_t{i} * phentsize));
    if (!in.read(reinterpret_cast<char*>(ph), sizeof ph)) return false;
    if (le32(ph) != kPtNote) continue;
    const std::uint64_t off = le64(ph + 0x08), size = le64(ph + 0x20);
    if (size > (1 << 20)) continue;  // notes are small; anything else is not a note we read
    std::string notes(size, '\0');
    in.seekg(static_cast<std::streamoff>(off));
    if (!in.read(notes.data(), static_cast<std::streamsize>(size))) return false;
    const auto* n = reinterpret_cast<const unsigned char*>(notes.data());
    std::uint64_t at = 0;
    while (at + 12 <= size) {
      const std::uint64_t namesz = le32(n + at), descsz = le32(n + at + 4), type = le32(n + at + 8);
      const std::uint64_t name_at = at + 12, desc_at = name_at + ((namesz + 3) & ~std::uint64_t{3});
      const std::uint64_t next = desc_at + ((descsz + 3) & ~std::uint64_t{3});
      if (next > size) break;
      if (namesz == 4 && std::memcmp(n + name_at, "Xen", 4) == 0 && type == kXenElfnotePhys32Entry) return true;
      at = next;
    }
  }
  return false;
}

void choose_boot_entry(KernelArtifact& k, cache::Cache& cache, Steps& steps) {
  k.boot_image = k.vmlinuz;
  k.boot_entry = "bzimage";
  std::string wanted = "auto";
  if (const char* env = std::getenv("SMTLAB_BOOT_ENTRY"); env && *env) wanted = env;
  if (wanted != "auto" && wanted != "pvh" && wanted != "bzimage") {
    throw Error(fmt::format("SMTLAB_BOOT_ENTRY={} is not a boot entry", wanted),
                "use auto (PVH when the kernel has it), pvh or bzimage");
  }
  const auto keep_bzimage = [&](const std::string& why) {
    k.boot_entry_why = why;
    if (wanted == "pvh") {
      throw Error(fmt::format("kernel {} cannot be booted through PVH: {}", k.name, why),
                  "unset SMTLAB_BOOT_ENTRY (or set it to auto) to boot its bzImage");
    }
  };
  if (wanted == "bzimage") {
    k.boot_entry_why = "SMTLAB_BOOT_ENTRY=bzimage";
    return;
  }
  if (!k.config.empty() && config_value(k.config, "CONFIG_PVH") != "y") {
    keep_bzimage("CONFIG_PVH is not set");
    return;
  }
  Sha256 key;
  key.field("what", "pvh-vmlinux/1").field("kernel", k.digest);
  try {
    auto entry = cache.get_or_build("vmlinux", key.hex(), k.name + " vmlinux", [&](const fs::path& tmp) {
      // What the kernel's bytes decide is cached either way (a vmlinux, or why there is none);
      // a missing or failing tool throws, so the next run tries again.
      const auto no_pvh = [&](const std::string& why) { write_file_atomic(tmp / "no-pvh-entry", why + "\n"); };
      const std::string bytes = read_file(k.vmlinuz, 256 << 20);
      BzImagePayload p;
      try {
        p = bzimage_payload(bytes);
      } catch (const Error& e) {
        return no_pvh(std::string("its bzImage: ") + e.what());
      }
      steps.step(fmt::format("unpacking the {} kernel for a PVH boot", p.format));
      const fs::path packed = tmp / ("vmlinux" + suffix_of(p.format));
      {
        std::ofstream out(packed, std::ios::binary);
        out.write(bytes.data() + p.offset, static_cast<std::streamsize>(p.length));
        if (!out.flush()) throw Error("cannot write " + packed.string());
      }
      const auto argv = unpack_command(p.format, packed, tmp / "vmlinux");
      if (!find_program(argv.front())) {
        throw Error(argv.front() + " is not installed", "install it (./smtlab installs what the lab needs)");
      }
      ProcessOptions options;
      options.timeout = std::chrono::minutes(2);
      const auto unpacked = run_process(argv, options);
      fs::remove(packed);
      std::error_code ec;
      const auto size = fs::file_size(tmp / "vmlinux", ec);
      std::string why;
      if (!unpacked.ok() || ec) {
        why = fmt::format("{} could not unpack its payload: {}", argv.front(), unpacked.err.substr(0, 200));
      } else if (static_cast<std::uint32_t>(size) != p.uncompressed) {
        why = fmt::format("the unpacked kernel has {} bytes, its bzImage says {}", size, p.uncompressed);
      } else if (!has_pvh_entry(tmp / "vmlinux")) {
        why = "its vmlinux has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)";
      }
      if (!why.empty()) {
        fs::remove(tmp / "vmlinux", ec);
        no_pvh(why);
      }
    });
    if (fs::exists(entry.dir / "vmlinux")) {
      k.boot_image = entry.dir / "vmlinux";
      k.boot_entry = "pvh";
      k.boot_entry_why.clear();
    } else {
      std::string why = read_file(entry.dir / "no-pvh-entry", 4096);
      while (!why.empty() && why.back() == '\n') why.pop_back();
      keep_bzimage(why);
    }
  } catch (const Error& e) {
    if (wanted == "pvh") throw;
    keep_bzimage(e.what());
    note(fmt::format("kernel {}: booting the bzImage (no PVH vmlinux: {})", k.name, e.what()));
  }
}

}  // namespace smtlab::kernel
