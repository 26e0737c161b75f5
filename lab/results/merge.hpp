#pragma once
// Merging shards (the same recipe run in pieces, e.g. `--cells` on several machines) into one
// results directory.
#include <filesystem>
#include <string>
#include <vector>

namespace smtlab::results {

// A shard of a sharded run (`smtlab run --shard K/N`) that none of the merged directories holds.
struct MissingShard {
  int index = 0, count = 0;        // K and N of --shard K/N
  std::vector<std::string> cells;  // the cells it holds that no directory ran, in plan order
  std::string command;             // `smtlab run RECIPE ... --shard K/N -o DIR`, to paste into a shell
};

struct MergeReport {
  // "<cell id> (in A and B; used A; B's kept in OUT/attempts/<id>/2/)": run in several shards
  std::vector<std::string> overlapping;
  std::vector<std::string> missing;      // cell ids of the manifest that no shard ran
  std::vector<std::string> notes;        // e.g. shards from different hosts
  // Sharded runs (their manifests' "shard"): the shards of N no directory holds, and "shard K/N is
  // in A and in B" for a shard that several directories hold (their cells are overlaps too).
  std::vector<MissingShard> missing_shards;
  std::vector<std::string> duplicate_shards;
  size_t cells = 0;                      // cells in the merged manifest
};

// Writes `out` (must not exist or be empty) from the shard directories. All shards must have the
// same recipe sha256, and where two shards used a kernel of one name or the image, the same one
// (package, version, sha256; image name and digest): otherwise smtlab::Error naming the field and
// both shards. For each cell of the manifest, the shard that ran it (status other than pending) is
// used; when several did, the first "ok" one wins (else the first), the overlap is reported, and
// what the others measured of the cell is kept as earlier attempts (attempts/<id>/<n>/ and the
// entry's "attempts", each with its "shard", as `run --retry-failed` keeps them). The merged
// manifest records "merged_from" (each shard's host, accel and versions) and every shard's kernels.
// Directories of `run --shard K/N` record which shard they hold; when all of them split one plan
// (the same N, --cells and --iterations), the shards of N that no directory holds are reported
// with their cells (those no directory ran) and the command that runs them, and the merged
// manifest's "shard" lists the shards it holds ("indices"). Directories without it (older runs,
// `--cells` shares) are merged as before.
MergeReport merge_results(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out);

}  // namespace smtlab::results
