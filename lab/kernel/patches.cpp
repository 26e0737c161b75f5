#include "kernel/patches.hpp"

#include <fmt/core.h>

#include "util/error.hpp"
#include "util/process.hpp"

namespace fs = std::filesystem;

namespace smtlab::kernel {

void apply_patches(const fs::path& tree, const std::vector<fs::path>& patches) {
  for (const auto& p : patches) {
    if (!fs::is_regular_file(p)) {
      throw Error(fmt::format("patch {} does not exist", p.string()), "check the kernel's `patches:` list");
    }
    std::vector<std::string> base = {"patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch",
                                     "-d", tree.string(), "-i", fs::absolute(p).string()};
    auto dry = base;
    dry.push_back("--dry-run");
    auto r = run_process(dry);
    if (!r.ok()) {
      std::string out = r.out + r.err;
      while (!out.empty() && out.back() == '\n') out.pop_back();
      throw Error(fmt::format("patch {} does not apply to {}:\n{}", p.string(), tree.string(), out),
                  "rebase the patch on this tree (or fix the order of the series); patch -p1 --dry-run "
                  "shows the failing hunks");
    }
    auto real = run_process(base);
    if (!real.ok()) {
      throw Error(fmt::format("patch {} failed while applying (after a clean dry run):\n{}{}", p.string(), real.out,
                              real.err));
    }
  }
}

}  // namespace smtlab::kernel
