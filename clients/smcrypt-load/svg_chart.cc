#include "clients/smcrypt-load/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace smcrypt::load {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
constexpr int kWidth = 880;
constexpr int kLeft = 80, kRight = 200, kTop = 40, kBottom = 50;

std::string Num(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e6 || a < 1e-3) return absl::StrFormat("%.0e", v);
  if (a >= 100) return absl::StrFormat("%.0f", v);
  if (a >= 1) return absl::StrFormat("%.3g", v);
  return absl::StrFormat("%.2g", v);
}

// Axis maps data values to pixels, linear or logarithmic, and proposes ticks.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;

  static Axis Fit(double lo, double hi, bool log, bool from_zero) {
    Axis a;
    a.log = log;
    if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) lo = hi = log ? 1 : 0;
    if (log) {
      a.lo = std::pow(10, std::floor(std::log10(lo)));
      a.hi = std::pow(10, std::ceil(std::log10(hi)));
      if (a.hi <= a.lo) a.hi = a.lo * 10;
    } else {
      a.lo = from_zero ? std::min(0.0, lo) : lo;
      a.hi = hi;
      if (a.hi <= a.lo) a.hi = a.lo + 1;
      const double step = NiceStep((a.hi - a.lo) / 5);
      a.lo = std::floor(a.lo / step) * step;
      a.hi = std::ceil(a.hi / step) * step;
    }
    return a;
  }
  static double NiceStep(double raw) {
    const double p = std::pow(10, std::floor(std::log10(raw)));
    const double f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }
  // Fraction of the axis length, 0 at lo, 1 at hi.
  double Frac(double v) const {
    if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
  std::vector<double> Ticks() const {
    std::vector<double> t;
    if (log) {
      for (double v = lo; v <= hi * 1.0001; v *= 10) t.push_back(v);
    } else {
      const double step = NiceStep((hi - lo) / 5);
      for (double v = lo; v <= hi + step / 1000; v += step) t.push_back(v);
    }
    return t;
  }
  bool Valid(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

// ChartWidth is kWidth, widened when the legend right of the plot needs more than the
// kRight margin: its swatch (18 px), then the longest name at 12 px sans-serif, estimated at
// 7.5 px a character (wider than DejaVu Sans's capitals and digits, 7.0-7.3 px), and 10 px to
// spare. The plot keeps its width; a long name no longer runs past the right edge.
int ChartWidth(const std::vector<std::string>& names) {
  size_t longest = 0;
  for (const std::string& n : names) longest = std::max(longest, n.size());
  const int legend = 16 + 18 + static_cast<int>(std::ceil(7.5 * static_cast<double>(longest))) + 10;
  return kWidth - kRight + std::max(kRight, legend);
}

std::string Header(int width, int height, const std::string& title) {
  return absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"", width,
      "\" height=\"", height, "\" viewBox=\"0 0 ", width, " ", height,
      "\" font-family=\"sans-serif\" font-size=\"12\">\n",
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      "<text x=\"", kWidth / 2, "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" "
      "font-weight=\"bold\">", MarkupEscape(title), "</text>\n");
}

std::string Legend(const std::vector<std::string>& names, int x, int y) {
  std::string out = "<g class=\"legend\">\n";
  for (size_t i = 0; i < names.size(); ++i) {
    const int yy = y + static_cast<int>(i) * 18;
    absl::StrAppend(&out, "<rect x=\"", x, "\" y=\"", yy - 9, "\" width=\"12\" height=\"10\" fill=\"",
                    kColors[i % 8], "\"/>\n<text x=\"", x + 18, "\" y=\"", yy, "\">",
                    MarkupEscape(names[i]), "</text>\n");
  }
  return out + "</g>\n";
}

// YAxis draws the grid lines and labels of a panel at [top, top + h).
std::string YAxis(const Axis& y, int top, int h, int plot_w, const std::string& label) {
  std::string out;
  for (double t : y.Ticks()) {
    const double py = top + h - y.Frac(t) * h;
    absl::StrAppendFormat(&out,
                          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          kLeft, py, kLeft + plot_w, py, kLeft - 6, py + 4, Num(t));
  }
  absl::StrAppendFormat(&out,
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                        "stroke=\"#333\"/>\n<text transform=\"translate(18,%d) rotate(-90)\" "
                        "text-anchor=\"middle\">%s</text>\n",
                        kLeft, top, plot_w, h, top + h / 2, MarkupEscape(label));
  return out;
}

}  // namespace

std::string LineChartSvg(const std::string& title, const std::string& x_label, bool log_x,
                         const std::vector<LinePanel>& panels) {
  constexpr int kPanelH = 260, kGap = 30;
  const int plot_w = kWidth - kLeft - kRight;
  const int height = kTop + static_cast<int>(panels.size()) * (kPanelH + kGap) - kGap + kBottom;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  for (const LinePanel& p : panels) {
    for (const LineSeries& s : p.series) {
      for (auto [x, y] : s.points) {
        if (std::isfinite(x) && (!log_x || x > 0)) {
          xlo = std::min(xlo, x);
          xhi = std::max(xhi, x);
        }
      }
    }
  }
  const Axis xa = Axis::Fit(xlo, xhi, log_x, false);
  std::string out;
  std::vector<std::string> names;
  for (size_t pi = 0; pi < panels.size(); ++pi) {
    const LinePanel& p = panels[pi];
    const int top = kTop + static_cast<int>(pi) * (kPanelH + kGap);
    double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
    for (const LineSeries& s : p.series) {
      for (auto [x, y] : s.points) {
        if (std::isfinite(y) && (!p.log_y || y > 0)) {
          ylo = std::min(ylo, y);
          yhi = std::max(yhi, y);
        }
      }
    }
    const Axis ya = Axis::Fit(ylo, yhi, p.log_y, true);
    absl::StrAppend(&out, YAxis(ya, top, kPanelH, plot_w, p.y_label));
    for (size_t si = 0; si < p.series.size(); ++si) {
      const LineSeries& s = p.series[si];
      if (pi == 0) names.push_back(s.name);
      std::string pts;
      std::string dots;
      for (auto [x, y] : s.points) {
        if (!xa.Valid(x) || !ya.Valid(y)) continue;
        const double px = kLeft + xa.Frac(x) * plot_w;
        const double py = top + kPanelH - ya.Frac(y) * kPanelH;
        absl::StrAppendFormat(&pts, "%.1f,%.1f ", px, py);
        absl::StrAppendFormat(&dots, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                              px, py, kColors[si % 8]);
      }
      absl::StrAppend(&out, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"",
                      kColors[si % 8], "\" points=\"", pts, "\"/>\n", dots);
    }
    if (pi + 1 == panels.size()) {
      for (double t : xa.Ticks()) {
        const double px = kLeft + xa.Frac(t) * plot_w;
        absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                              px, top + kPanelH + 16, Num(t));
      }
      absl::StrAppend(&out, "<text x=\"", kLeft + plot_w / 2, "\" y=\"", top + kPanelH + 36,
                      "\" text-anchor=\"middle\">", MarkupEscape(x_label), "</text>\n");
    }
  }
  absl::StrAppend(&out, Legend(names, kWidth - kRight + 16, kTop + 12), "</svg>\n");
  return Header(ChartWidth(names), height, title) + out;
}

std::string BarChartSvg(const std::string& title, const std::string& y_label,
                        const std::vector<std::string>& categories,
                        const std::vector<BarSeries>& series, bool log_y, double reference) {
  constexpr int kPlotH = 320;
  const int plot_w = kWidth - kLeft - kRight;
  const int height = kTop + kPlotH + kBottom + 10;
  double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  for (const BarSeries& s : series) {
    for (double v : s.values) {
      if (std::isfinite(v) && (!log_y || v > 0)) {
        ylo = std::min(ylo, v);
        yhi = std::max(yhi, v);
      }
    }
  }
  if (reference > 0) {
    ylo = std::min(ylo, reference);
    yhi = std::max(yhi, reference);
  }
  const Axis ya = Axis::Fit(ylo, yhi, log_y, true);
  std::string out;
  absl::StrAppend(&out, YAxis(ya, kTop, kPlotH, plot_w, y_label));
  const double group_w = static_cast<double>(plot_w) / std::max<size_t>(1, categories.size());
  const double bar_w = group_w * 0.8 / std::max<size_t>(1, series.size());
  const double base = log_y ? kTop + kPlotH : kTop + kPlotH - ya.Frac(0) * kPlotH;
  for (size_t c = 0; c < categories.size(); ++c) {
    const double gx = kLeft + c * group_w + group_w * 0.1;
    for (size_t si = 0; si < series.size(); ++si) {
      if (c >= series[si].values.size()) continue;
      const double v = series[si].values[c];
      if (!ya.Valid(v)) continue;
      const double py = kTop + kPlotH - ya.Frac(v) * kPlotH;
      absl::StrAppendFormat(&out,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "class=\"point\" fill=\"%s\"><title>%s %s: %s</title></rect>\n",
                            gx + si * bar_w, std::min(py, base), std::max(bar_w - 1, 1.0),
                            std::fabs(base - py), kColors[si % 8], MarkupEscape(series[si].name),
                            MarkupEscape(categories[c]), Num(v));
    }
    absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                          kLeft + (c + 0.5) * group_w, kTop + kPlotH + 16,
                          MarkupEscape(categories[c]));
  }
  if (reference > 0 && ya.Valid(reference)) {
    const double py = kTop + kPlotH - ya.Frac(reference) * kPlotH;
    absl::StrAppendFormat(&out,
                          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\" "
                          "stroke-dasharray=\"5,4\"/>\n",
                          kLeft, py, kLeft + plot_w, py);
  }
  std::vector<std::string> names;
  for (const BarSeries& s : series) names.push_back(s.name);
  absl::StrAppend(&out, Legend(names, kWidth - kRight + 16, kTop + 12), "</svg>\n");
  out = Header(ChartWidth(names), height, title) + out;
  return out;
}

std::string MarkupEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace smcrypt::load
