// Prebuilt kernels given by path.
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <fstream>

#include "kernel/apt.hpp"
#include "kernel/internal.hpp"
#include "util/error.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"

namespace fs = std::filesystem;

namespace smtlab::kernel::detail {

std::string bzimage_release(const fs::path& bzimage) {
  std::ifstream in(bzimage, std::ios::binary);
  char hdr[0x210] = {};
  if (!in.read(hdr, sizeof hdr) || std::string(hdr + 0x202, 4) != "HdrS") {
    throw Error(bzimage.string() + " is not a bzImage (no HdrS header)",
                "give the arch/x86/boot/bzImage (or a distribution vmlinuz) of an x86-64 kernel");
  }
  const auto off = static_cast<std::uint16_t>(static_cast<unsigned char>(hdr[0x20E]) |
                                              (static_cast<unsigned char>(hdr[0x20F]) << 8));
  in.seekg(off + 0x200);
  char text[256] = {};
  in.read(text, sizeof text - 1);
  std::string version(text);
  const auto sp = version.find(' ');
  if (off == 0 || version.empty()) throw Error(bzimage.string() + ": no kernel version in the header");
  return version.substr(0, sp);
}

KernelArtifact prepare_prebuilt(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps) {
  if (spec.bzimage.empty() || !fs::is_regular_file(spec.bzimage)) {
    throw Error(fmt::format("bzImage '{}' does not exist", spec.bzimage.string()),
                "set `bzimage:` to a built kernel image (arch/x86/boot/bzImage)");
  }
  if (!spec.modules_dir.empty() && !fs::is_directory(spec.modules_dir)) {
    throw Error(fmt::format("modules directory '{}' does not exist", spec.modules_dir.string()));
  }
  const std::string sha = sha256_file_cached(spec.bzimage, cache);
  Sha256 key;
  key.field("what", "kernel-path/1").field("bzimage", sha);
  if (!spec.modules_dir.empty()) {
    // Modules by (path, size, mtime) of each file: cheap and changes when they are rebuilt.
    std::vector<std::string> lines;
    for (const auto& f : fs::recursive_directory_iterator(spec.modules_dir)) {
      if (f.is_regular_file()) {
        lines.push_back(fmt::format("{} {} {}", f.path().lexically_relative(spec.modules_dir).string(),
                                    f.file_size(), f.last_write_time().time_since_epoch().count()));
      }
    }
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines) key.field("module", l);
  }
  auto entry = cache.get_or_build("kernel", key.hex(), spec.name + " " + spec.bzimage.filename().string(),
                                  [&](const fs::path& tmp) {
    steps.step("copying " + spec.bzimage.string());
    fs::copy_file(spec.bzimage, tmp / "vmlinuz");
    Meta meta{"", "", bzimage_release(tmp / "vmlinuz"), sha};
    if (!spec.modules_dir.empty()) {
      fs::copy(spec.modules_dir, tmp / "modules", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
      for (const char* link : {"build", "source"}) fs::remove(tmp / "modules" / link);
      if (!fs::exists(tmp / "modules/modules.dep")) {
        throw Error(spec.modules_dir.string() + " has no modules.dep",
                    "give lib/modules/<release> as installed by `make modules_install` (it runs depmod)");
      }
    }
    write_meta(tmp, spec, meta);
  });
  return from_entry(entry, spec);
}

}  // namespace smtlab::kernel::detail
