// Inline SVG charts (see svg_chart.hpp). Coordinates are rounded to 0.1 px so output is stable.
#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/format.hpp"

namespace llmprof::detail {
namespace {

constexpr const char* kFont = "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif\"";
constexpr const char* kAxisColor = "#5b6472";
constexpr const char* kGridColor = "#e3e7ed";
constexpr const char* kRoofColor = "#c0392b";
constexpr const char* kDramColor = "#1f5fa8";

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  std::string text = buffer;
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
  return text == "-0" ? "0" : text;
}

// Approximate text width for an 11 px system font; enough for collision avoidance.
double text_width(const std::string& text, double font_px) {
  std::size_t glyphs = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++glyphs;
  }
  return static_cast<double>(glyphs) * font_px * 0.58;
}

std::string text_element(double x, double y, const std::string& text, const std::string& attributes) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" " + attributes + ">" + html_escape(text) + "</text>";
}

std::string svg_open(double width, double height, const std::string& label, const std::string& css_class) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"" + css_class + "\" viewBox=\"0 0 " + num(width) + " " +
         num(height) + "\" width=\"" + num(width) + "\" height=\"" + num(height) + "\" role=\"img\" aria-label=\"" +
         html_escape(label) + "\" " + kFont + ">";
}

// "1", "10", "0.01", "1k", "10T": decade labels with SI prefixes for large values.
std::string decade_label(double value) {
  const int exponent = static_cast<int>(std::lround(std::log10(value)));
  if (exponent < 0) return format_number(value, 1);
  static const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  const int group = std::min(exponent / 3, 6);
  const int rest = exponent - group * 3;
  return std::string(rest == 0 ? "1" : rest == 1 ? "10" : "100") + kPrefixes[group];
}

struct LogAxis {
  double low, high, pixel_low, pixel_high;
  double map(double value) const {
    const double t = (std::log10(value) - std::log10(low)) / (std::log10(high) - std::log10(low));
    return pixel_low + t * (pixel_high - pixel_low);
  }
};

struct PlacedLabel {
  double x, y, width;
};

bool overlaps(const PlacedLabel& a, const PlacedLabel& b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && std::fabs(a.y - b.y) < 12;
}

}  // namespace

const std::string& palette_color(std::size_t index) {
  static const std::string kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kPalette[index % 10];
}

std::vector<double> decade_ticks(double low, double high) {
  std::vector<double> ticks;
  if (!(low > 0) || !(high > low)) return ticks;
  for (int exponent = static_cast<int>(std::ceil(std::log10(low) - 1e-9));
       exponent <= static_cast<int>(std::floor(std::log10(high) + 1e-9)); ++exponent) {
    ticks.push_back(std::pow(10.0, exponent));
  }
  return ticks;
}

namespace {

// The roofline's plot area and its two log axes, fitted to the points and the roofs.
struct RooflineFrame {
  double width = 1080, height = 500, left = 78, right = 170, top = 34, bottom = 56;
  double roof_max = 0, bandwidth = 0;
  double x_min = 1e300, x_max = 0, y_min = 1e300, y_max = 0;
  LogAxis x_axis{}, y_axis{};
};

RooflineFrame fit_roofline_frame(const RooflineChart& chart) {
  RooflineFrame frame;
  for (const auto& roof : chart.compute_roofs) frame.roof_max = std::max(frame.roof_max, roof.flop_per_s);
  frame.y_max = frame.roof_max;
  for (const auto& point : chart.points) {
    frame.x_min = std::min(frame.x_min, point.arithmetic_intensity);
    frame.x_max = std::max(frame.x_max, point.arithmetic_intensity);
    frame.y_min = std::min(frame.y_min, point.flop_per_s);
    frame.y_max = std::max(frame.y_max, point.flop_per_s);
  }
  frame.bandwidth = chart.dram_bytes_per_s.value_or(0);
  if (frame.x_max == 0) {
    frame.x_min = 1;
    frame.x_max = 100;
    frame.y_min = frame.y_max / 1e3;
  }
  // Bounds hug the data and the ridge point (not whole decades), so the kernels get the space.
  frame.x_min /= 2;
  frame.x_max *= 2;
  if (frame.bandwidth > 0 && frame.roof_max > 0) {
    const double ridge = frame.roof_max / frame.bandwidth;
    frame.x_min = std::min(frame.x_min, ridge / 30);
    frame.x_max = std::max(frame.x_max, ridge * 5);
  }
  frame.y_min /= 3;
  if (frame.bandwidth > 0) frame.y_min = std::min(frame.y_min, frame.bandwidth * frame.x_min);
  frame.y_max *= 2.5;
  frame.y_min = std::max(frame.y_min, frame.y_max / 1e8);
  frame.x_axis = LogAxis{frame.x_min, frame.x_max, frame.left, frame.width - frame.right};
  frame.y_axis = LogAxis{frame.y_min, frame.y_max, frame.height - frame.bottom, frame.top};
  return frame;
}

// Plot area, title, decade grid lines with their labels, and the axis titles.
std::string roofline_axes_svg(const RooflineFrame& f, const std::string& title) {
  std::string svg = "<rect x=\"" + num(f.left) + "\" y=\"" + num(f.top) + "\" width=\"" +
                    num(f.width - f.right - f.left) + "\" height=\"" + num(f.height - f.bottom - f.top) +
                    "\" fill=\"#fbfcfe\" stroke=\"" + kGridColor + "\"/>";
  svg += text_element(f.left, 20, title, "font-size=\"14\" font-weight=\"600\" fill=\"#1d2330\"");
  for (double tick : decade_ticks(f.x_min, f.x_max)) {
    const double x = f.x_axis.map(tick);
    svg += "<line class=\"grid\" x1=\"" + num(x) + "\" y1=\"" + num(f.top) + "\" x2=\"" + num(x) + "\" y2=\"" +
           num(f.height - f.bottom) + "\" stroke=\"" + kGridColor + "\"/>";
    svg +=
        text_element(x, f.height - f.bottom + 16, decade_label(tick),
                     "class=\"tick\" font-size=\"11\" text-anchor=\"middle\" fill=\"" + std::string(kAxisColor) + "\"");
  }
  for (double tick : decade_ticks(f.y_min, f.y_max)) {
    const double y = f.y_axis.map(tick);
    svg += "<line class=\"grid\" x1=\"" + num(f.left) + "\" y1=\"" + num(y) + "\" x2=\"" + num(f.width - f.right) +
           "\" y2=\"" + num(y) + "\" stroke=\"" + kGridColor + "\"/>";
    svg += text_element(f.left - 6, y + 4, decade_label(tick),
                        "class=\"tick\" font-size=\"11\" text-anchor=\"end\" fill=\"" + std::string(kAxisColor) + "\"");
  }
  svg += text_element((f.left + f.width - f.right) / 2, f.height - 14,
                      "Arithmetic intensity (FLOP per DRAM byte, log scale)",
                      "font-size=\"12\" text-anchor=\"middle\" fill=\"" + std::string(kAxisColor) + "\"");
  svg += "<text transform=\"translate(16 " + num((f.top + f.height - f.bottom) / 2) +
         ") rotate(-90)\" font-size=\"12\" text-anchor=\"middle\" fill=\"" + kAxisColor +
         "\">Achieved FLOP/s (log scale)</text>";
  return svg;
}

// Roofs: the DRAM slope up to each compute roof, then the flat compute roof to the right edge.
std::string roofs_svg(const RooflineChart& chart, const RooflineFrame& f) {
  std::string svg;
  const double bandwidth = f.bandwidth;
  if (bandwidth > 0) {
    double start_x = f.x_min;
    if (bandwidth * start_x < f.y_min) start_x = f.y_min / bandwidth;
    const double end_x = std::min(f.x_max, f.roof_max / bandwidth);
    const double px1 = f.x_axis.map(start_x), py1 = f.y_axis.map(bandwidth * start_x);
    const double px2 = f.x_axis.map(end_x), py2 = f.y_axis.map(bandwidth * end_x);
    svg += "<line class=\"roof-dram\" x1=\"" + num(px1) + "\" y1=\"" + num(py1) + "\" x2=\"" + num(px2) + "\" y2=\"" +
           num(py2) + "\" stroke=\"" + kDramColor + "\" stroke-width=\"2.2\"/>";
    const double angle = std::atan2(py2 - py1, px2 - px1) * 180 / 3.14159265358979;
    const double label_x = px1 + (px2 - px1) * 0.18, label_y = py1 + (py2 - py1) * 0.18 - 7;
    svg += "<text transform=\"translate(" + num(label_x) + " " + num(label_y) + ") rotate(" + num(angle) +
           ")\" font-size=\"11\" fill=\"" + kDramColor + "\">" + html_escape("DRAM " + format_si(bandwidth, "B/s")) +
           "</text>";
  }
  for (const auto& roof : chart.compute_roofs) {
    const double ridge = bandwidth > 0 ? std::max(f.x_min, roof.flop_per_s / bandwidth) : f.x_min;
    const double y = f.y_axis.map(roof.flop_per_s);
    svg += "<line class=\"roof-compute\" x1=\"" + num(f.x_axis.map(ridge)) + "\" y1=\"" + num(y) + "\" x2=\"" +
           num(f.width - f.right) + "\" y2=\"" + num(y) + "\" stroke=\"" + kRoofColor + "\" stroke-width=\"" +
           (roof.primary ? "2.2\"" : "1.2\" stroke-dasharray=\"5 4\" opacity=\"0.7\"") + "/>";
    svg += text_element(
        f.width - f.right + 6, y + 4, roof.label,
        "font-size=\"11\" fill=\"" + std::string(kRoofColor) + "\"" + (roof.primary ? "" : " opacity=\"0.8\""));
  }
  return svg;
}

// Kernels: big markers first so small ones stay clickable on top; labels nudged off each other.
std::string kernel_points_svg(const RooflineChart& chart, const RooflineFrame& f) {
  std::vector<std::size_t> order(chart.points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return chart.points[a].share > chart.points[b].share; });
  double max_share = 0;
  for (const auto& point : chart.points) max_share = std::max(max_share, point.share);
  std::string markers, labels;
  std::vector<PlacedLabel> placed;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const std::size_t i = order[rank];
    const auto& point = chart.points[i];
    const double x = f.x_axis.map(point.arithmetic_intensity), y = f.y_axis.map(point.flop_per_s);
    const double radius = 3.5 + 13 * (max_share > 0 ? std::sqrt(point.share / max_share) : 0);
    markers += "<g class=\"kernel-point\"><title>" + html_escape(point.tooltip) + "</title><circle cx=\"" + num(x) +
               "\" cy=\"" + num(y) + "\" r=\"" + num(radius) + "\" fill=\"" + palette_color(i) +
               "\" fill-opacity=\"0.75\" stroke=\"#ffffff\" stroke-width=\"1.2\"/></g>";
    PlacedLabel label{x + radius + 4, y + 4, text_width(point.label, 11)};
    if (label.x + label.width > f.width - 4) label.x = x - radius - 4 - label.width;
    static const double kNudges[] = {0, -13, 13, -26, 26, -39, 39};
    for (double nudge : kNudges) {
      PlacedLabel candidate = label;
      candidate.y += nudge;
      if (std::none_of(placed.begin(), placed.end(),
                       [&](const PlacedLabel& other) { return overlaps(candidate, other); })) {
        label = candidate;
        break;
      }
    }
    placed.push_back(label);
    labels += text_element(label.x, label.y, point.label, "class=\"point-label\" font-size=\"11\" fill=\"#1d2330\"");
  }
  return markers + labels;
}

}  // namespace

std::string render_roofline_svg(const RooflineChart& chart) {
  const RooflineFrame frame = fit_roofline_frame(chart);
  return svg_open(frame.width, frame.height, chart.title, "chart roofline") + roofline_axes_svg(frame, chart.title) +
         roofs_svg(chart, frame) + kernel_points_svg(chart, frame) + "</svg>";
}

std::string render_stacked_bars_svg(const std::vector<StackedBar>& bars, const std::string& unit_caption,
                                    const std::function<std::string(double)>& format_total) {
  const double width = 1080, label_width = 150, right = 80, bar_height = 26, gap = 18, top = 12;
  double total_max = 0;
  for (const auto& bar : bars) {
    double total = 0;
    for (const auto& segment : bar.segments) total += std::max(0.0, segment.value);
    total_max = std::max(total_max, total);
  }
  // Legend: each distinct label once, in order of first appearance, flowing over lines.
  std::vector<std::pair<std::string, std::string>> legend;
  std::size_t color_index = 0;
  std::vector<std::vector<std::string>> colors(bars.size());
  for (std::size_t b = 0; b < bars.size(); ++b) {
    for (const auto& segment : bars[b].segments) {
      auto found =
          std::find_if(legend.begin(), legend.end(), [&](const auto& item) { return item.first == segment.label; });
      std::string color = segment.color;
      if (found != legend.end()) {
        color = found->second;
      } else {
        if (color.empty()) color = palette_color(color_index++);
        legend.emplace_back(segment.label, color);
      }
      colors[b].push_back(color);
    }
  }
  const double plot_width = width - label_width - right;
  const double bars_bottom = top + static_cast<double>(bars.size()) * (bar_height + gap);
  double legend_x = label_width, legend_y = bars_bottom + 24;
  std::string legend_svg;
  for (const auto& [label, color] : legend) {
    const double item_width = 18 + text_width(label, 11) + 16;
    if (legend_x + item_width > width - right && legend_x > label_width) {
      legend_x = label_width;
      legend_y += 18;
    }
    legend_svg += "<rect x=\"" + num(legend_x) + "\" y=\"" + num(legend_y - 9) +
                  "\" width=\"11\" height=\"11\" rx=\"2\" fill=\"" + color + "\"/>" +
                  text_element(legend_x + 16, legend_y, label, "font-size=\"11\" fill=\"#1d2330\"");
    legend_x += item_width;
  }
  const double height = legend_y + 14;
  std::string svg = svg_open(width, height, unit_caption, "chart stacked-bars");
  for (std::size_t b = 0; b < bars.size(); ++b) {
    const double y = top + static_cast<double>(b) * (bar_height + gap);
    svg += text_element(label_width - 10, y + bar_height / 2 + 4, bars[b].label,
                        "font-size=\"12\" font-weight=\"600\" text-anchor=\"end\" fill=\"#1d2330\"");
    double x = label_width, total = 0;
    for (const auto& segment : bars[b].segments) total += std::max(0.0, segment.value);
    for (std::size_t s = 0; s < bars[b].segments.size(); ++s) {
      const auto& segment = bars[b].segments[s];
      const double w = total_max > 0 ? std::max(0.0, segment.value) / total_max * plot_width : 0;
      svg += "<g class=\"bar-segment\"><title>" +
             html_escape(segment.tooltip.empty() ? segment.label : segment.tooltip) + "</title><rect x=\"" + num(x) +
             "\" y=\"" + num(y) + "\" width=\"" + num(std::max(w, 0.0)) + "\" height=\"" + num(bar_height) +
             "\" fill=\"" + colors[b][s] + "\" stroke=\"#ffffff\" stroke-width=\"1\"/></g>";
      const std::string share = total > 0 ? format_percent(segment.value / total * 100) : "";
      if (w > text_width(share, 11) + 8) {
        svg += text_element(x + w / 2, y + bar_height / 2 + 4, share,
                            "font-size=\"11\" text-anchor=\"middle\" fill=\"#ffffff\"");
      }
      x += w;
    }
    svg += text_element(x + 6, y + bar_height / 2 + 4, format_total ? format_total(total) : format_duration_ns(total),
                        "font-size=\"11\" fill=\"" + std::string(kAxisColor) + "\"");
  }
  svg += text_element(label_width, bars_bottom + 4, unit_caption,
                      "font-size=\"11\" fill=\"" + std::string(kAxisColor) + "\"");
  svg += legend_svg + "</svg>";
  return svg;
}

std::string render_timeline_svg(const std::vector<TimelineRow>& rows) {
  const double width = 1080, label_width = 110, right = 360, row_height = 40, top = 30;
  double wall_max = 0;
  for (const auto& row : rows) wall_max = std::max({wall_max, row.wall_ns, row.projection_ns});
  const double plot_width = width - label_width - right;
  const double height = top + static_cast<double>(rows.size()) * row_height + 10;
  std::string svg =
      svg_open(width, height, "Stage timeline: stage time, GPU projection and GPU busy time", "chart timeline");
  const struct {
    const char* label;
    const char* color;
  } kKeys[] = {{"stage time (stats: wall; timeline: active)", "#d9dee6"},
               {"GPU projection (stats)", "#9dbbe0"},
               {"GPU busy (stats: kernel sum; timeline: union)", "#1f5fa8"}};
  double key_x = label_width;
  for (const auto& key : kKeys) {
    svg += "<rect x=\"" + num(key_x) + "\" y=\"8\" width=\"11\" height=\"11\" rx=\"2\" fill=\"" + key.color + "\"/>" +
           text_element(key_x + 16, 18, key.label, "font-size=\"11\" fill=\"#1d2330\"");
    key_x += 30 + text_width(key.label, 11);
  }
  auto scale = [&](double ns) { return wall_max > 0 ? ns / wall_max * plot_width : 0; };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    const double y = top + static_cast<double>(r) * row_height;
    svg += "<g class=\"timeline-row\"><title>" + html_escape(row.label + ": " + row.annotation) + "</title>";
    svg += text_element(label_width - 10, y + 17, row.label,
                        "font-size=\"12\" font-weight=\"600\" text-anchor=\"end\" fill=\"#1d2330\"");
    svg += "<rect x=\"" + num(label_width) + "\" y=\"" + num(y + 4) + "\" width=\"" +
           num(std::max(1.0, scale(row.wall_ns))) + "\" height=\"20\" rx=\"3\" fill=\"#d9dee6\"/>";
    svg += "<rect x=\"" + num(label_width) + "\" y=\"" + num(y + 8) + "\" width=\"" +
           num(row.projection_ns > 0 ? std::max(1.0, scale(row.projection_ns)) : 0) +
           "\" height=\"12\" rx=\"2\" fill=\"#9dbbe0\"/>";
    svg += "<rect class=\"busy\" x=\"" + num(label_width) + "\" y=\"" + num(y + 10) + "\" width=\"" +
           num(row.busy_ns > 0 ? std::max(1.5, scale(row.busy_ns)) : 0) + "\" height=\"8\" rx=\"1\" fill=\"#1f5fa8\"/>";
    svg += text_element(width - right + 10, y + 17, row.annotation,
                        "font-size=\"11\" fill=\"" + std::string(kAxisColor) + "\"");
    svg += "</g>";
  }
  svg += "</svg>";
  return svg;
}

}  // namespace llmprof::detail
