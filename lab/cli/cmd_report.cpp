// smtlab report DIR... -o report.html
#include <iostream>

#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "report/html.hpp"
#include "results/results.hpp"
#include "util/files.hpp"

namespace smtlab::cli {

void add_report_command(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>("report.html");
  auto flags = std::make_shared<CompareFlags>();
  auto title = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("report", "One self-contained HTML page: tables, plots, topology seen, manifest");
  cmd->add_option("dirs", *dirs, "Results directories")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", *out, "The HTML file to write")->capture_default_str();
  cmd->add_option("--title", *title, "Page title");
  add_compare_flags(cmd, *flags, false);
  cmd->callback([dirs, out, flags, title] {
    std::vector<results::RunResults> runs;
    for (const auto& d : *dirs) runs.push_back(results::load_results(d));
    check_baseline(runs, *flags);
    report::ReportOptions options;
    options.compare = flags->options();
    options.title = *title;
    write_file_atomic(*out, report::render_html_report(runs, options));
    std::cout << "wrote " << *out << "\n";
  });
}

}  // namespace smtlab::cli
