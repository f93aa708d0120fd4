// MAIN/report.md: GitHub-flavoured Markdown a stakeholder reads in a minute.
#include <sstream>

#include "core/format.hpp"
#include "llmprof/report.hpp"
#include "llmprof/shell_quote.hpp"
#include "report/report_capture_scope.hpp"
#include "report/report_ranges.hpp"
#include "report/report_repeats.hpp"
#include "report/report_sampled.hpp"
#include "report/report_stage_bytes.hpp"
#include "report/report_step_unit.hpp"
#include "report/report_timeline.hpp"
#include "report/report_verdict.hpp"
#include "report/report_view.hpp"

namespace llmprof {
namespace {

using detail::format_count;
using detail::format_duration_ns;
using detail::format_fraction_percent;
using detail::format_percent;
using detail::format_si;
using detail::markdown_cell;
using detail::markdown_code;

constexpr std::size_t kTopKernelRows = 15;

void write_headline(const RunReportModel& model, std::ostringstream& out) {
  out << "# deep-profile report: " << markdown_cell(model.run_id) << "\n\n";
  detail::write_headline_markdown(model, out);
  out << "| | |\n|---|---|\n";
  out << "| **Workload** | "
      << (model.workload_argv.empty() ? "not recorded" : markdown_code(join_shell_command(model.workload_argv)))
      << " |\n";
  out << "| **Device** | " << markdown_cell(detail::device_line(model)) << " |\n";
  out << "| **Peaks (profiled clocks)** | " << markdown_cell(detail::peaks_line(model.device)) << " |\n";
  out << "| **Tools** | " << markdown_cell(detail::tools_line(model)) << " |\n";
  out << "| **Date** | " << markdown_cell(model.created_utc.empty() ? "not recorded" : model.created_utc) << " |\n";
  if (!model.run_status.empty()) out << "| **Run status** | " << markdown_cell(model.run_status) << " |\n";
  if (!model.capture_scope.empty()) out << "| **Capture** | " << markdown_cell(model.capture_scope) << " |\n";
  detail::write_verdict_markdown(model, out);
}

void write_stage_table(const RunReportModel& model, std::ostringstream& out) {
  out << "## Stages\n\n";
  if (model.stages.empty()) {
    out << "No NVTX stages in report.json (no nsys tables were analysed).\n\n";
    return;
  }
  out << "| Stage | Wall | GPU projection | Kernel busy | GPU busy | Kernels | Achieved FLOP/s | MFU (profiled) | MFU "
         "(workload) | Steps | DRAM per step | DRAM bandwidth | MBU (measured) | MBU (model) | Bytes measured |\n";
  out << "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& stage : model.stages) {
    out << "| " << markdown_cell(detail::stage_label(stage)) << " | " << format_duration_ns(stage.wall_ns) << " | "
        << format_duration_ns(stage.gpu_projection_ns) << " | " << format_duration_ns(stage.kernel_time_ns) << " | "
        << detail::stage_busy_cell(model, stage) << " | " << detail::stage_kernels_cell(model, stage) << " | "
        << format_si(stage.achieved_flop_per_s, "FLOP/s") << " | " << format_fraction_percent(stage.mfu) << " | "
        << format_fraction_percent(stage.mfu_workload) << " | " << markdown_cell(detail::steps_cell(stage)) << " | "
        << detail::dram_per_step_cell(stage) << " | " << detail::dram_bandwidth_cell(stage) << " | "
        << detail::mbu_cell(stage) << " | " << detail::mbu_model_cell(stage) << " | "
        << detail::bytes_coverage_cell(stage) << " |\n";
  }
  out << "\n"
      << markdown_cell(detail::stages_caption(model))
      << " MFU (profiled) uses the FLOP that ncu "
         "counted; MFU (workload) uses the model's own FLOP per token and tokens/s. "
      << markdown_cell(detail::dram_caption(model)) << " " << markdown_cell(detail::steps_caption(model)) << " "
      << detail::kNotComputed << " = not computed.\n\n";
}

void write_kernel_table(const RunReportModel& model, std::ostringstream& out) {
  out << "## Top kernels\n\n";
  const std::string scope = detail::kernel_table_scope(model);
  if (!scope.empty()) out << markdown_cell(scope) << "\n\n";
  if (model.kernels.empty()) {
    out << "No kernels in report.json.\n\n";
    return;
  }
  // A graph-traced capture lists only the kernels launched outside CUDA graphs: shares are of those.
  out << "| # | Kernel | "
      << (detail::kernel_table_misses_graph_kernels(model) ? "Share of listed kernel time" : "Share of GPU time")
      << " | Total time | Instances | Avg | % peak compute | % peak DRAM | FLOP/byte | Bound |\n";
  out << "|--:|---|--:|--:|--:|--:|--:|--:|--:|---|\n";
  const std::size_t rows = std::min(kTopKernelRows, model.kernels.size());
  for (std::size_t i = 0; i < rows; ++i) {
    const auto& kernel = model.kernels[i];
    out << "| " << i + 1 << " | " << markdown_code(detail::kernel_display_name(kernel.name, 60)) << " | "
        << format_fraction_percent(kernel.share_of_total) << " | " << format_duration_ns(kernel.total_time_ns) << " | "
        << format_count(kernel.instances) << " | "
        << (kernel.avg_time_ns ? format_duration_ns(*kernel.avg_time_ns) : detail::kNotComputed) << " | "
        << format_percent(kernel.pct_peak_compute) << " | " << format_percent(kernel.pct_peak_dram) << " | "
        << (kernel.arithmetic_intensity ? detail::format_number(*kernel.arithmetic_intensity) : detail::kNotComputed)
        << " | " << markdown_cell(kernel.bound.value_or(detail::kNotComputed)) << " |\n";
  }
  if (model.kernels.size() > rows) {
    const std::size_t more = model.kernels.size() - rows;
    out << "\n" << more << (more == 1 ? " more kernel" : " more kernels") << " in `analysis/kernels.csv`.\n";
  }
  out << "\n<details><summary>Full kernel names</summary>\n\n";
  for (std::size_t i = 0; i < rows; ++i) out << i + 1 << ". " << markdown_code(model.kernels[i].name) << "\n";
  out << "\n</details>\n\n";
  if (const auto& top = model.top_kernel_selection) {
    out << markdown_cell(describe_kernel_selection(*top, model.top_kernel_selection_notes)) << "\n\n";
  }
}

void write_problems(const RunReportModel& model, std::ostringstream& out) {
  out << "## Skipped or failed steps\n\n";
  if (model.stage_problems.empty() && model.warnings.empty()) {
    out << (model.run_status.empty() ? "Unknown: run.json is absent.\n\n" : "None: every recorded step completed.\n\n");
    return;
  }
  if (!model.stage_problems.empty()) {
    out << "| Step | Status | Reason |\n|---|---|---|\n";
    for (const auto& problem : model.stage_problems) {
      out << "| " << markdown_cell(problem.stage) << " | " << markdown_cell(problem.status) << " | "
          << markdown_cell(problem.reason.empty() ? "no reason recorded" : problem.reason) << " |\n";
    }
    out << "\n";
  }
  if (!model.warnings.empty()) {
    out << "Analysis warnings:\n\n";
    for (const auto& warning : model.warnings) out << "- " << markdown_cell(warning) << "\n";
    out << "\n";
  }
}

void write_reproduce(const RunReportModel& model, std::ostringstream& out) {
  out << "## How to reproduce\n\n";
  if (model.reproduce.empty()) {
    out << "No commands were recorded in run.json.\n\n";
  } else {
    out << "The exact command of each step, as recorded:\n\n";
    for (const auto& step : model.reproduce) {
      out << "**" << markdown_cell(step.stage) << "** (from `" << step.source << "`):\n\n```sh\n"
          << step.command << "\n```\n\n";
    }
  }
  if (!model.config.empty()) {
    out << "The resolved configuration is `config.toml` in this run directory (" << model.config.size()
        << " keys).\n\n";
  }
  out << "Re-render this report from the run directory alone: `deep-profile report " << markdown_cell(model.run_id)
      << "`.\n";
  if (!model.notes.empty()) {
    out << "\n## Notes\n\n";
    for (const auto& note : model.notes) out << "- " << markdown_cell(note) << "\n";
  }
}

}  // namespace

std::string render_markdown(const RunReportModel& model) {
  std::ostringstream out;
  write_headline(model, out);
  detail::write_ranges_markdown(model, out);
  write_stage_table(model, out);
  detail::write_sampled_markdown(model, out);
  detail::write_timeline_markdown(model, out);
  write_kernel_table(model, out);
  if (!model.cross_rank_markdown.empty()) out << model.cross_rank_markdown << "\n";
  detail::write_repeats_markdown(model, out);
  write_problems(model, out);
  write_reproduce(model, out);
  return out.str();
}

}  // namespace llmprof
