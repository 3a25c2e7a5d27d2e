#include "sim/drill/drill_charts.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace geodesic::sim {
namespace {

constexpr double kWidth = 720, kHeight = 320, kLeft = 60, kRight = 20, kTop = 30, kBottom = 40;

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

struct Frame {
  double x_max, y_max;
  double X(double x) const { return kLeft + (kWidth - kLeft - kRight) * (x_max <= 0 ? 0 : x / x_max); }
  double Y(double y) const { return kHeight - kBottom - (kHeight - kTop - kBottom) * (y_max <= 0 ? 0 : y / y_max); }
};

std::string Open(const std::string& title) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.0f\" y=\"18\" font-size=\"13\">%s</text>\n",
      kWidth, kHeight, kLeft, Escape(title));
}

std::string Axes(const Frame& frame, const std::string& x_label, const std::string& y_label, int y_ticks,
                 const std::string& y_format) {
  std::string out = absl::StrFormat(
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
      kLeft, frame.Y(0), kWidth - kRight, frame.Y(0), kLeft, frame.Y(0), kLeft, kTop);
  for (int i = 0; i <= y_ticks; ++i) {
    const double y = frame.y_max * i / y_ticks;
    absl::StrAppend(&out, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", kLeft - 4,
                                          frame.Y(y) + 4, absl::StrFormat(y_format.c_str(), y)),
                    absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", kLeft,
                                    frame.Y(y), kWidth - kRight, frame.Y(y)));
  }
  absl::StrAppend(&out,
                  absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                                  (kLeft + kWidth - kRight) / 2, kHeight - 8, Escape(x_label)),
                  absl::StrFormat("<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" "
                                  "text-anchor=\"middle\">%s</text>\n",
                                  kHeight / 2, kHeight / 2, Escape(y_label)));
  return out;
}

std::string Polyline(const std::vector<std::pair<double, double>>& points, const std::string& color) {
  std::string out = "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + color + "\" points=\"";
  for (const auto& [x, y] : points) absl::StrAppend(&out, absl::StrFormat("%.1f,%.1f ", x, y));
  return out + "\"/>\n";
}

std::string Legend(double x, double y, const std::string& color, const std::string& text) {
  return absl::StrFormat(
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"3\" fill=\"%s\"/>"
      "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
      x, y, color, x + 16, y + 4, Escape(text));
}

}  // namespace

std::string TimelineChart(const v1::DrillReport& report) {
  const double seconds = report.duration_ms() / 1000.0;
  double y_max = 1.0;
  for (const auto& sample : report.samples()) y_max = std::max(y_max, sample.mlu());
  const Frame frame{seconds, y_max * 1.05};
  std::string out = Open(absl::StrCat("drill ", report.name(), ": carried demand and max link utilization"));
  absl::StrAppend(&out, Axes(frame, "simulated time (s)", "ratio", 5, "%.2f"));
  for (const auto& event : report.events()) {
    const double x = frame.X(event.at_ms() / 1000.0);
    absl::StrAppend(&out, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c66\" "
                                          "stroke-dasharray=\"3,3\"><title>%s</title></line>\n",
                                          x, kTop, x, frame.Y(0), Escape(event.event())));
  }
  std::vector<std::pair<double, double>> carried, mlu;
  for (int i = 0; i < report.samples_size(); ++i) {
    const auto& sample = report.samples(i);
    const double end = i + 1 < report.samples_size() ? report.samples(i + 1).at_ms() / 1000.0 : seconds;
    for (double x : {sample.at_ms() / 1000.0, end}) {
      carried.emplace_back(frame.X(x), frame.Y(sample.carried_ratio()));
      mlu.emplace_back(frame.X(x), frame.Y(sample.mlu()));
    }
  }
  absl::StrAppend(&out, Polyline(carried, "#2a7"), Polyline(mlu, "#36c"),
                  Legend(kWidth - 260, 12, "#2a7", "carried / demand"), Legend(kWidth - 130, 12, "#36c", "max utilization"),
                  "</svg>\n");
  return out;
}

std::string ChainLatencyChart(const v1::DrillReport& report) {
  std::vector<double> before(report.chain_latency_before_us().begin(), report.chain_latency_before_us().end());
  std::vector<double> after(report.chain_latency_after_us().begin(), report.chain_latency_after_us().end());
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  double x_max = 1;
  for (double v : before) x_max = std::max(x_max, v / 1000);
  for (double v : after) x_max = std::max(x_max, v / 1000);
  const Frame frame{x_max * 1.05, 1.0};
  std::string out = Open(absl::StrCat("drill ", report.name(), ": chain latency, before and after"));
  absl::StrAppend(&out, Axes(frame, "end-to-end chain latency (ms)", "share of chains", 4, "%.2f"));
  auto cdf = [&](const std::vector<double>& values) {
    std::vector<std::pair<double, double>> points;
    for (size_t i = 0; i < values.size(); ++i) {
      const double x = frame.X(values[i] / 1000);
      points.emplace_back(x, frame.Y(static_cast<double>(i) / values.size()));
      points.emplace_back(x, frame.Y(static_cast<double>(i + 1) / values.size()));
    }
    return points;
  };
  absl::StrAppend(&out, Polyline(cdf(before), "#999"), Polyline(cdf(after), "#c60"),
                  Legend(kWidth - 260, 12, "#999", absl::StrCat("before (", before.size(), ")")),
                  Legend(kWidth - 130, 12, "#c60", absl::StrCat("after (", after.size(), ")")), "</svg>\n");
  return out;
}

}  // namespace geodesic::sim
