#pragma once
// Merging shards (the same recipe run in pieces, e.g. `--cells` on several machines) into one
// results directory.
#include <filesystem>
#include <string>
#include <vector>

namespace smtlab::results {

struct MergeReport {
  std::vector<std::string> overlapping;  // "<cell id> (in A and B; kept A)": run in several shards
  std::vector<std::string> missing;      // cell ids of the manifest that no shard ran
  std::vector<std::string> notes;        // e.g. shards from different hosts
  size_t cells = 0;                      // cells in the merged manifest
};

// Writes `out` (must not exist or be empty) from the shard directories. All shards must have the
// same recipe sha256 (otherwise smtlab::Error naming both). For each cell of the manifest, the
// shard that ran it (status other than pending) is used; when several did, the first "ok" one
// wins (else the first) and the overlap is reported. The merged manifest records "merged_from".
MergeReport merge_results(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out);

}  // namespace smtlab::results
