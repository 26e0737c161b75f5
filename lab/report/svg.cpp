#include "report/svg.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace smtlab::report::svg {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string colour(size_t k) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  return palette[k % (sizeof palette / sizeof *palette)];
}

namespace {

constexpr double kW = 540, kH = 300, kLeft = 72, kRight = 16, kTop = 34, kBottom = 46;

// A "nice" tick step for a range: 1, 2 or 5 x 10^k giving about five ticks.
double nice_step(double range) {
  if (!(range > 0) || !std::isfinite(range)) return 1;
  double raw = range / 5;
  double p = std::pow(10, std::floor(std::log10(raw)));
  double f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

std::string tick_label(double v) {
  double a = std::fabs(v);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

std::string frame(const std::string& title, const std::string& x_label, const std::string& y_label, double y_max,
                  double step) {
  std::string s = fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-label=\"{2}\">\n<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n"
      "<text x=\"{3}\" y=\"20\" class=\"title\">{2}</text>\n",
      kW, kH, escape(title), kLeft);
  double plot_h = kH - kTop - kBottom;
  for (double v = 0; v <= y_max * 1.0000001; v += step) {
    double y = kTop + plot_h * (1 - v / y_max);
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"tick\">{}</text>\n",
        kLeft, y, kW - kRight, y, kLeft - 6, y + 4, escape(tick_label(v)));
  }
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>", kLeft, kTop, kH - kBottom);
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", kLeft, kH - kBottom,
                   kW - kRight);
  s += fmt::format("<text x=\"14\" y=\"{:.1f}\" transform=\"rotate(-90 14 {:.1f})\" text-anchor=\"middle\" "
                   "class=\"axis\">{}</text>\n",
                   kTop + plot_h / 2, kTop + plot_h / 2, escape(y_label));
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"axis\">{}</text>\n",
                   kLeft + (kW - kLeft - kRight) / 2, kH - 8, escape(x_label));
  return s;
}

}  // namespace

std::string bar_chart(const std::string& title, const std::string& y_label, const std::vector<BarGroup>& groups) {
  double top = 0;
  for (const auto& g : groups)
    for (const auto& b : g.bars)
      if (std::isfinite(b.value)) top = std::max(top, b.value + (std::isfinite(b.error) ? b.error : 0));
  if (!(top > 0)) top = 1;
  double step = nice_step(top * 1.05);
  double y_max = std::ceil(top * 1.05 / step) * step;
  std::string s = frame(title, "", y_label, y_max, step);
  double plot_w = kW - kLeft - kRight, plot_h = kH - kTop - kBottom;
  double gw = groups.empty() ? plot_w : plot_w / static_cast<double>(groups.size());
  auto y_of = [&](double v) { return kTop + plot_h * (1 - std::clamp(v, 0.0, y_max) / y_max); };
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    double gx = kLeft + gw * static_cast<double>(gi);
    size_t nb = std::max<size_t>(1, g.bars.size());
    double bw = std::min(48.0, gw * 0.8 / static_cast<double>(nb));
    double start = gx + (gw - bw * static_cast<double>(nb)) / 2;
    for (size_t bi = 0; bi < g.bars.size(); ++bi) {
      const Bar& b = g.bars[bi];
      if (!std::isfinite(b.value)) continue;
      double x = start + bw * static_cast<double>(bi);
      double y = y_of(b.value);
      s += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{} {}: {:.2f} ± {:.2f} (95% CI, n={})</title></rect>\n",
          x + 1, y, bw - 2, kH - kBottom - y, colour(b.series), escape(b.name), escape(g.label), b.value, b.error, b.n);
      if (b.error > 0 && std::isfinite(b.error)) {
        double cx = x + bw / 2, y1 = y_of(b.value - b.error), y2 = y_of(b.value + b.error);
        s += fmt::format(
            "<path class=\"ci\" d=\"M{0:.1f} {1:.1f}V{2:.1f}M{3:.1f} {1:.1f}H{4:.1f}M{3:.1f} {2:.1f}H{4:.1f}\" "
            "stroke=\"#000\" fill=\"none\"/>\n",
            cx, y1, y2, cx - bw / 4, cx + bw / 4);
      }
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"tick\">{}</text>\n", gx + gw / 2,
                     kH - kBottom + 16, escape(g.label));
  }
  return s + "</svg>\n";
}

std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<Line>& lines) {
  double x_max = 0, top = 0;
  for (const auto& l : lines)
    for (auto [x, y] : l.points) {
      if (std::isfinite(x)) x_max = std::max(x_max, x);
      if (std::isfinite(y)) top = std::max(top, y);
    }
  if (!(top > 0)) top = 1;
  if (!(x_max > 0)) x_max = 1;
  double step = nice_step(top * 1.05);
  double y_max = std::ceil(top * 1.05 / step) * step;
  std::string s = frame(title, x_label, y_label, y_max, step);
  double plot_w = kW - kLeft - kRight, plot_h = kH - kTop - kBottom;
  double xs = nice_step(x_max);
  double x_end = std::ceil(x_max / xs) * xs;
  auto px = [&](double x) { return kLeft + plot_w * std::clamp(x, 0.0, x_end) / x_end; };
  auto py = [&](double y) { return kTop + plot_h * (1 - std::clamp(y, 0.0, y_max) / y_max); };
  for (double x = 0; x <= x_end * 1.0000001; x += xs)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"tick\">{}</text>\n", px(x),
                     kH - kBottom + 16, escape(tick_label(x)));
  for (const auto& l : lines) {
    std::string pts;
    for (auto [x, y] : l.points)
      if (std::isfinite(x) && std::isfinite(y)) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    if (pts.empty()) continue;
    s += fmt::format("<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\">"
                     "<title>{}</title></polyline>\n",
                     pts, colour(l.series), escape(l.name));
    for (auto [x, y] : l.points)
      if (std::isfinite(x) && std::isfinite(y))
        s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>", px(x), py(y), colour(l.series));
    s += "\n";
  }
  return s + "</svg>\n";
}

}  // namespace smtlab::report::svg
