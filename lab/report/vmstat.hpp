#pragma once
// The vmstat profile of a block (seed 004): per column, the vmstat records of its first benchmark
// guest over time; and the columns whose guest was asked for a profile but sent no row.
#include <map>
#include <string>
#include <vector>

#include "report/options.hpp"
#include "report/tables.hpp"

namespace smtlab::report {

struct VmstatSeries {
  std::string column;
  int vm = 0;  // the guest the rows come from
  std::vector<double> t;
  std::vector<std::map<std::string, double>> rows;  // one per t
};

// Series for each column of the block that has vmstat records of its guest: its own when the column
// holds one guest's samples (Column::vm), else the cell's first benchmark guest (vm 0 unless the
// topology's roles put a noise guest first); others are left out.
std::vector<VmstatSeries> vmstat_profile(const Block& block);

// A measured column with no vmstat row although its cell asked the guest for them (the manifest's
// vmstat_interval_s): mostly a benchmark shorter than one sampling interval.
struct VmstatGap {
  std::string column, cell;
  int vm = 0;
  int vms = 1;          // the cell's guests
  double bench_s = -1;  // -1: not recorded; a cell of several guests: the first one's first iteration to the last end
  double interval_s = 0;
  size_t setup_rows = 0;  // rows the guest sent before its first measured iteration
  std::string describe() const;  // why, and what gives a profile
};
std::vector<VmstatGap> vmstat_gaps(const Block& block);

// Text table: a time column, then per column the chosen vmstat fields over time, either side by
// side (one group per column) or stacked (one table per column, as in seed 004), then a line per
// gap. Empty when no column has vmstat records or a gap.
std::string format_vmstat(const Block& block, const std::vector<std::string>& fields, VmstatLayout layout);

}  // namespace smtlab::report
