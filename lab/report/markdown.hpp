#pragma once
// Markdown pieces shared by the markdown format and the CI summary.
#include <string>
#include <vector>

#include "report/tables.hpp"

namespace smtlab::report {

std::string md_escape(const std::string& s);
// A block's rows as a Markdown table (bold = significant); mean_only: the Amean/Hmean rows only.
std::string md_table(const Block& b, const std::vector<std::string>& statistics, bool mean_only);
// "- failed: `col` (cell id): first line of the error" per cell that did not end ok.
std::string md_failed(const Block& b);
// "- disturbed: `col` (cell id): reason" per reason of each cell measured while disturbed.
std::string md_disturbed(const Block& b);

}  // namespace smtlab::report
