#include "util/cpulist.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "util/error.hpp"

namespace smtlab {
namespace {

int parse_number(std::string_view s, std::string_view whole) {
  int value = -1;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || value < 0 || value >= kMaxCpus)
    throw Error("'" + std::string(whole) + "' is not a CPU list",
                "write CPU numbers and ranges such as 0-3,8 (numbers below 4096)");
  return value;
}

}  // namespace

std::vector<int> parse_cpulist(std::string_view text) {
  std::vector<int> out;
  std::string_view rest = text;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
  if (rest.empty()) return out;
  // The ranges first, expanded only once merged: "0-4095" repeated thousands of times (a hostile
  // guest's topology record) must not cost thousands of times 4096 entries.
  std::vector<std::pair<int, int>> ranges;
  while (true) {
    auto comma = rest.find(',');
    auto item = rest.substr(0, comma);
    auto dash = item.find('-');
    int lo = parse_number(item.substr(0, dash), text);
    int hi = dash == std::string_view::npos ? lo : parse_number(item.substr(dash + 1), text);
    if (hi < lo) throw Error("'" + std::string(text) + "' has a descending range", "write ranges low-high");
    ranges.emplace_back(lo, hi);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::sort(ranges.begin(), ranges.end());
  int next = 0;  // the lowest CPU not in `out` yet that may still be added
  for (auto [lo, hi] : ranges) {
    for (int c = std::max(lo, next); c <= hi; ++c) out.push_back(c);
    next = std::max(next, hi + 1);
  }
  return out;
}

std::string format_cpulist(const std::vector<int>& cpus_in) {
  auto cpus = cpus_in;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace smtlab
