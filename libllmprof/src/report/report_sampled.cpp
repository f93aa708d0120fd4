// The sampled-utilisation panel of report.md and report.html (see report_sampled.hpp).
#include "report/report_sampled.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/format.hpp"
#include "llmprof/percent.hpp"
#include "report/report_view.hpp"
#include "report/svg_chart.hpp"

namespace llmprof::detail {
namespace {

bool sampled(const ReportStage& stage) { return stage.sampled_sm_active.mean || stage.sampled_dram_read.mean; }

// "12% (p50 9.0%, p90 31%)"
std::string distribution(const SampledFigure& figure) {
  if (!figure.mean) return std::string(kNotComputed);
  return format_fraction_percent(figure.mean) + " (p50 " + format_fraction_percent(figure.p50) + ", p90 " +
         format_fraction_percent(figure.p90) + ")";
}

std::string dram_cell(const ReportStage& stage) {
  if (!stage.sampled_dram_read.mean || !stage.sampled_dram_write.mean) return std::string(kNotComputed);
  return format_fraction_percent(stage.sampled_dram_read.mean) + " / " +
         format_fraction_percent(stage.sampled_dram_write.mean);
}

std::string ratio_cell(const ReportStage& stage) {
  if (!stage.sampled_to_measured_bytes) return std::string(kNotComputed);
  return format_number(*stage.sampled_to_measured_bytes, 2) + "x";
}

// Why the panel is empty: the first stage's note (they share it when the capture holds no sample).
std::string why_empty(const RunReportModel& model) {
  for (const auto& stage : model.stages)
    if (!stage.sampled_note.empty()) return stage.sampled_note;
  return "report.json holds no note on GPU-metrics samples for any stage (written before they existed, or without "
         "the nsys SQLite export's timeline)";
}

constexpr const char* kSampledBy = "Sampled by nsys from the GPU's own counters while the workload ran at full speed, ";
constexpr const char* kColumns =
    " SM and tensor: mean share of peak activity, p50/p90 over the samples. DRAM: read / write share of peak "
    "bandwidth. Sampled bytes per step = (read + write) x peak x sample period, summed, over the stage's steps; beside "
    "it ncu's measured bytes, which cover only the profiled kernels' share of kernel time and no traffic between "
    "kernels. The verdict uses ncu's measured bytes.";

// Whether the stages were sampled over their ranges' CPU time: a capture without CUDA trace (the sampled preset) has
// no GPU-active windows, and its stages' notes say so (analysis/sampled_utilisation.cpp).
bool over_cpu_time(const RunReportModel& model) {
  return std::any_of(model.stages.begin(), model.stages.end(), [](const ReportStage& stage) {
    return stage.sampled_note.find("the ranges' CPU time") != std::string::npos ||
           stage.sampled_note.find("their CPU time cannot hold their GPU work") != std::string::npos;
  });
}

// One window for the whole panel: the capture either traced CUDA (GPU-active time) or did not (CPU time).
std::string caption(const RunReportModel& model) {
  if (over_cpu_time(model))
    return std::string(kSampledBy) +
           "over the CPU time of each stage's ranges: this capture traced no CUDA work, so no GPU-active time is "
           "known. A stage whose GPU activity mostly came after its ranges ended (asynchronous launches, CUDA graph "
           "replays) is withheld, as its note says." +
           kColumns;
  return std::string(kSampledBy) +
         "over the GPU-active time of each stage's instances (first GPU start to last GPU end)." + kColumns;
}

// The stages listed without figures for a reason other than too few samples (their notes start "withheld: ",
// analysis/sampled_utilisation.cpp), each with its note.
std::vector<std::pair<std::string, std::string>> withheld(const RunReportModel& model) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& stage : model.stages)
    if (stage.sampled_samples && !sampled(stage) && stage.sampled_note.rfind("withheld: ", 0) == 0)
      found.emplace_back(stage_label(stage), stage.sampled_note);
  return found;
}

constexpr std::size_t kMostCharts = 3;

// SM active, DRAM read + write and tensor active over the median step, as polylines on one 0..top% scale.
std::string median_step_svg(const ReportStage& stage) {
  const auto& points = stage.sampled_median_step;
  const double width = 560, height = 150, left = 44, bottom = 22, top_margin = 8;
  double top = 0.1;
  std::int64_t span = 1;
  for (const auto& point : points) {
    for (const auto& value : {point.sm_active, point.tensor_active, point.dram})
      if (value) top = std::max(top, *value);
    span = std::max(span, point.offset_ns);
  }
  top = std::min(1.0, std::ceil(top * 10) / 10);
  const double plot_w = width - left - 8, plot_h = height - bottom - top_margin;
  std::ostringstream svg;
  svg << "<svg class=\"chart\" viewBox=\"0 0 " << width << " " << height << "\" width=\"" << width
      << "\" height=\"" << height << "\" role=\"img\" aria-label=\""
      << html_escape("utilisation over the median " + stage.name + " step") << "\">";
  for (const double tick : {0.0, top / 2, top}) {
    const double y = top_margin + plot_h * (1 - tick / top);
    svg << "<line x1=\"" << left << "\" x2=\"" << width - 8 << "\" y1=\"" << y << "\" y2=\"" << y
        << "\" stroke=\"#ddd\"/><text x=\"" << left - 4 << "\" y=\"" << y + 4
        << "\" font-size=\"10\" text-anchor=\"end\">" << html_escape(format_fraction_percent(tick)) << "</text>";
  }
  svg << "<text x=\"" << width - 8 << "\" y=\"" << height - 6 << "\" font-size=\"10\" text-anchor=\"end\">"
      << html_escape(format_duration_ns(std::optional<std::int64_t>(span))) << "</text><text x=\"" << left << "\" y=\""
      << height - 6 << "\" font-size=\"10\">0</text>";
  const std::pair<const char*, std::optional<double> ReportSampledPoint::*> series[] = {
      {"SM active", &ReportSampledPoint::sm_active},
      {"DRAM read + write", &ReportSampledPoint::dram},
      {"Tensor active", &ReportSampledPoint::tensor_active}};
  for (std::size_t i = 0; i < std::size(series); ++i) {
    svg << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << palette_color(i) << "\" points=\"";
    for (const auto& point : points) {
      const auto& value = point.*(series[i].second);
      if (!value) continue;
      svg << left + plot_w * double(point.offset_ns) / double(span) << ","
          << top_margin + plot_h * (1 - std::min(*value, top) / top) << " ";
    }
    svg << "\"><title>" << html_escape(series[i].first) << "</title></polyline>";
    svg << "<text x=\"" << left + 6 + double(i) * 130 << "\" y=\"" << top_margin + 10 << "\" font-size=\"10\" fill=\""
        << palette_color(i) << "\">" << html_escape(series[i].first) << "</text>";
  }
  svg << "</svg>";
  return svg.str();
}

}  // namespace

void write_sampled_markdown(const RunReportModel& model, std::ostringstream& out) {
  if (model.stages.empty()) return;
  out << "## GPU utilisation (sampled)\n\n";
  if (std::none_of(model.stages.begin(), model.stages.end(), sampled)) {
    const std::string why = why_empty(model);  // never empty
    out << "No sampled utilisation: " << markdown_cell(why) << ".\n\n";
    return;
  }
  out << "| Stage | Samples | SM active | Tensor active | DRAM read / write | MBU (sampled) | DRAM per step (sampled) | "
         "DRAM per step (ncu) | Sampled / ncu |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& stage : model.stages) {
    if (!stage.sampled_samples) continue;
    out << "| " << markdown_cell(stage_label(stage)) << " | " << *stage.sampled_samples << " | "
        << distribution(stage.sampled_sm_active) << " | " << distribution(stage.sampled_tensor_active) << " | "
        << dram_cell(stage) << " | " << format_fraction_percent(stage.sampled_mbu) << " | "
        << format_si(stage.sampled_dram_bytes_per_step, "B") << " | " << format_si(stage.dram_bytes_per_step, "B")
        << " | " << ratio_cell(stage) << " |\n";
  }
  out << "\n" << caption(model) << " " << kNotComputed << " = not computed (withheld with fewer than 20 samples, or "
      << "as said below).\n\n";
  for (const auto& [label, why] : withheld(model)) out << "- " << markdown_cell(label) << ": " << markdown_cell(why) << "\n";
  if (!withheld(model).empty()) out << "\n";
}

// Parallel to write_sampled_markdown, each format with its own markup, so the two read alike (the duplicates tool
// pairs them by shape).
void write_sampled_html(const RunReportModel& model, std::ostringstream& out) {
  if (model.stages.empty()) return;
  out << "<section class=\"card\" id=\"sampled\"><h2>GPU utilisation (sampled)</h2>";
  if (std::none_of(model.stages.begin(), model.stages.end(), sampled)) {
    const std::string why = why_empty(model);  // never empty
    out << "<p>No sampled utilisation: " << html_escape(why) << ".</p></section>\n";
    return;
  }
  out << "<div class=\"table-wrap\"><table><thead><tr><th>Stage</th><th class=\"num\">Samples</th><th "
         "class=\"num\">SM active</th><th class=\"num\">Tensor active</th><th class=\"num\">DRAM read / write</th><th "
         "class=\"num\">MBU (sampled)</th><th class=\"num\">DRAM per step (sampled)</th><th class=\"num\">DRAM per "
         "step (ncu)</th><th class=\"num\">Sampled / ncu</th></tr></thead><tbody>";
  for (const auto& stage : model.stages) {
    if (!stage.sampled_samples) continue;
    out << "<tr><td>" << html_escape(stage_label(stage)) << "</td><td class=\"num\">" << *stage.sampled_samples
        << "</td><td class=\"num\">"
        << html_escape(distribution(stage.sampled_sm_active)) << "</td><td class=\"num\">"
        << html_escape(distribution(stage.sampled_tensor_active))
        << "</td><td class=\"num\">" << html_escape(dram_cell(stage)) << "</td><td class=\"num\">"
        << html_escape(format_fraction_percent(stage.sampled_mbu)) << "</td><td class=\"num\">"
        << html_escape(format_si(stage.sampled_dram_bytes_per_step, "B")) << "</td><td class=\"num\">"
        << html_escape(format_si(stage.dram_bytes_per_step, "B")) << "</td><td class=\"num\">"
        << html_escape(ratio_cell(stage)) << "</td></tr>";
  }
  out << "</tbody></table></div><p class=\"caption\">" << html_escape(caption(model)) << " " << kNotComputed
      << " = not computed (withheld with fewer than 20 samples, or as said below).</p>";
  if (const auto reasons = withheld(model); !reasons.empty()) {
    out << "<ul>";
    for (const auto& [label, why] : reasons) out << "<li>" << html_escape(label) << ": " << html_escape(why) << "</li>";
    out << "</ul>";
  }
  std::size_t charts = 0;
  for (const auto& stage : model.stages) {
    if (stage.sampled_median_step.size() < 3 || charts == kMostCharts) continue;
    ++charts;
    out << "<figure><figcaption>" << html_escape(stage_label(stage))
        << ": utilisation over its median step (the instance whose sampled window is the median), "
        << stage.sampled_median_step.size() << " points</figcaption>" << median_step_svg(stage) << "</figure>";
  }
  out << "</section>\n";
}

}  // namespace llmprof::detail
