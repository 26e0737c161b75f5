#pragma once
// Inline SVG charts for the HTML report: no scripts, no external resources.
#include <string>
#include <utility>
#include <vector>

namespace smtlab::report::svg {

// Text for HTML/XML content and attribute values (& < > " ').
std::string escape(const std::string& text);
// Colour of series k (a fixed palette, cycled).
std::string colour(size_t k);

struct Bar {
  size_t series = 0;  // colour index (the column)
  std::string name;   // for the tooltip
  double value = 0;
  double error = 0;  // half width of the confidence interval (0: none drawn)
  size_t n = 0;
};
struct BarGroup {
  std::string label;  // e.g. the job count
  std::vector<Bar> bars;
};
// Grouped bars with error whiskers; y starts at 0.
std::string bar_chart(const std::string& title, const std::string& y_label, const std::vector<BarGroup>& groups);

struct Line {
  size_t series = 0;
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};
std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<Line>& lines);

}  // namespace smtlab::report::svg
