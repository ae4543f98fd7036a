// svg_chart.h — a small self-contained SVG writer for smcrypt-load's charts: line charts
// (one or more stacked panels sharing an x axis) and grouped bar charts. The output is a
// standalone SVG 1.1 document that any browser shows.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_SVG_CHART_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_SVG_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace smcrypt::load {

// LineSeries is one named polyline; points with a non-finite or (on a log axis)
// non-positive coordinate are skipped.
struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

// LinePanel is one plot area.
struct LinePanel {
  std::string y_label;
  bool log_y = false;
  std::vector<LineSeries> series;
};

// LineChartSvg draws `panels` stacked vertically over one x axis.
// MarkupEscape escapes &, <, > and " for SVG and HTML text and attribute values.
std::string MarkupEscape(const std::string& s);

std::string LineChartSvg(const std::string& title, const std::string& x_label, bool log_x,
                         const std::vector<LinePanel>& panels);

// BarSeries is one bar per category; NaN leaves the bar out.
struct BarSeries {
  std::string name;
  std::vector<double> values;
};

// BarChartSvg draws grouped bars: one group per category, one bar per series. With
// `log_y` the axis is logarithmic (values <= 0 are left out); `reference` > 0 draws a
// dashed horizontal line at that value (e.g. a ratio of 1).
std::string BarChartSvg(const std::string& title, const std::string& y_label,
                        const std::vector<std::string>& categories,
                        const std::vector<BarSeries>& series, bool log_y,
                        double reference = 0);

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_SVG_CHART_H_
