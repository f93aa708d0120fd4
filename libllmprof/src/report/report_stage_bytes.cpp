// The Stages table's DRAM columns and the memory-bound verdict card; see report_stage_bytes.hpp.
#include "report/report_stage_bytes.hpp"

#include <algorithm>

#include "core/format.hpp"
#include "report/report_view.hpp"

namespace llmprof::detail {
namespace {

// Why a stage with kernel time shows a blank DRAM cell; "" when every figure it can have is there.
std::string withheld_reason(const RunReportModel& model, const ReportStage& stage) {
  if (!stage.kernel_time_ns || !stage.dram_keys_recorded) return "";  // said by the Stages caption / below
  if (!stage.dram_bytes) {
    return model.device.peak_dram_bytes_per_s ? "ncu measured the DRAM bytes of none of its kernels"
                                              : "no ncu DRAM bytes (no ncu data)";
  }
  std::string reason;
  if (!stage.dram_bytes_per_s || !stage.mbu) {
    if (!stage.rate_time_note.empty())
      reason = "bandwidth and MBU withheld: " + stage.rate_time_note;
    else if (!model.device.peak_dram_bytes_per_s)
      reason = "MBU not computed: no peak DRAM bandwidth (ncu's dram__bytes.sum.peak_sustained)";
    else if (!stage.rate_time_ns)
      reason = "bandwidth and MBU not computed: no stage time to divide by";
  }
  if (!stage.dram_bytes_per_step) {
    reason += std::string(reason.empty() ? "" : "; ") + "bytes per step not computed: no step count";
  }
  return reason;
}

bool any_stage(const RunReportModel& model, bool (*test)(const ReportStage&)) {
  return std::any_of(model.stages.begin(), model.stages.end(), test);
}

}  // namespace

std::string dram_per_step_cell(const ReportStage& stage) { return format_si(stage.dram_bytes_per_step, "B"); }
std::string dram_bandwidth_cell(const ReportStage& stage) { return format_si(stage.dram_bytes_per_s, "B/s"); }
std::string mbu_cell(const ReportStage& stage) { return format_fraction_percent(stage.mbu); }
std::string mbu_model_cell(const ReportStage& stage) { return format_fraction_percent(stage.mbu_workload); }

std::string bytes_coverage_cell(const ReportStage& stage) {
  if (!stage.dram_bytes) return kNotComputed;
  std::string text = format_fraction_percent(stage.dram_coverage);
  if (stage.dram_coverage_extrapolated > 0)
    text += " (" + format_fraction_percent(stage.dram_coverage_extrapolated) + " from another configuration)";
  return text;
}

std::string dram_caption(const RunReportModel& model) {
  if (model.stages.empty()) return "";
  if (!any_stage(model, [](const ReportStage& stage) { return stage.dram_keys_recorded; })) {
    return "DRAM per step, DRAM bandwidth, MBU and Bytes measured: not in this report.json (" + model.schema +
           ", written before measured DRAM bytes existed); run `deep-profile analyze` on the run directory to add "
           "them.";
  }
  std::string text =
      "DRAM per step = ncu's DRAM bytes per launch x the stage's launches of each kernel, per step (the Steps "
      "column: what a step is; where no step is known, per instance of the range); DRAM bandwidth = those bytes over "
      "the stage's time (its wall time, "
      "or the GPU-active time where the range does not enclose its GPU work); MBU (measured) = that bandwidth / the "
      "peak DRAM bandwidth at the profiled clocks; Bytes measured = the share of the stage's kernel time whose bytes "
      "ncu measured (the figures count only those kernels), and of it the share carried from another launch "
      "configuration of the same kernel that ncu profiled (the ncu plan's groups).";
  if (any_stage(model, [](const ReportStage& stage) { return stage.mbu_workload.has_value(); })) {
    text += " MBU (model) = the bytes the workload says a step must move (stage1/metrics.json model_bytes_per_step) "
            "x its bare run's steps/s / the peak.";
  } else if (std::any_of(model.warnings.begin(), model.warnings.end(), [](const std::string& warning) {
               // The analysis's warning (stage_limits.cpp) when the stated bytes fail the peak check.
               return warning.find("model_bytes_per_step cannot be right") != std::string::npos;
             })) {
    text += " MBU (model): withheld, because the bytes stage1/metrics.json model_bytes_per_step states cannot be "
            "moved at the bare run's step rate (the warnings give the figures).";
  } else {
    text += " MBU (model) needs the bytes a step must move (model_bytes_per_step in stage1/metrics.json), which "
            "this workload does not state.";
  }
  for (const auto& stage : model.stages) {
    const std::string reason = withheld_reason(model, stage);
    if (!reason.empty()) text += " " + stage_label(stage) + ": " + reason + ".";
  }
  return text;
}

std::string memory_bound_mbu_line(const ReportStage& stage) {
  if (stage.kernel_bound != "memory" || !stage.mbu) return "";
  std::string text = "MBU " + format_fraction_percent(stage.mbu) + " measured";
  if (stage.mbu_workload) text += " · " + format_fraction_percent(stage.mbu_workload) + " model";
  return text;
}

std::string memory_bound_headroom_line(const ReportStage& stage) {
  if (stage.kernel_bound != "memory" || !stage.step_ns || !stage.limit_step_ns || !stage.share_of_limit) return "";
  return stage.step_noun() + " " + format_duration_ns(*stage.step_ns) + ", " +
         format_fraction_percent(stage.share_of_limit) + " of the DRAM limit (" +
         format_duration_ns(*stage.limit_step_ns) + ")";
}

}  // namespace llmprof::detail
