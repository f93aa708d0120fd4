// "Where did the time go": per-kernel and per-stage roofline, GPU busy fraction and MFU of a run,
// from the nsys summaries, the ncu launches and the workload's own metrics, whichever are present.
//
// Reads MAIN/nsys/summary_<report>.csv, MAIN/ncu/raw.csv and MAIN/stage1/metrics.json; writes
// MAIN/analysis/{kernels.csv, stages.csv, report.json} (schema "llmprof.report/2").
// Times come from nsys when present (whole-run, every launch), efficiency from the ncu sample.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/device_peaks.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/kernel_selection.hpp"
#include "llmprof/ncu_metrics.hpp"
#include "llmprof/ncu_plan.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/report_model.hpp"
#include "llmprof/result.hpp"
#include "llmprof/roofline.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/timeline.hpp"
#include "llmprof/workload_metrics.hpp"

namespace llmprof {

// /2: ncu_launches[].nvtx_stack spells default-domain ranges like stages[] ("decode", was ":decode").
// Readers (report, compare) still accept /1.
inline constexpr std::string_view analysis_report_schema = "llmprof.report/2";

struct AnalysisOptions {
  // Top-kernel selection reported in report.json (the kernels a later ncu pass should profile).
  std::string selection_stage = "decode";
  std::optional<std::string> selection_domain;
  std::size_t top_n = 5;
  std::optional<double> kernel_coverage;  // set: select by coverage (see TopKernelRequest), capped at max_kernels
  std::size_t max_kernels = 30;
  // The form the selection's regex is written in; unset when ncu matches a form no nsys name can be
  // turned into (ncu.kernel_name_base = mangled): then there is no selection, and `skipped` says why.
  std::optional<KernelNameBase> name_base = KernelNameBase::demangled;
  bool capture_gated_on_stage = false;  // see TopKernelRequest
  // False when the capture was taken without CUDA trace (nsys.trace without "cuda", the sampled preset): a stage
  // without GPU work is then unmeasured, not CPU-only (TimelineOptions::cuda_traced).
  bool cuda_traced = true;
  RooflineThresholds thresholds;
  // A stage whose kernels keep the GPU busy less than this fraction of the time it took is
  // called host/launch-bound: the GPU waits on the CPU between kernels.
  double host_bound_busy_fraction = 0.5;
  // Names the device when neither ncu nor the workload metrics do (selects datasheet peaks).
  std::string device_name;
  std::size_t stage_top_kernels = 3;  // kernels listed per stage
  // Set by per-rank sampling for a rank's capture: the samples its stages are measured with, instead of the export's.
  std::optional<AttributedSamples> attributed_samples;
  // What the export's GPU-metrics samples are checked against (the frequency nsys.gpu_metrics asked for).
  GpuMetricsExpectation gpu_metrics_expectation;
  // Which ranges are a library's (ReportStage::library, TimelineStage::library): the built-in rules and the run's
  // run.ignore_ranges.
  LibraryRanges library_ranges;
};

// The analysis fills report.json's records directly (llmprof/report_model.hpp): one type per figure set from
// the computation to the file to the harness, so a new per-stage figure is a field there, a row of its field
// table (src/rundir/report_model_json.cpp, which writes report.json and stages.csv) and its computation here.
// A stage outside the nsys capture has no kernel_time_ns / kernel_instances (null, not 0).
using KernelAnalysis = ReportKernel;
using StageTopKernel = ReportStageKernel;
using StageAnalysis = ReportStage;

// One NVTX range on the CPU timeline (nsys nvtx_sum): how often it ran and how long each instance took.
// This is what a machine without a GPU still measures. A row whose statistics contradict each other
// (min > median, mean outside [min, max], total != mean x instances) is left out with a warning.
struct RangeTiming {
  std::string name;
  std::string domain;  // "" for NVTX's default domain
  std::string style;   // "PushPop" or "StartEnd"
  std::int64_t instances = 0;
  std::int64_t total_ns = 0;
  double mean_ns = 0;
  double median_ns = 0;  // p50 per instance
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double stddev_ns = 0;
  // nvtx_sum prints no percentile past the median; the SQLite export has every instance, so p99 comes
  // from the timeline when it saw the same number of instances (the same capture), else it stays null.
  std::optional<double> p99_ns;
  std::string source = "nsys nvtx_sum";
};

// The second capture traced per CUDA graph node (MAIN/nsys/node/), taken when the first one recorded graph
// launches whole: the analysis reads its kernel tables (cuda_gpu_kern_sum, nvtx_kern_sum) in place of the
// first capture's, and everything else from the first capture. It is held as report.json's record
// (ReportNodeCapture), and the ncu plan's coverage as ReportNcuCoverage: written as held, no copy in between.

// The ncu plan's launch-configuration groups of its stage (ncu/plan.json "stage" and "configs"): each group's
// launches and kernel time in the stage, and for a group ncu did not profile, the group whose figures stand for
// it. With them a kernel's DRAM bytes in the plan's stage are each group's bytes per profiled launch x the
// group's launches, instead of one mean over the profiled launches (one per group) x all launches.
struct NcuPlanGroups {
  std::string stage;
  std::vector<PlannedConfig> configs;
};

struct AnalysisReport {
  DevicePeaks device;
  std::optional<DevicePeaks> datasheet;  // the known-GPU table's figures, for comparison
  std::vector<StageAnalysis> stages;     // outermost first, then by wall time
  std::vector<KernelAnalysis> kernels;   // by total_time_ns, descending
  std::optional<KernelSelection> top_kernel_selection;
  std::optional<ReportNcuCoverage> ncu_coverage;
  std::optional<WorkloadMetrics> workload;
  std::vector<RangeTiming> range_timings;  // nsys nvtx_sum rows, by total time (descending)
  std::vector<LaunchRoofline> launches;    // every ncu launch analysed, in file order
  std::vector<std::string> warnings;
  std::vector<std::string> skipped;            // what could not be computed and why
  std::map<std::string, std::string> sources;  // input -> file it was read from
  // From MAIN/nsys/profile.sqlite: per-instance figures; its verdicts replace the nsys-summary ones of
  // the stages it knows (it sees CUDA graph executions and capture losses, the summaries do not).
  std::optional<TimelineReport> timeline;
  std::optional<ReportNodeCapture> node_capture;  // the kernel tables came from it
};

// What the analysis reads, already parsed; any part may be absent (but not all).
struct AnalysisInputs {
  std::optional<ReportNcuCoverage> ncu_coverage;
  std::optional<NcuPlanGroups> ncu_plan_groups;
  std::optional<NsysStats> nsys;
  std::optional<std::vector<LaunchRoofline>> ncu_launches;
  std::optional<WorkloadMetrics> workload;
  std::optional<TimelineReport> timeline;
  std::optional<ReportNodeCapture> node_capture;  // set when `nsys` holds its kernel tables
  // GPU-metrics samples of MAIN/nsys/profile.sqlite (llmprof/gpu_metrics.hpp): the stages' sampled_* figures.
  std::optional<GpuMetricSamples> gpu_metrics;
  // Where they came from when not the export (AnalysisOptions::attributed_samples): each stage's note ends with
  // `gpu_metrics_origin`; `gpu_metrics_other_capture` as AttributedSamples::other_capture.
  std::string gpu_metrics_origin;
  bool gpu_metrics_other_capture = false;
  // The select stage's selection (MAIN/nsys/selection.json): the kernels ncu was filtered to. When it is of the
  // stage the options ask for, report.json's top_kernel_selection is this one, not one selected again.
  std::optional<KernelSelection> selection;
  // Steps inferred without NVTX over the timeline's export (llmprof/sync_steps.hpp): a stage whose GPU work they
  // launched, and that holds no step range or graph launches, counts them as its steps (ReportStage::step_basis).
  std::optional<StepKindReport> inferred_steps;
  std::map<std::string, std::string> sources;
  std::vector<std::string> warnings;  // about the inputs themselves; copied into AnalysisReport::warnings
};

Result<AnalysisReport> analyze(const AnalysisInputs& inputs, const AnalysisOptions& options);

// Reads MAIN/nsys/summary_*.csv (with the kernel tables of MAIN/nsys/node/summary_*.csv when that capture exists),
// MAIN/nsys/profile.sqlite, MAIN/ncu/raw.csv, MAIN/stage1/metrics.json (each optional) and analyses them.
// Error(not_found) when none exists; a file that exists but does not parse is an Error naming the file.
Result<AnalysisReport> analyze_run_directory(const std::filesystem::path& main_directory,
                                             const AnalysisOptions& options);

// Writes kernels.csv, stages.csv and report.json into `analysis_directory` (created if needed): the two tables
// from the same field tables as report.json, one column per field.
Result<void> write_analysis(const AnalysisReport& report, const std::filesystem::path& analysis_directory);

// report.json's text (schema llmprof.report/2).
std::string analysis_report_json(const AnalysisReport& report);

}  // namespace llmprof
