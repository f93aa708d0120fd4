// The records of analysis/report.json ("llmprof.report/2"): one set of types that the analysis writes
// and the report and compare layers read back, through one field table per record
// (src/rundir/report_model_json.cpp), and RunReportModel, the run directory they are read into. A field added to a
// record here and to its table there is written by `deep-profile analyze` and read by `deep-profile report` and
// `compare` alike. The kernel selection, a file of its own too (nsys/selection.json), is its own header
// (llmprof/kernel_selection_record.hpp).
//
// null in report.json is nullopt here ("not computed"), never a made-up 0. Fractions are 0..1,
// pct_* percentages 0..100.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmprof/choice.hpp"
#include "llmprof/export.hpp"
#include "llmprof/kernel_selection_record.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/timeline_record.hpp"

namespace llmprof {

// What one step of a stage is, and so what its "per step" figures divide by (report.json "stages[].step_basis";
// analysis/step_units.cpp finds it). The first four count steps inside the stage's range; own_range: each
// instance of the range is itself one step; range_instances: no step is known, so the figures are per instance
// of the range and say so, never "per step".
enum class StepBasis {
  step_range,       // a child range repeating once per step (decode > 48 decode_step)
  graph_launches,   // a range holding one CUDA graph launch per step
  bare_run_tokens,  // the workload's decode range: its bare run's new tokens (stage1/metrics.json)
  inferred_steps,   // steps inferred without NVTX (llmprof/sync_steps.hpp) that launched the range's GPU work
  own_range,        // each instance is one step: a step kind, or the step range of the stage around it
  range_instances,  // no step known: per instance of the range
};
inline std::span<const std::string_view> choice_names(StepBasis) noexcept {
  static constexpr std::string_view names[] = {"step_range",     "graph_launches", "bare_run_tokens",
                                               "inferred_steps", "own_range",      "range_instances"};
  return names;
}

// report.json "device" (and "device.datasheet"): peaks at the clocks the kernels were profiled at.
struct LLMPROF_API ReportDevicePeaks {
  std::string name;
  std::vector<std::pair<std::string, double>> peak_flop_per_s;  // precision -> FLOP/s, in file order
  std::optional<double> peak_dram_bytes_per_s;
  std::vector<std::pair<std::string, std::string>> sources;  // figure -> where it came from
};

struct LLMPROF_API ReportDevice : ReportDevicePeaks {
  std::optional<ReportDevicePeaks> datasheet;  // the known-GPU table's figures, for comparison
};

// report.json "stages[].top_kernels[]".
struct LLMPROF_API ReportStageKernel {
  std::string name;
  std::int64_t time_ns = 0;
  double share = 0;  // of the stage's kernel time
};

// One GPU-metrics sample of a stage's median step (report.json "stages[].sampled_median_step[]"): its period's
// middle after the step's first GPU start, and the shares of peak it reported (null: not in the metric set).
struct LLMPROF_API ReportSampledPoint {
  std::int64_t offset_ns = 0;
  std::optional<double> sm_active;
  std::optional<double> tensor_active;
  std::optional<double> dram;  // read + write
};

// One GPU metric sampled over a stage (report.json "stages[].sampled_<metric>" and its "_p10", "_p50", "_p90"
// keys beside it): shares of the metric's peak, 0..1, the mean and nearest-rank percentiles over the stage's samples.
// All null where the metric set has no such metric or too few samples fell in the stage.
struct LLMPROF_API SampledFigure {
  std::optional<double> mean, p10, p50, p90;
};

// report.json "stages[]".
struct LLMPROF_API ReportStage {
  std::string name;
  std::string domain;                 // "" for the default NVTX domain
  std::optional<std::string> parent;  // enclosing stage, e.g. "generate"
  int level = 0;                      // nesting depth, 0 = outermost
  // The library that emits this range (CCCL, PyTorch, ...: llmprof/library_ranges.hpp); empty for the workload's
  // own. Listed with the others, but never the main stage the headline speaks of.
  std::string library;
  std::optional<std::int64_t> wall_ns;
  std::optional<std::int64_t> gpu_projection_ns;
  // null for a range outside the nsys capture: unmeasured, not 0.
  std::optional<std::int64_t> kernel_time_ns;
  std::optional<std::int64_t> kernel_instances;
  std::string kernel_time_source;  // "nsys nvtx_kern_sum" or "ncu launches"
  std::optional<double> gpu_busy_fraction;
  std::optional<double> flop;
  double flop_coverage = 0;  // share of kernel time whose FLOP is known
  std::optional<double> achieved_flop_per_s;
  std::optional<double> flop_per_s_while_busy;
  std::string dominant_precision;
  std::optional<double> mfu;  // from profiled FLOP against the device's dense peak
  std::optional<double> model_flop_per_s;
  std::optional<double> mfu_workload;  // second opinion from the workload's own FLOP/token and tokens/s
  std::string mfu_gap_reason;          // why the two MFUs differ more than 2x; "" otherwise
  // The time the rates divide by (wall, or the timeline's GPU-active time), and why it is absent.
  std::optional<std::int64_t> rate_time_ns;
  std::string rate_time_source;
  std::string rate_time_note;
  // Measured DRAM traffic (ncu bytes per launch x the stage's launches) and what it gives. Absent (null) in
  // reports written before these keys existed.
  std::optional<double> dram_bytes;
  double dram_coverage = 0;  // share of kernel time whose bytes are known
  double dram_coverage_extrapolated = 0;  // the part of it carried from another launch configuration of the kernel
  std::optional<double> steps;
  std::string steps_source;  // one sentence: what a step is and how many there are
  std::string step_basis;    // a StepBasis spelling; "" in reports written before it existed
  std::optional<double> dram_bytes_per_step;
  std::optional<double> dram_bytes_per_s;  // over the stage's time
  std::optional<double> dram_bytes_per_s_while_busy;
  std::optional<double> mbu;  // dram_bytes_per_s / peak DRAM bandwidth
  std::optional<double> model_bytes_per_step;
  std::optional<double> mbu_workload;
  std::string bytes_comparison;
  std::optional<std::string> kernel_bound;  // "memory", "compute", "latency"
  std::optional<double> step_ns;
  std::optional<double> limit_step_ns;  // the step at 100% of the bound's peak
  std::optional<double> share_of_limit;
  std::string headroom;
  std::string verdict;                 // one sentence, e.g. "host-bound: GPU busy 4% of the stage ..."
  std::vector<ReportStageKernel> top_kernels;
  // Kernel launches per second of the stage's rate time (kernel_instances / rate_time_ns): what a host-bound
  // stage's launch overhead scales with. Null where either is unmeasured.
  std::optional<double> kernel_launches_per_s;
  // Sampled by nsys while the workload ran at full speed (llmprof/gpu_metrics.hpp, nsys.gpu_metrics), over the
  // samples inside the GPU-active windows of the stage's instances (each instance's first GPU start to last GPU
  // end; a sample counts where the middle of its period lies): fractions of each metric's peak, mean and
  // nearest-rank percentiles. Null where the capture holds no samples or none fell in the stage
  // (sampled_note says why).
  std::optional<std::int64_t> sampled_samples;
  SampledFigure sampled_sm_active;      // "SMs Active [Throughput %]"
  SampledFigure sampled_tensor_active;  // "Tensor Active [Throughput %]"
  SampledFigure sampled_dram_read;      // "DRAM Read Bandwidth [Throughput %]": share of peak DRAM bandwidth
  SampledFigure sampled_dram_write;     // "DRAM Write Bandwidth [Throughput %]"
  // DRAM bytes from the samples: (read + write share) x peak bandwidth x sample period, summed over the stage's
  // samples; per step over `steps`. MBU here is the mean read + write share: DRAM use while the GPU works.
  std::optional<double> sampled_dram_bytes_per_step;
  std::optional<double> sampled_mbu;
  std::optional<double> sampled_to_measured_bytes;  // sampled_dram_bytes_per_step / dram_bytes_per_step (ncu)
  std::string sampled_note;
  // The samples of the instance whose GPU-active window is the median one (stages with at least 3 instances;
  // at most kSampledSeriesPoints, consecutive samples averaged beyond): what the report charts. report.json only.
  std::vector<ReportSampledPoint> sampled_median_step;

  std::string qualified_name() const { return domain.empty() ? name : domain + ":" + name; }
  // Whether "per step" figures divide by steps: false where no step is known (step_basis range_instances) and the
  // figures are per instance of the range.
  bool counts_steps() const { return step_basis != choice_name(StepBasis::range_instances); }
  // What one unit of the per-step figures is called: "step", or "`decode` range" where no step is known.
  std::string step_noun() const { return counts_steps() ? "step" : "`" + name + "` range"; }
  // Not a report.json field: whether the file had the DRAM keys ("dram_coverage"), so a report can tell
  // a figure withheld by the analysis from one an older analysis never wrote. Set by the report reader.
  bool dram_keys_recorded = false;
};

// report.json "kernels[]".
struct LLMPROF_API ReportKernel {
  std::string name;  // demangled, as nsys/ncu print it
  std::vector<std::string> stages;
  std::optional<std::int64_t> instances;
  std::optional<std::int64_t> total_time_ns;
  std::optional<double> avg_time_ns;
  std::optional<double> share_of_total;
  std::string time_source;  // "nsys cuda_gpu_kern_sum" or "ncu gpu__time_duration.sum"
  std::optional<std::int64_t> profiled_launches;
  std::optional<double> flop_per_launch;
  std::optional<double> dram_bytes_per_launch;
  std::optional<double> arithmetic_intensity;  // FLOP per DRAM byte
  std::optional<double> achieved_flop_per_s;
  std::optional<double> pct_peak_compute;
  std::optional<double> pct_peak_dram;
  std::optional<std::string> bound;      // compute | memory | latency
  std::optional<std::string> precision;  // "dominant_precision"; when absent, inferred for the roofline
  std::string ncu_name;                  // as ncu printed it, when profiled
  std::string ncu_name_join;             // how the ncu name was matched: "exact", "join key", "function name", ""
};

// report.json "bare_run": the workload's own figures from its bare stage-1 run (stage1/metrics.json) as that file's
// reader filled them; every key is required when read back (the analysis writes them all), never a made-up 0.
struct LLMPROF_API ReportBareRun {
  std::string device, device_name, dtype;  // "cuda:0", "NVIDIA H100 80GB HBM3", "bf16" (or fp16, fp32)
  std::int64_t batch = 0, prompt_tokens = 0, new_tokens = 0, parameters = 0;
  double prefill_s = 0, decode_s = 0;                    // wall times: the prefill, all decode steps
  double tokens_per_s = 0, time_per_output_token_s = 0;  // generated tokens / decode_s; per decode step
  double flop_per_token = 0, flop_per_prefill = 0;       // model FLOP: per decode step per sequence; of one prefill
};

// report.json "nvtx_ranges[]": one NVTX range's instances on the CPU timeline (nsys nvtx_sum), filled by the analysis
// (analysis/range_timings.cpp, which leaves out a row whose statistics contradict each other, with a warning).
struct LLMPROF_API ReportRangeTiming {
  std::string name, domain, style;  // domain "" for NVTX's default; style "PushPop" or "StartEnd"
  std::optional<std::int64_t> instances, total_ns;
  std::optional<double> mean_ns, p50_ns, p99_ns;  // p99 from the SQLite export's instances, else null
  std::optional<std::int64_t> min_ns, max_ns;
  std::optional<double> stddev_ns;
  std::string source;  // "nsys nvtx_sum", with where p99 came from when it did
};

// report.json "node_capture": the kernel tables came from a second capture traced per CUDA graph node.
struct LLMPROF_API ReportNodeCapture {
  std::string kernel_tables;  // where they were read, relative to MAIN ("nsys/node/summary_*.csv")
  // One NVTX range's total CPU time in both captures: what node tracing cost the host side.
  struct RangeWall {
    std::string range;  // "decode" or "domain:decode"
    std::int64_t first_capture_ns = 0;
    std::int64_t node_capture_ns = 0;
  };
  std::vector<RangeWall> range_walls;  // ranges present in both, in the first capture's order
};

// report.json "ncu_coverage": the ncu plan's check for its stage (ncu/plan.json). Of the stage's kernel time, the
// share whose launch-configuration group ncu profiled (measured) and the share carried over from a profiled group of
// the same kernel (extrapolated); the analysis scales a kernel's ncu figures to all its launches, so both count as
// covered there. The analysis holds this record as it reads the plan, and writes it as held.
struct LLMPROF_API ReportNcuCoverage {
  std::string stage;
  double measured = 0;
  double extrapolated = 0;
  double reached() const { return measured + extrapolated; }  // written beside them, not read back
};

// report.json "mfu_workload": the workload's own MFU (stage1/metrics.json FLOP/token x tokens/s) at the peak of its
// dtype, beside the MFU ncu's FLOP give, for each stage that has a model FLOP rate.
struct LLMPROF_API ReportStageMfu {
  std::string stage;  // the stage's qualified name (ReportStage::qualified_name)
  double model_flop_per_s = 0;
  std::optional<double> mfu;      // stages[].mfu_workload
  std::optional<double> mfu_ncu;  // stages[].mfu
};

struct LLMPROF_API ReportWorkloadMfu {
  std::string dtype;                       // stage1/metrics.json dtype: the precision whose peak MFU divides by
  std::optional<double> peak_flop_per_s;   // device.peak_flop_per_s of that dtype; null when the device has none
  std::vector<ReportStageMfu> stages;      // in stages[] order
};

// report.json "ncu_launches[]": one kernel launch ncu profiled, with its roofline figures, in ncu's order.
struct LLMPROF_API ReportNcuLaunch {
  std::int64_t id = 0;  // ncu's launch ID
  std::string kernel_name;
  std::vector<std::string> nvtx_stack;  // outermost first, spelled like stages[] ("decode", "llm:decode")
  std::optional<double> duration_ns;
  std::optional<double> flop;                                    // null when no FLOP metric was recorded
  std::vector<std::pair<std::string, double>> flop_by_precision;  // precision -> FLOP, non-zero only
  std::optional<double> dram_bytes;
  std::optional<double> achieved_flop_per_s;
  std::optional<double> dram_bytes_per_s;
  std::optional<double> arithmetic_intensity;  // FLOP per DRAM byte
  std::optional<double> pct_peak_compute;      // percent: sum over precisions of FLOP/s / its peak
  std::optional<double> pct_peak_dram;
  std::optional<std::string> bound;  // compute | memory | latency
  std::string dominant_precision;    // "" when no FLOP
  std::vector<std::string> missing;  // what could not be computed and why
};

// The verdict a stakeholder reads first (report.json "verdict"), computed by the analysis from the figures of
// this model (analysis/run_verdict.cpp) and stored beside them, so that a harness reading report.json gets the
// sentence the report opens with: one headline per run (what bounds the main stage, its biggest lever and the gain
// that lever is measured to give) and, for the main stage and each engine step kind, the levers ranked by measured
// gain. Every gain is a ratio of figures the report shows; where one is not measured, or its invariants fail, the
// gain is withheld with the reason.

// The report section that holds a lever's source figure (report.json "verdict.stages[].levers[].section").
enum class ReportSection { bare_run, stages, stage_instances, ranks };
inline std::span<const std::string_view> choice_names(ReportSection) noexcept {
  static constexpr std::string_view names[] = {"bare_run", "stages", "stage_instances", "ranks"};
  return names;
}

struct LLMPROF_API VerdictLever {
  std::string name;  // "launch overhead", "HBM limit", "compute limit", "idle between graph replays", "straggler rank"
  // The step time now over the step time with this lever pulled (> 1); nullopt when withheld.
  std::optional<double> speedup;
  std::string after;     // the lever that must be pulled first for this gain ("launch overhead"); "" for now
  std::string figure;    // the measured figures the gain is computed from
  std::string withheld;  // why there is no gain; "" when there is one
  ReportSection section = ReportSection::stages;
};

struct LLMPROF_API VerdictStage {
  std::string stage;  // the stage's qualified name (ReportStage::qualified_name)
  bool main = false;  // the run's main stage (the profiled one); otherwise an engine step kind
  // The step as it runs now: the bare run's time per decode step when the stage counts the bare run's decode
  // steps, else its time per step under the profiler.
  std::optional<double> step_ns;
  bool step_from_bare_run = false;
  std::optional<double> profiled_step_ns;       // the step under the profiler (timeline, else the Stages table)
  std::optional<double> gpu_work_step_ns;       // the GPU's busy time per step (nsys SQLite timeline)
  std::optional<double> hbm_limit_step_ns;      // measured DRAM bytes per step at the peak DRAM bandwidth
  std::optional<double> compute_limit_step_ns;  // profiled FLOP per step at the dominant precision's peak
  std::vector<VerdictLever> levers;             // ranked: gains now, then gains after another lever, then withheld
};

struct LLMPROF_API RunVerdict {
  std::string headline;               // plain text; "" when no stage was measured
  std::vector<VerdictStage> stages;   // the main stage first, then each step kind that is a stage
};

// What the report knows of the selection beyond the record: report.json's ncu_coverage for the selection's stage
// (of its kernel time, the share ncu measured and the share extrapolated from the same kernels' profiled
// configurations) and, from the report's timeline, the stage's recorded GPU time outside CUDA graph executions (0..1)
// when its capture traced graphs whole: the coverage is then of that part only, and the sentence says so. These are
// no part of the selection's files, so they sit beside the record rather than in it.
struct LLMPROF_API SelectionCoverageNotes {
  std::optional<double> ncu_measured, ncu_extrapolated;
  std::optional<double> listed_share_of_gpu_time;
  // A figure of the selection broke its bound as report.json was read (a warning names it): the report states no
  // coverage rather than the 0 the record holds in its place.
  bool figures_withheld = false;
};

// One step's exact command line, for "how to reproduce".
struct LLMPROF_API ReproduceStep {
  std::string stage;    // run.json stage name (stage1, nsys, ncu, ...)
  std::string command;  // shell-quoted, as recorded
  std::string source;   // "run.json" or the cmd.txt path it came from
};

// A stage that did not complete, from run.json.
struct LLMPROF_API StageProblem {
  std::string stage;
  std::string status;  // skipped | failed | interrupted | pending | running
  std::string reason;
};

struct LLMPROF_API RunEnvironmentSummary {
  bool present = false;  // env.json was found and read
  std::string host;
  std::string os;
  std::vector<GpuRecord> gpus;
  std::vector<std::pair<std::string, std::string>> tool_versions;  // "nsys" -> "2025.3.1.0"
};

// One quantity of stage 1's repeated bare runs (stage1/repeats.json): "wall_s", "prefill_s", "decode_s".
struct LLMPROF_API ReportRepeatQuantity {
  std::string name;
  std::vector<double> samples;  // seconds, one per run
};

// analysis/ranks.csv (a run under a launcher): the rank whose steps start latest, by its mean lag behind the
// earliest rank at each step.
struct LLMPROF_API ReportStraggler {
  std::int64_t rank = 0;
  double mean_step_start_lag_ns = 0;
  std::int64_t ranks = 0;  // ranks in the file
};

// analysis/step_kinds.json's first window when its steps were inferred without NVTX step ranges (the capture holds
// no range of the workload's own): the unit the headline speaks of, "the captured window: N steps inferred".
struct LLMPROF_API ReportInferredSteps {
  std::int64_t steps = 0;
  std::int64_t step_time_ns = 0;  // summed over the steps (each: first launch to the later of its cut and GPU end)
  std::int64_t gpu_busy_ns = 0;   // summed over the steps (the union of each step's GPU work)
  bool step_time_recorded = true;  // false: a step_kinds.json written before kinds carried total_ns
  // The two ways of finding the steps disagree (step_kinds.json figures_withheld): no per-step figure, and why.
  bool figures_withheld = false;
  std::string inference_check;
  std::vector<std::pair<std::string, std::int64_t>> kinds;  // name, steps; as the file lists them
  std::vector<std::int64_t> kind_p50_ns;                    // each kind's median step, in the same order
};

// A run directory read for a report (llmprof/report.hpp's load_run_report): report.json's records above, the
// step records and run files beside it. The analysis computes the verdict from this model too, so the report's
// figures and the verdict's cannot disagree.
struct LLMPROF_API RunReportModel {
  std::filesystem::path main_directory;
  std::string run_id;  // run.json run_id, else the directory name
  std::string created_utc;
  std::string run_status;  // run.json status, "" when run.json is absent

  // report.json
  std::string schema;
  ReportDevice device;
  std::vector<ReportStage> stages;
  std::vector<ReportKernel> kernels;  // sorted by total_time_ns descending, as written
  std::optional<KernelSelection> top_kernel_selection;
  SelectionCoverageNotes top_kernel_selection_notes;
  std::vector<std::string> warnings;
  std::optional<TimelineReport> timeline;  // report.json "timeline", when the run has an SQLite export
  std::optional<ReportNodeCapture> node_capture;
  std::optional<ReportNcuCoverage> ncu_coverage;
  std::optional<ReportWorkloadMfu> mfu_workload;
  std::vector<ReportNcuLaunch> ncu_launches;
  std::optional<ReportBareRun> bare_run;
  std::vector<ReportRangeTiming> nvtx_ranges;
  // report.json "verdict": the headline and the ranked levers as the analysis stored them; nullopt for a report.json
  // written before the analysis stored them (the report then says how to get them: `deep-profile analyze MAIN`).
  std::optional<RunVerdict> verdict;
  // env.json "tools.nvidia_driver.present": false on a machine without an NVIDIA driver, where the
  // report says plainly that kernel-level stages need a GPU; nullopt when not recorded.
  std::optional<bool> nvidia_gpu_present;
  std::vector<std::pair<std::string, std::string>> stage_warnings;  // run.json: (stage, warning)

  std::vector<std::string> workload_argv;  // run.json workload, else inputs.json
  RunEnvironmentSummary environment;
  std::vector<std::pair<std::string, std::string>> config;  // config.toml flattened: "nsys.trace" -> TOML text
  std::vector<StageProblem> stage_problems;
  std::vector<ReproduceStep> reproduce;
  std::vector<std::string> notes;  // what could not be read (absent env.json, ...), shown in the report
  // analysis/ranks.md (runs under a launcher): the "Across ranks" section, Markdown; empty otherwise.
  std::string cross_rank_markdown;
  std::optional<ReportStraggler> straggler;  // analysis/ranks.csv; nullopt for a single rank
  std::vector<std::string> step_kinds;       // analysis/step_kinds.json: the engine's step kinds, in file order
  std::optional<ReportInferredSteps> inferred_steps;  // analysis/step_kinds.json, window 1, when inferred
  // run.json capture.scope: how the run scoped the capture itself (the configured gate never opened and the workload
  // emits no NVTX range of its own), shown beside the workload; empty when the capture is the configured one.
  std::string capture_scope;

  std::vector<ReportRepeatQuantity> repeats;  // stage1/repeats.json; empty when absent
  // gpu_state.json: throttling / other processes seen around the GPU stages, and why there is no
  // reading (nvidia-smi missing) when there is none.
  std::vector<std::string> gpu_state_warnings;
  std::string gpu_state_problem;
};

}  // namespace llmprof
