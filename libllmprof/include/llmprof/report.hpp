// Reports people read: MAIN/report.md and MAIN/report.html, rendered from a run directory alone.
//
// The only inputs are MAIN/analysis/report.json ("llmprof.report/2" or /1, required) and, when present,
// MAIN/run.json, MAIN/env.json, MAIN/inputs.json, MAIN/config.toml and the stages' cmd.txt files,
// so any run directory (an old one, one copied from a GPU machine, a recorded sample) can be
// re-rendered with `deep-profile report MAIN`. Unknown JSON fields are ignored; null means
// "not computed" and is shown as such, never replaced by a made-up number. report.json's records
// (stages, kernels, device, ...) are the analysis's own (report_model.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/export.hpp"
#include "llmprof/report_model.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/timeline_record.hpp"

namespace llmprof {

// report.json's top_kernel_selection, member for member (its `rule`, `more_coverage` and
// `collectives_left_out` objects are records of their own), read through one field table. Keys a
// report.json from before they existed lacks keep their defaults.
struct LLMPROF_API ReportCoverageStep {
  double target = 0;  // 0..1
  bool reachable = true;
  std::int64_t more_kernels = 0;  // beyond the selection
};

struct LLMPROF_API ReportSelectionRule {
  std::string kind;              // "top_n", "coverage"; "" before the coverage rule existed (top-N)
  std::optional<double> target;  // the coverage rule's target, 0..1
  bool capped = false;           // the cap on distinct kernels stopped the coverage rule
};

struct LLMPROF_API ReportCollectivesLeftOut {
  std::int64_t count = 0;       // collective kernels never profiled
  std::optional<double> share;  // their share of the stage's kernel time
};

struct LLMPROF_API ReportTopKernelSelection {
  std::string stage;
  std::int64_t n = 0;
  std::string kernel_regex;
  std::optional<double> coverage;  // 0..1
  ReportSelectionRule rule;
  std::vector<ReportCoverageStep> more_coverage;
  ReportCollectivesLeftOut collectives_left_out;
  // report.json's ncu_coverage for this stage: of its kernel time, the share ncu measured and the share
  // extrapolated from the same kernels' profiled configurations; nullopt without the plan's check.
  std::optional<double> ncu_measured, ncu_extrapolated;
  // The stage's recorded GPU time outside CUDA graph executions, 0..1, when its capture traced graphs
  // whole (--cuda-graph-trace=graph): the kernel time the coverage is measured against is only that
  // part, and the sentence says so instead of claiming the whole stage. From the report's timeline.
  std::optional<double> listed_share_of_gpu_time;

  // The coverage rule's target; nullopt under the top-N rule.
  std::optional<double> coverage_target() const { return rule.kind == "coverage" ? rule.target : std::nullopt; }
};

// "Kernels profiled with ncu: the top 10 of stage decode, covering 70.7% of its kernel time; 3 more kernels
// for 80%, ...; 2 collective kernels (12% of its kernel time) left out: ncu cannot replay collectives."
// Plain text: the renderers escape it.
LLMPROF_API std::string describe_kernel_selection(const ReportTopKernelSelection& selection);

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
  std::optional<ReportTopKernelSelection> top_kernel_selection;
  std::vector<std::string> warnings;
  std::optional<TimelineReport> timeline;  // report.json "timeline", when the run has an SQLite export
  std::optional<ReportNodeCapture> node_capture;
  std::optional<ReportBareRun> bare_run;
  std::vector<ReportRangeTiming> nvtx_ranges;
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

// Reads MAIN. Errors: report.json absent (not_found, hint: run `deep-profile analyze MAIN`), or any
// present file unparsable / with a known field of the wrong type (parse_error naming file and field).
LLMPROF_API Result<RunReportModel> load_run_report(const std::filesystem::path& main_directory);

// Deterministic text (no current time, no absolute paths beyond what the run recorded).
LLMPROF_API std::string render_markdown(const RunReportModel& model);
// One self-contained HTML file: inline CSS and SVG, one tiny inline script for sortable tables.
LLMPROF_API std::string render_html(const RunReportModel& model);

// load_run_report + MAIN/report.md and MAIN/report.html, each written atomically.
LLMPROF_API Result<void> write_reports(const std::filesystem::path& main_directory);

// "void at::native::reduce_kernel<512, ...>(T3)" -> "at::native::reduce_kernel"; at most max_length
// characters (an ellipsis marks a cut). Used for chart labels, never for matching.
LLMPROF_API std::string short_kernel_name(std::string_view name, std::size_t max_length = 40);

}  // namespace llmprof
