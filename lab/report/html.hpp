#pragma once
// `smtlab report`: one self-contained HTML page (no network, no scripts, no external CSS):
// summary tables, bar charts of means with 95 % confidence intervals per column and job count,
// run queue (r) and context switches (cs) over time per column, the topology each guest saw,
// failed cells, and each run's manifest. Everything from results is HTML-escaped.
#include <string>
#include <vector>

#include "report/options.hpp"
#include "results/loader.hpp"

namespace smtlab::report {

// Throws smtlab::Error for an unknown baseline (as compare does).
std::string render_html_report(const std::vector<results::RunResults>& runs, const ReportOptions& options);

}  // namespace smtlab::report
