#pragma once
// What a run does with the attempts in its results directory: which cells run now (in a new run
// all of them; in a resumed one, `smtlab run --resume`, the ones that have not finished, and with
// retry_failed the failed ones too), and what a boot that is booted again leaves.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "results/writer.hpp"

namespace smtlab::run {

struct CellChoice {
  std::vector<size_t> run;  // indices into the ids given, in their order
  int ok = 0, failed = 0;   // finished cells left as they are
};

// Throws unless a resume of the run recorded in `recorded` (its manifest, in `dir`) with `now`
// (what this smtlab records of itself: "accel", "kernels", "image", and "shard" as
// plan::shard_record gives it) measures what the run measured: the same accelerator (kvm, tcg),
// the same bytes of the kernels both record, the same image definition and installed packages
// (results::artifact_difference), and for a run that recorded its shard, the same shard K/N. The
// error names what differs, recorded and now, and what to do. Fields the manifest does not record
// (older versions) are not compared.
void check_resume_conditions(const nlohmann::json& recorded, const nlohmann::json& now,
                             const std::filesystem::path& dir);

// `ids`: the planned cells, each of which must be in the writer's manifest (otherwise an Error
// naming the cell and `dir`, and nothing in the directory has changed). For a resumed run
// (`resumed_with`: what this smtlab records of itself), so must its conditions
// (check_resume_conditions). Then the resume is recorded
// (ResultsWriter::record_resume). A cell that failed with `retry_failed` has its attempt kept under
// attempts/ (ResultsWriter::archive_attempt, said on stderr); an ok or failed one is left as
// it is; the others run afresh, and what an unfinished attempt of theirs wrote (a cell left
// "running" by a process that died) is kept under attempts/ as "interrupted"
// (ResultsWriter::archive_unfinished, said on stderr), never deleted.
CellChoice choose_cells(results::ResultsWriter& writer, const std::vector<std::string>& ids, bool retry_failed,
                        const nlohmann::json* resumed_with = nullptr);

// SessionConfig::keep_failed_boot for a boot of the cells `ids` (one, or a shared boot's): each
// cell's files move to attempts/<id>/<n>/, recorded as a "failed" attempt with the boot's error,
// and the cell stays "running" (ResultsWriter::archive_retried), so the next boot starts from
// clean files. Returns "kept in attempts/<id>/<n>, ..." ("" when no cell had written anything).
std::function<std::string(int attempt, const std::string& error)> keep_failed_boots(results::ResultsWriter& writer,
                                                                                    std::vector<std::string> ids);

}  // namespace smtlab::run
