#include "report/options.hpp"

#include <algorithm>
#include <cctype>

#include "util/error.hpp"

namespace smtlab::report {

const std::vector<std::string>& all_statistics() {
  static const std::vector<std::string> all = {"Min", "Amean", "Stddev", "CoeffVar", "Max", "BAmean-95"};
  return all;
}

Format parse_format(const std::string& name) {
  if (name == "text") return Format::text;
  if (name == "markdown" || name == "md") return Format::markdown;
  if (name == "json") return Format::json;
  if (name == "csv") return Format::csv;
  throw Error("unknown format '" + name + "'", "use text, markdown, json or csv");
}

Grouping parse_grouping(const std::string& name) {
  if (name == "benchmark") return Grouping::by_benchmark;
  if (name == "topology") return Grouping::by_topology;
  throw Error("unknown grouping '" + name + "'", "use benchmark (default) or topology");
}

static std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<std::string> parse_statistics(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (item.empty()) continue;
    if (lower(item) == "all") return all_statistics();
    std::string l = lower(item);
    if (l == "hmean" || l == "mean") l = "amean";
    if (l == "bamean") l = "bamean-95";
    bool found = false;
    for (const auto& s : all_statistics())
      if (lower(s) == l) {
        out.push_back(s);
        found = true;
      }
    if (!found)
      throw Error("unknown statistic '" + item + "'", "use Min, Amean, Stddev, CoeffVar, Max, BAmean-95 or all");
  }
  if (out.empty()) throw Error("no statistic selected", "use e.g. Amean,Stddev");
  return out;
}

}  // namespace smtlab::report
