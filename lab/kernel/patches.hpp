#pragma once
// Applying a patch series to a kernel tree, stopping at the first patch that does not apply.
#include <filesystem>
#include <vector>

namespace smtlab::kernel {

// Applies each patch in order with `patch -p1` after a `--dry-run`. A patch that does not apply
// (cleanly or at all) throws smtlab::Error naming the patch file, with patch's own output (the
// failing hunk) in the message; the tree is left as it was before that patch.
void apply_patches(const std::filesystem::path& tree, const std::vector<std::filesystem::path>& patches);

}  // namespace smtlab::kernel
