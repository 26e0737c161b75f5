// smtlab merge DIR... -o DIR
#include <iostream>

#include "cli/commands.hpp"
#include "results/results.hpp"

namespace smtlab::cli {

void add_merge_command(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("merge", "Merge the results of shards (smtlab run --shard K/N) into one directory");
  cmd->add_option("dirs", *dirs, "Shard results directories")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", *out, "The merged results directory (new)")->required();
  cmd->callback([dirs, out] {
    std::vector<std::filesystem::path> paths(dirs->begin(), dirs->end());
    auto report = results::merge_results(paths, *out);
    for (const auto& o : report.overlapping) std::cerr << "smtlab: overlap: " << o << "\n";
    for (const auto& m : report.missing) std::cerr << "smtlab: missing cell (no shard ran it): " << m << "\n";
    for (const auto& d : report.duplicate_shards) std::cerr << "smtlab: overlap: " << d << "\n";
    size_t absent_cells = 0;
    for (const auto& s : report.missing_shards) {
      std::string cells;
      for (const auto& id : s.cells) cells += (cells.empty() ? "" : ", ") + id;
      std::cerr << "smtlab: missing shard " << s.index << "/" << s.count << " (no directory holds it): its "
                << s.cells.size() << " cell(s) " << cells << "\n"
                << "smtlab: run it, then merge again with its directory: " << s.command << "\n";
      absent_cells += s.cells.size();
    }
    for (const auto& n : report.notes) std::cerr << "smtlab: note: " << n << "\n";
    std::cout << "merged " << paths.size() << " shard(s) into " << *out << ": " << report.cells << " cells, "
              << report.missing.size() << " missing, " << report.overlapping.size() << " overlapping";
    if (!report.missing_shards.empty())
      std::cout << ", " << report.missing_shards.size() << " shard(s) absent (" << absent_cells << " cells not in "
                << *out << ")";
    std::cout << "\n";
    if (!report.missing.empty() || !report.missing_shards.empty()) exit_status() = kCellsFailed;
  });
}

}  // namespace smtlab::cli
