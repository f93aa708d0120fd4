// Stylesheet, sortable-table script and table sections of the HTML pages (see report_html_page.hpp).
#include "report/report_html_page.hpp"

#include <algorithm>
#include <cstdio>

#include "core/format.hpp"
#include "core/text.hpp"
#include "report/report_capture_scope.hpp"
#include "report/report_stage_bytes.hpp"
#include "report/report_step_unit.hpp"
#include "report/report_view.hpp"

namespace llmprof::detail {

const char* report_css() {
  // System fonts only: a self-contained report must not fetch a web font.
  return R"CSS(
:root{--ink:#1d2330;--muted:#5b6472;--line:#e3e7ed;--bg:#f3f5f8;--accent:#1f5fa8;--warn:#b45309;--warnbg:#fff7ea}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
header.top{background:linear-gradient(135deg,#17233b,#24406e);color:#fff;padding:22px 36px 18px}
header.top .brand{font-size:12px;letter-spacing:.12em;text-transform:uppercase;opacity:.75}
header.top h1{margin:2px 0 12px;font-size:24px;font-weight:650}
dl.meta{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:6px 28px;margin:0}
dl.meta div{min-width:0}
dl.meta dt{font-size:11px;text-transform:uppercase;letter-spacing:.06em;opacity:.7}
dl.meta dd{margin:0;overflow-wrap:anywhere}
dl.meta code{color:#dbe7ff;background:rgba(255,255,255,.08);padding:1px 5px;border-radius:4px}
main{max-width:1180px;margin:0 auto;padding:22px 24px 8px}
section.card{background:#fff;border:1px solid var(--line);border-radius:10px;box-shadow:0 1px 2px rgba(16,24,40,.05);padding:18px 22px;margin:0 0 18px}
section.card h2{margin:0 0 8px;font-size:17px}
p.lead{margin:0 0 12px;color:var(--muted)}
p.note{color:var(--muted);font-size:13px}
.tiles{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:12px}
.tile{flex:0 0 190px;border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:8px;padding:10px 14px;background:#fbfcfe}
.tile.warn{border-left-color:var(--warn);background:var(--warnbg)}
.tile-stage{font-weight:650}
.tile-value{font-size:26px;font-weight:700;line-height:1.2}
.tile-caption{font-size:12px;color:var(--muted)}
.tile-sub{font-size:12px;color:var(--muted);margin-top:2px}
p.headline{margin:2px 0 12px;font-size:17px;line-height:1.45;font-weight:600;color:var(--ink)}
table.levers{margin:0 0 12px}
table.levers caption{caption-side:top;text-align:left;color:var(--muted);font-size:12px;padding:0 0 4px}
table.levers tr.withheld td{color:var(--muted)}
table.folded caption{caption-side:bottom;text-align:left;color:var(--muted);font-size:12px;padding-top:4px}
.folded{margin-top:4px}
ul.verdicts{list-style:none;margin:0;padding:0}
li.verdict{padding:8px 12px;margin:6px 0;border-radius:6px;background:#eef4fb;border-left:4px solid var(--accent)}
li.verdict.warn{background:var(--warnbg);border-left-color:var(--warn)}
figure{margin:6px 0 16px;overflow-x:auto}
svg.chart{display:block;width:100%;height:auto}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:6px 9px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f6f8fb;font-weight:600;white-space:nowrap;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:hover{background:#eaf0f8}
table.sortable th[aria-sort=ascending]::after{content:" \25B2";font-size:10px}
table.sortable th[aria-sort=descending]::after{content:" \25BC";font-size:10px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:nth-child(even){background:#fafbfd}
td.kernel{min-width:250px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;max-width:430px;overflow-wrap:anywhere}
.share{display:inline-block;height:8px;background:var(--accent);border-radius:2px;vertical-align:middle;margin-right:6px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;background:#eceff3}
.badge.compute{background:#fde2e1;color:#8a1c17}.badge.memory{background:#dbe8f8;color:#173f73}
.badge.latency{background:#fdf0d5;color:#7a4a06}
.badge.new{background:#dcf3e3;color:#14532d}.badge.gone{background:#eceff3;color:#374151}
.badge.slower{background:#fde2e1;color:#8a1c17}.badge.faster{background:#dcf3e3;color:#14532d}
.delta-bad{color:#b42318;font-weight:600}.delta-good{color:#177245;font-weight:600}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#0f1726;color:#e6edf7;padding:12px 14px;border-radius:8px;overflow-x:auto;font-size:12px;line-height:1.45}
details summary{cursor:pointer;color:var(--accent)}
footer{max-width:1180px;margin:0 auto;padding:4px 24px 28px;color:var(--muted);font-size:12px}
)CSS";
}

const char* sortable_table_script() {
  return R"JS(
document.querySelectorAll("table.sortable").forEach(function(table){
  table.querySelectorAll("th").forEach(function(th, column){
    th.addEventListener("click", function(){
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function(other){ other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function(a, b){
        var x = a.cells[column], y = b.cells[column];
        var kx = x.getAttribute("data-sort"), ky = y.getAttribute("data-sort");
        var result = (kx !== null && ky !== null) ? (parseFloat(kx || "-1e308") - parseFloat(ky || "-1e308"))
                                                  : x.textContent.localeCompare(y.textContent);
        return ascending ? result : -result;
      });
      rows.forEach(function(row){ body.appendChild(row); });
    });
  });
});
)JS";
}

std::string html_document(const HtmlPageParts& parts) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
         html_escape(parts.title) + "</title><style>" + report_css() + "</style></head>\n<body>\n" + parts.header_html +
         "<main>\n" + parts.body_html + "</main>\n<footer>" + parts.footer_html + "</footer>\n<script>" +
         sortable_table_script() + "</script>\n</body></html>\n";
}

std::string html_page(const std::string& title, const std::string& subtitle, const std::string& body) {
  return html_document({title,
                        "<header class=\"top\"><div class=\"brand\">deep-profile</div><h1>" + html_escape(title) +
                            "</h1><div>" + html_escape(subtitle) + "</div></header>\n",
                        body, std::string(kNotComputed) + " = not computed."});
}

std::string sort_key(const std::optional<double>& value) {
  if (!value) return " data-sort=\"\"";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", *value);
  return std::string(" data-sort=\"") + buffer + "\"";
}

namespace {
std::string num_cell(const std::optional<double>& key, const std::string& text) {
  return "<td class=\"num\"" + sort_key(key) + ">" + html_escape(text) + "</td>";
}

// A titled list of `items` (the analysis' warnings, the inputs that could not be read); nothing when there are none.
void write_titled_list_html(const char* title, const std::vector<std::string>& items, std::ostringstream& out) {
  if (items.empty()) return;
  out << "<h3>" << title << "</h3><ul>";
  for (const auto& item : items) out << "<li>" << html_escape(item) << "</li>";
  out << "</ul>";
}
}  // namespace

// Parallel to report_markdown.cpp's write_stage_table, each format with its own markup, so the two read alike (the
// duplicates tool pairs them by shape).
void write_stage_table_html(const RunReportModel& model, std::ostringstream& out) {
  out << "<section class=\"card\" id=\"stages\"><h2>Stages</h2>";
  if (model.stages.empty()) {
    out << "<p class=\"lead\">No NVTX stages in report.json.</p></section>\n";
    return;
  }
  out << "<div class=\"table-wrap\"><table class=\"sortable\"><thead><tr><th>Stage</th><th class=\"num\">Wall</th>"
         "<th class=\"num\">GPU projection</th><th class=\"num\">Kernel busy</th><th class=\"num\">GPU busy</th>"
         "<th class=\"num\">Kernels</th><th class=\"num\">Achieved FLOP/s</th><th class=\"num\">MFU (profiled)</th>"
         "<th class=\"num\">MFU (workload)</th><th class=\"num\">Steps</th><th class=\"num\">DRAM per step</th><th "
         "class=\"num\">DRAM "
         "bandwidth</th><th class=\"num\">MBU (measured)</th><th class=\"num\">MBU (model)</th><th class=\"num\" "
         "title=\"share of the stage's kernel time whose DRAM bytes ncu measured\">Bytes measured</th></tr></thead>"
         "<tbody>";
  for (const auto& stage : model.stages) {
    out << "<tr><td>" << html_escape(stage_label(stage)) << "</td>"
        << num_cell(as_double(stage.wall_ns), format_duration_ns(stage.wall_ns))
        << num_cell(as_double(stage.gpu_projection_ns), format_duration_ns(stage.gpu_projection_ns))
        << num_cell(as_double(stage.kernel_time_ns), format_duration_ns(stage.kernel_time_ns))
        << num_cell(stage.gpu_busy_fraction, stage_busy_cell(model, stage))
        << num_cell(as_double(stage.kernel_instances), stage_kernels_cell(model, stage))
        << num_cell(stage.achieved_flop_per_s, format_si(stage.achieved_flop_per_s, "FLOP/s"))
        << num_cell(stage.mfu, format_fraction_percent(stage.mfu))
        << num_cell(stage.mfu_workload, format_fraction_percent(stage.mfu_workload))
        << num_cell(stage.steps, steps_cell(stage)) << num_cell(stage.dram_bytes_per_step, dram_per_step_cell(stage))
        << num_cell(stage.dram_bytes_per_s, dram_bandwidth_cell(stage)) << num_cell(stage.mbu, mbu_cell(stage))
        << num_cell(stage.mbu_workload, mbu_model_cell(stage))
        << num_cell(stage.dram_bytes ? std::optional<double>(stage.dram_coverage) : std::nullopt,
                    bytes_coverage_cell(stage))
        << "</tr>";
  }
  out << "</tbody></table></div><p class=\"note\">" << html_escape(stages_caption(model)) << "</p><p class=\"note\">"
      << html_escape(dram_caption(model)) << " " << html_escape(steps_caption(model)) << "</p></section>\n";
}

void write_kernel_table_html(const RunReportModel& model, std::size_t max_rows, std::ostringstream& out) {
  out << "<section class=\"card\" id=\"kernels\"><h2>Top kernels</h2>";
  if (const std::string scope = kernel_table_scope(model); !scope.empty())
    out << "<p class=\"lead\">" << html_escape(scope) << "</p>";
  if (model.kernels.empty()) {
    out << "<p class=\"lead\">No kernels in report.json.</p></section>\n";
    return;
  }
  if (const auto& top = model.top_kernel_selection) {
    out << "<p class=\"lead\">" << html_escape(describe_kernel_selection(*top, model.top_kernel_selection_notes)) << "</p>";
  }
  double max_share = 0;
  for (const auto& kernel : model.kernels) max_share = std::max(max_share, kernel.share_of_total.value_or(0));
  out << "<div class=\"table-wrap\"><table class=\"sortable\" id=\"kernel-table\"><thead><tr><th class=\"num\">#</th>"
         "<th>Kernel</th><th>Stages</th><th class=\"num\">"
      << (kernel_table_misses_graph_kernels(model) ? "Share of listed kernel time" : "Share")
      << "</th><th class=\"num\">Total</th><th class=\"num\">Instances</th>"
         "<th class=\"num\">Avg</th><th class=\"num\" title=\"percent of peak compute\">% FLOP peak</th><th "
         "class=\"num\" title=\"percent of peak DRAM bandwidth\">% DRAM peak</th>"
         "<th class=\"num\">FLOP/byte</th><th>Bound</th></tr></thead><tbody>";
  const std::size_t rows = std::min(max_rows, model.kernels.size());
  for (std::size_t i = 0; i < rows; ++i) {
    const auto& kernel = model.kernels[i];
    const std::string stages = join(kernel.stages, ", ");
    const double bar = max_share > 0 ? kernel.share_of_total.value_or(0) / max_share * 60 : 0;
    char bar_width[16];
    std::snprintf(bar_width, sizeof bar_width, "%.0f", bar);
    out << "<tr><td class=\"num\" data-sort=\"" << i + 1 << "\">" << i + 1 << "</td><td class=\"kernel\" title=\""
        << html_escape(kernel.name) << "\">" << html_escape(kernel_display_name(kernel.name, 80)) << "</td><td>"
        << html_escape(stages) << "</td><td class=\"num\"" << sort_key(kernel.share_of_total)
        << "><span class=\"share\" style=\"width:" << bar_width << "px\"></span>"
        << format_fraction_percent(kernel.share_of_total) << "</td>"
        << num_cell(as_double(kernel.total_time_ns), format_duration_ns(kernel.total_time_ns))
        << num_cell(as_double(kernel.instances), format_count(kernel.instances))
        << num_cell(kernel.avg_time_ns, kernel.avg_time_ns ? format_duration_ns(*kernel.avg_time_ns) : kNotComputed)
        << num_cell(kernel.pct_peak_compute, format_percent(kernel.pct_peak_compute))
        << num_cell(kernel.pct_peak_dram, format_percent(kernel.pct_peak_dram))
        << num_cell(kernel.arithmetic_intensity,
                    kernel.arithmetic_intensity ? format_number(*kernel.arithmetic_intensity) : kNotComputed)
        << "<td>";
    if (kernel.bound)
      out << "<span class=\"badge " << html_escape(*kernel.bound) << "\">" << html_escape(*kernel.bound) << "</span>";
    else
      out << kNotComputed;
    out << "</td></tr>";
  }
  out << "</tbody></table></div>";
  if (model.kernels.size() > rows) {
    out << "<p class=\"note\">" << model.kernels.size() - rows << " more kernels in analysis/kernels.csv.</p>";
  }
  out << "</section>\n";
}

void write_problems_html(const RunReportModel& model, std::ostringstream& out) {
  out << "<section class=\"card\" id=\"problems\"><h2>Skipped or failed steps</h2>";
  if (model.stage_problems.empty()) {
    out << "<p class=\"lead\">"
        << (model.run_status.empty() ? "Unknown: run.json is absent." : "None: every recorded step completed.")
        << "</p>";
  } else {
    out << "<table><thead><tr><th>Step</th><th>Status</th><th>Reason</th></tr></thead><tbody>";
    for (const auto& problem : model.stage_problems) {
      out << "<tr><td>" << html_escape(problem.stage) << "</td><td><span class=\"badge\">"
          << html_escape(problem.status) << "</span></td><td>"
          << html_escape(problem.reason.empty() ? "no reason recorded" : problem.reason) << "</td></tr>";
    }
    out << "</tbody></table>";
  }
  write_titled_list_html("Analysis warnings", model.warnings, out);
  write_titled_list_html("Missing inputs", model.notes, out);
  out << "</section>\n";
}

void write_reproduce_html(const RunReportModel& model, std::ostringstream& out) {
  out << "<section class=\"card\" id=\"reproduce\"><h2>How to reproduce</h2>";
  if (model.reproduce.empty()) out << "<p class=\"lead\">No commands were recorded in run.json.</p>";
  for (const auto& step : model.reproduce) {
    out << "<p><strong>" << html_escape(step.stage) << "</strong> <span class=\"note\">(from "
        << html_escape(step.source) << ")</span></p><pre><code>" << html_escape(step.command) << "</code></pre>";
  }
  if (!model.config.empty()) {
    out << "<details><summary>Resolved configuration (config.toml, " << model.config.size()
        << " keys)</summary><table><thead><tr><th>Key</th><th>Value</th></tr></thead><tbody>";
    for (const auto& [key, value] : model.config) {
      out << "<tr><td><code>" << html_escape(key) << "</code></td><td><code>" << html_escape(value)
          << "</code></td></tr>";
    }
    out << "</tbody></table></details>";
  }
  out << "</section>\n";
}

}  // namespace llmprof::detail
