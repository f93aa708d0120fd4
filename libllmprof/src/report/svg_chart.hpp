// Inline SVG charts for the HTML reports: roofline (log-log), horizontal stacked bars, stage timeline.
//
// Hand-written SVG (no library, no script) so a report is one self-contained file that renders the
// same in a browser, in an e-mail client and on a machine without network. Every text is escaped.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::detail {

struct RooflineRoof {
  std::string label;  // "fp16 tensor 856 TFLOP/s"
  double flop_per_s = 0;
  bool primary = true;  // the roof of the chart's precision; others are drawn faint and dashed
};

struct RooflinePoint {
  double arithmetic_intensity = 0;  // FLOP per DRAM byte
  double flop_per_s = 0;
  double share = 0;     // of GPU time, sizes the marker
  std::string label;    // short kernel name
  std::string tooltip;  // full name and figures (SVG <title>)
};

struct RooflineChart {
  std::string title;
  std::vector<RooflineRoof> compute_roofs;
  std::optional<double> dram_bytes_per_s;
  std::vector<RooflinePoint> points;
};

struct BarSegment {
  std::string label;
  double value = 0;
  std::string tooltip;
  std::string color;  // empty: palette colour by position
};

struct StackedBar {
  std::string label;
  std::vector<BarSegment> segments;
};

struct TimelineRow {
  std::string label;
  double wall_ns = 0;
  double projection_ns = 0;
  double busy_ns = 0;
  std::string annotation;  // "GPU busy 0.92%"
};

// A categorical palette readable on white (Tableau 10).
const std::string& palette_color(std::size_t index);

// Powers of ten covering [low, high] (both > 0).
std::vector<double> decade_ticks(double low, double high);

std::string render_roofline_svg(const RooflineChart& chart);
// Bars share one scale (the largest total); a legend lists each distinct segment label once. Each bar
// ends with its total, written by `format_total` (a duration in ns when empty: most charts show time).
std::string render_stacked_bars_svg(const std::vector<StackedBar>& bars, const std::string& unit_caption,
                                    const std::function<std::string(double)>& format_total = {});
std::string render_timeline_svg(const std::vector<TimelineRow>& rows);

}  // namespace llmprof::detail
