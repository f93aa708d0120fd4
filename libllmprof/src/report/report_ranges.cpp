// Bare-run figures, the NVTX stage table and the no-GPU statement, in Markdown and HTML (see report_ranges.hpp).
#include "report/report_ranges.hpp"

#include <algorithm>

#include "core/format.hpp"
#include "core/json_fields.hpp"
#include "report/report_html_page.hpp"
#include "rundir/report_model_json.hpp"

namespace llmprof::detail {
namespace {

const char* const kNoGpuText =
    "No NVIDIA GPU on this machine: the kernel-level stages (kernel selection, ncu metrics, roofline, MFU) need an "
    "NVIDIA GPU and its driver, so they were skipped. What this machine could measure is below: the bare run's own "
    "figures and the NVTX stages on the CPU timeline.";

// Whether the capture was gated is not known here: say "the capture", which is true either way.
std::string range_note(const RunReportModel& model) {
  const bool any_p99 = std::any_of(model.nvtx_ranges.begin(), model.nvtx_ranges.end(),
                                   [](const ReportRangeTiming& range) { return range.p99_ns.has_value(); });
  return std::string(
             "Per instance of each NVTX range on the CPU timeline (nsys nvtx_sum; only ranges inside the capture). ") +
         (std::any_of(model.stages.begin(), model.stages.end(),
                      [](const ReportStage& stage) { return !stage.library.empty(); })
              ? "A library range is one a library opens around its own calls (docs/library-ranges.md): listed, "
                "never the main stage. "
              : "") +
         (any_p99
              ? "p99 from every instance's duration in the SQLite export, where it saw the same instances."
              : "p99 needs every instance's duration, which nsys stats does not print and no SQLite export supplied.");
}

std::string seconds_text(double seconds) { return format_duration_ns(seconds * 1e9); }

// The range, and its library when the stage table marks it as one's (ReportStage::library).
std::string range_label(const RunReportModel& model, const ReportRangeTiming& range) {
  std::string label = range.domain.empty() ? range.name : range.domain + ":" + range.name;
  for (const auto& stage : model.stages)
    if (stage.name == range.name && stage.domain == range.domain && !stage.library.empty())
      return label + " [library range: " + stage.library + "]";
  return label;
}

// (label, value) rows of the bare-run table: the figures that are positive, the run's shape and its device.
std::vector<std::pair<std::string, std::string>> bare_run_rows(const ReportBareRun& run) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (run.tokens_per_s > 0) rows.emplace_back("Decode throughput", format_number(run.tokens_per_s) + " tokens/s");
  if (run.time_per_output_token_s > 0)
    rows.emplace_back("Time per output token", seconds_text(run.time_per_output_token_s));
  if (run.prefill_s > 0) rows.emplace_back("Prefill time", seconds_text(run.prefill_s));
  if (run.decode_s > 0) rows.emplace_back("Decode time", seconds_text(run.decode_s));
  if (run.flop_per_token > 0) rows.emplace_back("Model FLOP per token", format_si(run.flop_per_token, "FLOP"));
  if (run.parameters > 0) rows.emplace_back("Parameters", format_si(static_cast<double>(run.parameters), ""));
  rows.emplace_back("Shape", "batch " + std::to_string(run.batch) + ", " + std::to_string(run.prompt_tokens) +
                                 " prompt tokens, " + std::to_string(run.new_tokens) + " new tokens");
  const std::string device = run.device_name.empty() ? run.device : run.device_name + " (" + run.device + ")";
  if (!device.empty()) rows.emplace_back("Device, dtype", device + (run.dtype.empty() ? "" : ", " + run.dtype));
  return rows;
}

std::string duration_text(const std::optional<double>& nanoseconds) {
  return nanoseconds ? format_duration_ns(*nanoseconds) : std::string(kNotComputed);
}

}  // namespace

const char* no_gpu_statement() { return kNoGpuText; }

void read_bare_run_and_ranges(const boost::json::object& report, RunReportModel& model) {
  if (const auto* bare = report.if_contains("bare_run"); bare != nullptr && !bare->is_null()) {
    if (!bare->is_object()) throw JsonFieldError{"bare_run"};
    ReportBareRun run;
    read_report_json(bare->get_object(), "bare_run.", run);
    model.bare_run = run;
  }
  std::size_t index = 0;
  for (const auto& object : json_objects(report, "nvtx_ranges", "nvtx_ranges")) {
    ReportRangeTiming range;
    read_report_json(object, "nvtx_ranges[" + std::to_string(index++) + "].", range);
    model.nvtx_ranges.push_back(range);
  }
}

void read_nvidia_driver(const boost::json::object& environment, RunReportModel& model) {
  const auto* tools = environment.if_contains("tools");
  if (tools == nullptr || !tools->is_object()) return;
  const auto* driver = tools->get_object().if_contains("nvidia_driver");
  if (driver == nullptr || !driver->is_object()) return;
  const auto* present = driver->get_object().if_contains("present");
  if (present != nullptr && present->is_bool()) model.nvidia_gpu_present = present->get_bool();
}

void write_ranges_markdown(const RunReportModel& model, std::ostringstream& out) {
  if (model.bare_run) {
    out << "## Bare run (stage 1, no profiler)\n\n| Figure | Value |\n|---|--:|\n";
    for (const auto& [label, value] : bare_run_rows(*model.bare_run))
      out << "| " << label << " | " << markdown_cell(value) << " |\n";
    out << "\nThe workload's own measurements (`stage1/metrics.json`).\n\n";
  }
  if (!model.nvtx_ranges.empty()) {
    out << "## NVTX stages (CPU timeline)\n\n| Range | Count | Total | Mean | p50 | p99 | Min | Max "
           "|\n|---|--:|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& range : model.nvtx_ranges) {
      out << "| " << markdown_cell(range_label(model, range)) << " | " << format_count(range.instances) << " | "
          << format_duration_ns(range.total_ns) << " | " << duration_text(range.mean_ns) << " | "
          << duration_text(range.p50_ns) << " | " << duration_text(range.p99_ns) << " | "
          << format_duration_ns(range.min_ns) << " | " << format_duration_ns(range.max_ns) << " |\n";
    }
    out << "\n" << range_note(model) << " " << kNotComputed << " = not computed.\n\n";
  }
  if (!model.stage_warnings.empty()) {
    out << "## Warnings from the profiling stages\n\n";
    for (const auto& [stage, warning] : model.stage_warnings)
      out << "- **" << markdown_cell(stage) << "**: " << markdown_cell(warning) << "\n";
    out << "\n";
  }
}

void write_ranges_html(const RunReportModel& model, std::ostringstream& out) {
  if (model.bare_run) {
    out << "<section class=\"card\" id=\"bare-run\"><h2>Bare run (stage 1, no profiler)</h2><div "
           "class=\"table-wrap\"><table>"
           "<thead><tr><th>Figure</th><th class=\"num\">Value</th></tr></thead><tbody>";
    for (const auto& [label, value] : bare_run_rows(*model.bare_run)) {
      out << "<tr><td>" << html_escape(label) << "</td><td class=\"num\">" << html_escape(value) << "</td></tr>";
    }
    out << "</tbody></table></div><p class=\"lead\">The workload's own measurements "
           "(stage1/metrics.json).</p></section>\n";
  }
  if (!model.nvtx_ranges.empty()) {
    out << "<section class=\"card\" id=\"nvtx-ranges\"><h2>NVTX stages (CPU timeline)</h2><div "
           "class=\"table-wrap\"><table class=\"sortable\">"
           "<thead><tr><th>Range</th><th class=\"num\">Count</th><th class=\"num\">Total</th><th "
           "class=\"num\">Mean</th>"
           "<th class=\"num\">p50</th><th class=\"num\">p99</th><th class=\"num\">Min</th><th "
           "class=\"num\">Max</th></tr></thead><tbody>";
    for (const auto& range : model.nvtx_ranges) {
      out << "<tr><td>" << html_escape(range_label(model, range)) << "</td>"
          << "<td class=\"num\"" << sort_key(as_double(range.instances)) << ">"
          << html_escape(format_count(range.instances)) << "</td>"
          << "<td class=\"num\"" << sort_key(as_double(range.total_ns)) << ">"
          << html_escape(format_duration_ns(range.total_ns)) << "</td>"
          << "<td class=\"num\"" << sort_key(range.mean_ns) << ">" << html_escape(duration_text(range.mean_ns))
          << "</td>"
          << "<td class=\"num\"" << sort_key(range.p50_ns) << ">" << html_escape(duration_text(range.p50_ns)) << "</td>"
          << "<td class=\"num\"" << sort_key(range.p99_ns) << ">" << html_escape(duration_text(range.p99_ns)) << "</td>"
          << "<td class=\"num\"" << sort_key(as_double(range.min_ns)) << ">"
          << html_escape(format_duration_ns(range.min_ns)) << "</td>"
          << "<td class=\"num\"" << sort_key(as_double(range.max_ns)) << ">"
          << html_escape(format_duration_ns(range.max_ns)) << "</td></tr>";
    }
    out << "</tbody></table></div><p class=\"lead\">" << html_escape(range_note(model)) << "</p></section>\n";
  }
  if (!model.stage_warnings.empty()) {
    out << "<section class=\"card\" id=\"stage-warnings\"><h2>Warnings from the profiling stages</h2><ul "
           "class=\"verdicts\">";
    for (const auto& [stage, warning] : model.stage_warnings) {
      out << "<li class=\"verdict warn\"><strong>" << html_escape(stage) << "</strong> " << html_escape(warning)
          << "</li>";
    }
    out << "</ul></section>\n";
  }
}

}  // namespace llmprof::detail
