// MAIN/report.html: one self-contained page (inline CSS, inline SVG, one small inline script for
// sortable tables); nothing is fetched from the network, so it opens the same anywhere.
#include <algorithm>
#include <sstream>

#include "core/format.hpp"
#include "core/text.hpp"
#include "llmprof/report.hpp"
#include "llmprof/shell_quote.hpp"
#include "report/report_sampled.hpp"
#include "report/report_capture_scope.hpp"
#include "report/report_html_page.hpp"
#include "report/report_ranges.hpp"
#include "report/report_repeats.hpp"
#include "report/report_stage_bytes.hpp"
#include "report/report_timeline.hpp"
#include "report/report_verdict.hpp"
#include "report/report_view.hpp"
#include "report/svg_chart.hpp"

namespace llmprof {
namespace {

using detail::format_duration_ns;
using detail::format_fraction_percent;
using detail::format_percent;
using detail::format_si;
using detail::html_escape;

constexpr std::size_t kKernelsInBar = 8;
constexpr std::size_t kKernelTableRows = 50;

void write_header(const RunReportModel& model, std::ostringstream& out) {
  out << "<header class=\"top\"><div class=\"brand\">deep-profile report</div><h1>" << html_escape(model.run_id)
      << "</h1>"
      << "<dl class=\"meta\">"
      << "<div><dt>Workload</dt><dd><code>"
      << html_escape(model.workload_argv.empty() ? "not recorded" : join_shell_command(model.workload_argv))
      << "</code></dd></div>"
      << "<div><dt>Device</dt><dd>" << html_escape(detail::device_line(model)) << "</dd></div>"
      << "<div><dt>Peaks at profiled clocks</dt><dd>" << html_escape(detail::peaks_line(model.device)) << "</dd></div>"
      << "<div><dt>Tools</dt><dd>" << html_escape(detail::tools_line(model)) << "</dd></div>"
      << "<div><dt>Date</dt><dd>" << html_escape(model.created_utc.empty() ? "not recorded" : model.created_utc)
      << (model.run_status.empty() ? "" : " · run " + html_escape(model.run_status)) << "</dd></div>";
  if (!model.capture_scope.empty())
    out << "<div><dt>Capture</dt><dd>" << html_escape(model.capture_scope) << "</dd></div>";
  out << "</dl></header>\n";
}

void write_timeline(const RunReportModel& model, std::ostringstream& out) {
  // Without GPU work in any stage (a CPU-only machine) the chart would only repeat the NVTX table's wall
  // times beside "GPU — · busy 0 ns" on every row.
  const bool any_gpu_work = std::any_of(model.stages.begin(), model.stages.end(), [](const ReportStage& stage) {
    return stage.gpu_projection_ns.value_or(0) > 0 || stage.kernel_time_ns.value_or(0) > 0;
  });
  if (!any_gpu_work) return;
  std::vector<detail::TimelineRow> rows;
  bool any_timeline = false;
  for (const auto& stage : model.stages) {
    detail::TimelineRow row;
    row.label = stage.name;
    // Where the timeline measured the stage, draw its figures, the ones the verdict uses: the summaries'
    // projection and kernel sum cannot see graph executions and ignore the time the stage took.
    if (const auto* timed = detail::timeline_stage_of(model, stage); timed != nullptr && timed->active_ns > 0) {
      any_timeline = true;
      row.wall_ns = static_cast<double>(timed->active_ns);
      row.busy_ns = static_cast<double>(timed->gpu_busy_ns);
      row.annotation = "timeline: active " + format_duration_ns(row.wall_ns) + " · GPU busy " +
                       format_duration_ns(row.busy_ns) + " (" +
                       (timed->gpu_busy_fraction ? format_fraction_percent(timed->gpu_busy_fraction) : "partial") + ")";
      rows.push_back(row);
      continue;
    }
    row.wall_ns = static_cast<double>(stage.wall_ns.value_or(0));
    row.projection_ns = static_cast<double>(stage.gpu_projection_ns.value_or(0));
    row.busy_ns = static_cast<double>(stage.kernel_time_ns.value_or(0));
    row.annotation = "stats: wall " + format_duration_ns(stage.wall_ns) + " · GPU " +
                     format_duration_ns(stage.gpu_projection_ns) + " · busy " +
                     format_duration_ns(stage.kernel_time_ns) + " (" +
                     format_fraction_percent(stage.gpu_busy_fraction) + ")";
    rows.push_back(row);
  }
  out << "<section class=\"card\" id=\"timeline\"><h2>Stage timeline</h2><p class=\"lead\">Each stage's time, the "
         "time the GPU had its work in flight (projection, nsys stats rows only) and its GPU busy time. A short dark "
         "bar "
         "inside a long grey one is a GPU waiting on the host. Rows marked <em>stats</em> use the nsys stats tables "
         "(wall time, summed kernel time)"
      << (any_timeline ? "; rows marked <em>timeline</em> use the nsys SQLite timeline (the time the stage was active, "
                         "the union of the GPU work it launched, graph executions included), as the verdicts do"
                       : "")
      << ".</p>" << detail::render_timeline_svg(rows) << "</section>\n";
}

void write_time_breakdown(const RunReportModel& model, std::ostringstream& out) {
  if (model.kernels.empty() && model.stages.empty()) return;
  std::vector<detail::StackedBar> bars;
  double kernel_total = 0;
  for (const auto& kernel : model.kernels) kernel_total += static_cast<double>(kernel.total_time_ns.value_or(0));
  if (!model.stages.empty()) {
    detail::StackedBar by_stage{"by stage", {}};
    double staged = 0;
    for (const auto* stage : detail::leaf_stages(model)) {
      const double value = static_cast<double>(stage->kernel_time_ns.value_or(0));
      staged += value;
      by_stage.segments.push_back(
          {stage->name, value, stage->name + ": " + format_duration_ns(value) + " of kernel time", ""});
    }
    if (kernel_total > staged * 1.001) {
      by_stage.segments.push_back({"outside NVTX stages", kernel_total - staged,
                                   "kernels outside every stage: " + format_duration_ns(kernel_total - staged),
                                   "#bab0ac"});
    }
    bars.push_back(std::move(by_stage));
  }
  if (!model.kernels.empty()) {
    detail::StackedBar by_kernel{"by kernel", {}};
    double shown = 0;
    for (std::size_t i = 0; i < std::min(kKernelsInBar, model.kernels.size()); ++i) {
      const auto& kernel = model.kernels[i];
      const double value = static_cast<double>(kernel.total_time_ns.value_or(0));
      shown += value;
      by_kernel.segments.push_back({"#" + std::to_string(i + 1) + " " + short_kernel_name(kernel.name, 28), value,
                                    kernel.name + ": " + format_duration_ns(value), detail::palette_color(i + 3)});
    }
    if (kernel_total > shown) {
      by_kernel.segments.push_back({"other kernels", kernel_total - shown,
                                    "all other kernels: " + format_duration_ns(kernel_total - shown), "#d5d9e0"});
    }
    bars.push_back(std::move(by_kernel));
  }
  out << "<section class=\"card\" id=\"time-breakdown\"><h2>Where the GPU time goes</h2><p class=\"lead\">Kernel time "
         "split by stage and by kernel (whole run).</p>"
      << detail::render_stacked_bars_svg(bars, "kernel time") << "</section>\n";
}

std::string point_tooltip(std::size_t rank, const ReportKernel& kernel) {
  return "#" + std::to_string(rank) + " " + kernel.name + "\n" +
         detail::format_number(kernel.arithmetic_intensity.value_or(0)) + " FLOP/byte, " +
         format_si(kernel.achieved_flop_per_s, "FLOP/s") + ", " + format_percent(kernel.pct_peak_compute) +
         " of peak compute, " + format_percent(kernel.pct_peak_dram) + " of peak DRAM, " +
         format_fraction_percent(kernel.share_of_total) +
         " of GPU time, bound: " + kernel.bound.value_or("not computed");
}

void write_rooflines(const RunReportModel& model, std::ostringstream& out) {
  out << "<section class=\"card\" id=\"roofline\"><h2>Roofline</h2>";
  const auto groups = detail::roofline_groups(model);
  if (groups.empty()) {
    out << "<p class=\"lead\">No kernel has FLOP and DRAM figures from ncu, so there is no roofline (the ncu step did "
           "not run or profiled nothing).</p></section>\n";
    return;
  }
  out << "<p class=\"lead\">Each profiled kernel at its arithmetic intensity and achieved FLOP/s; marker area follows "
         "its "
         "share of GPU time. Roofs are the device peaks at the clocks ncu profiled at.</p>";
  std::size_t plotted = 0;
  for (const auto& group : groups) {
    detail::RooflineChart chart;
    chart.title = "Roofline: " + (group.precision.empty() ? std::string("precision not identified") : group.precision) +
                  " (" + std::to_string(group.kernel_indices.size()) + " kernels)";
    for (const auto& [precision, peak] : model.device.peak_flop_per_s) {
      chart.compute_roofs.push_back({precision + " " + format_si(peak, "FLOP/s"), peak, precision == group.precision});
    }
    chart.dram_bytes_per_s = model.device.peak_dram_bytes_per_s;
    for (std::size_t index : group.kernel_indices) {
      const auto& kernel = model.kernels[index];
      chart.points.push_back({*kernel.arithmetic_intensity, *kernel.achieved_flop_per_s,
                              kernel.share_of_total.value_or(0),
                              "#" + std::to_string(index + 1) + " " + short_kernel_name(kernel.name, 26),
                              point_tooltip(index + 1, kernel)});
    }
    plotted += group.kernel_indices.size();
    out << "<figure>" << detail::render_roofline_svg(chart) << "</figure>";
  }
  if (plotted < model.kernels.size()) {
    out << "<p class=\"note\">" << model.kernels.size() - plotted
        << " kernels are not plotted: they have no ncu figures or do no floating-point work (copies, index "
           "selects).</p>";
  }
  out << "</section>\n";
}

}  // namespace

namespace {

// The "Across ranks" section: its Markdown has a heading, one table and bullet lines, with **bold**.
std::string inline_markdown(const std::string& text) {
  std::string html, escaped = html_escape(text);
  bool bold = false;
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped.compare(i, 2, "**") == 0) {
      html += bold ? "</strong>" : "<strong>";
      bold = !bold;
      ++i;
    } else {
      html += escaped[i];
    }
  }
  return html + (bold ? "</strong>" : "");
}

// ranks.md in HTML: its tables (the per-rank figures, then the sampled ones when any rank sampled), a paragraph
// before each further table, and the list of findings.
void write_cross_rank(const RunReportModel& model, std::ostream& out) {
  if (model.cross_rank_markdown.empty()) return;
  std::istringstream lines(model.cross_rank_markdown);
  out << "<section id=\"ranks\"><h2>Across ranks</h2>\n";
  enum class Block { none, table, list } open = Block::none;
  const auto close = [&] {
    if (open == Block::table) out << "</table>\n";
    if (open == Block::list) out << "</ul>\n";
    open = Block::none;
  };
  bool header = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("|", 0) == 0) {
      if (line.find("---") != std::string::npos) continue;
      if (open != Block::table) {
        close();
        out << "<table class=\"sortable\">";
        open = Block::table;
        header = true;
      }
      std::istringstream cells(line.substr(1));
      out << "<tr>";
      for (std::string cell; std::getline(cells, cell, '|');) {
        const std::string trimmed(detail::trim(cell));
        out << (header ? "<th>" : "<td>") << inline_markdown(trimmed) << (header ? "</th>" : "</td>");
      }
      out << "</tr>\n";
      header = false;
    } else if (line.rfind("- ", 0) == 0) {
      if (open != Block::list) {
        close();
        out << "<ul>";
        open = Block::list;
      }
      out << "<li>" << inline_markdown(line.substr(2)) << "</li>\n";
    } else if (detail::trim(line).empty()) {
      if (open == Block::table) close();
    } else if (line.rfind("## ", 0) != 0) {
      close();
      out << "<p>" << inline_markdown(line) << "</p>\n";
    }
  }
  close();
  out << "</section>\n";
}

}  // namespace

std::string render_html(const RunReportModel& model) {
  std::ostringstream header;
  write_header(model, header);
  std::ostringstream out;
  detail::write_verdict_html(model, out);
  detail::write_ranges_html(model, out);
  write_timeline(model, out);
  detail::write_timeline_html(model, out);
  write_time_breakdown(model, out);
  write_rooflines(model, out);
  detail::write_stage_table_html(model, out);
  detail::write_sampled_html(model, out);
  detail::write_kernel_table_html(model, kKernelTableRows, out);
  write_cross_rank(model, out);
  detail::write_repeats_html(model, out);
  detail::write_problems_html(model, out);
  detail::write_reproduce_html(model, out);
  return detail::html_document({"deep-profile report: " + model.run_id, header.str(), out.str(),
                                "Rendered by deep-profile from analysis/report.json, run.json and env.json of this run "
                                "directory. " +
                                    std::string(detail::kNotComputed) + " = not computed."});
}

}  // namespace llmprof
