#pragma once
// The vmstat profile of a block (seed 004): per column, the vmstat records of its first VM over time.
#include <map>
#include <string>
#include <vector>

#include "report/options.hpp"
#include "report/tables.hpp"

namespace smtlab::report {

struct VmstatSeries {
  std::string column;
  std::vector<double> t;
  std::vector<std::map<std::string, double>> rows;  // one per t
};

// Series for each column of the block that has vmstat records for `vm`, or for its own guest when
// the column holds one guest's samples (Column::vm); others are left out.
std::vector<VmstatSeries> vmstat_profile(const Block& block, int vm = 0);

// Text table: a time column, then per column the chosen vmstat fields over time, either side by
// side (one group per column) or stacked (one table per column, as in seed 004). Empty when no
// column has vmstat records.
std::string format_vmstat(const Block& block, const std::vector<std::string>& fields, VmstatLayout layout);

}  // namespace smtlab::report
