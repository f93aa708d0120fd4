// The stage interface of one DeepProfiler::run(): the context every stage shares (PipelineRun), what a
// stage returns (StageResult, Staged) and hands to the later ones (ProbeOutput, WorkloadOutput, ...), and
// the stage functions the stage table in deep_profiler.cpp calls.
//
// Data flow, as deep_profiler.cpp wires it:
//   probe -> ProbeOutput            (nsys, ncu, low disk space)
//   workload (stage1/) -> WorkloadOutput  (why the workload failed, the NVTX ranges it emitted)
//   nsys(probe, workload) -> NsysOutput   (the stats tables, the gate, a halt of later profiling)
//   select(nsys) -> SelectOutput    (the kernel regex, its launch bound, the selected kernels)
//   ncu(probe, workload, nsys, select); analyze(nsys) -> AnalyzeOutput; report(analyze)
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "process/signal_fallback.hpp"
#include "llmprof/capture_record.hpp"
#include "llmprof/clock.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/gpu_state.hpp"
#include "llmprof/ncu_plan.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/run_layout.hpp"
#include "llmprof/stage.hpp"
#include "llmprof/timeline.hpp"
#include "llmprof/tool_probe.hpp"
#include "pipeline/workload.hpp"

namespace llmprof::detail {

// Why a stage did not succeed; decides the run's outcome (and the CLI's exit code).
// What a stage's problem says about the run (the worst one decides RunStatus). no_hardware: skipped because
// the machine lacks what the stage needs (no NVIDIA driver: no kernels to select or profile), which is not a
// failure of the run but must not read as ok either.
// missing_input: the stage could not start what it was given (the workload program does not exist).
enum class StageProblemKind { none, no_hardware, environment, failure, missing_input, timeout, interrupted };

// What a stage did, in the StageRecord fields a stage owns. A stage fills its report through
// PipelineRun::stage_report() while it runs; the stage table alone writes it into run.json's record
// (apply_stage_report, stage_records.cpp) when the stage returns, and what came after (the GPU state read after
// it) when the stage ends, with the record's status, reason and timing. run.json is written when a stage starts (status running) and when it ends, not in between (the
// report stage's own write, before it renders run.json, holds only the stages before it), so a run killed
// mid-stage leaves run.json saying that stage is running, as it did when stages wrote the record directly.
struct StageReport {
  std::optional<std::string> command;   // the exact command, shell-quoted (the stage's main one)
  std::optional<std::string> cmd_file;  // relative to MAIN
  std::optional<std::string> log_file;  // relative to MAIN
  // Set once the stage ran a tool: the last one's exit code, or nullopt when a signal ended it.
  std::optional<std::optional<int>> exit_code;
  std::vector<std::string> artifacts;   // relative to MAIN
  std::vector<std::string> warnings;
  std::vector<std::string> workload_endings;  // see StageRecord::workload_endings
  std::optional<std::string> ncu_set;         // see StageRecord::ncu_set
  std::vector<RankRecord> ranks;              // under a launcher: one per rank
};

// What a stage function returns; the orchestrator records it in run.json.
struct StageResult {
  StageStatus status = StageStatus::ok;
  std::string reason;
  StageProblemKind problem = StageProblemKind::none;

  static StageResult ok() { return {}; }
  static StageResult skipped(std::string why, StageProblemKind kind = StageProblemKind::none) {
    return {StageStatus::skipped, std::move(why), kind};
  }
  static StageResult failed(std::string why, StageProblemKind kind = StageProblemKind::failure) {
    return {StageStatus::failed, std::move(why), kind};
  }
  static StageResult interrupted(std::string why) {
    return {StageStatus::interrupted, std::move(why), StageProblemKind::interrupted};
  }
};

// What the stage-1 metrics JSON says about NVTX (only the fields the pipeline needs).
struct EmittedRanges {
  std::string domain;              // "" = default domain
  std::vector<std::string> names;  // e.g. prefill, decode
  std::vector<std::string> warnings;  // optional keys of the metrics file left out (WorkloadMetrics::warnings)
};

// A stage's status with what it hands to the later stages (default-constructed when it had nothing
// to hand on, e.g. when it was skipped).
template <class Output>
struct Staged {
  Staged(StageResult result_) : result(std::move(result_)) {}  // NOLINT: a bare StageResult is an empty output
  Staged(StageResult result_, Output output_) : result(std::move(result_)), output(std::move(output_)) {}
  StageResult result;
  Output output;
};

struct ProbeOutput {
  NsysInfo nsys;
  NcuInfo ncu;
  NvidiaDriver nvidia_driver;                 // without one there are no CUDA kernels to select or profile
  std::optional<std::string> low_disk_space;  // why profiling is refused, when it is
};

struct WorkloadOutput {
  std::optional<std::string> failure;           // profiling the same workload again is pointless
  std::optional<EmittedRanges> emitted_ranges;  // from stage-1 metrics
};

struct NsysOutput {
  std::optional<NsysStats> stats;
  std::optional<CaptureRecord> capture;       // what was captured; the stage table writes it into run.json
  std::optional<std::string> halt_profiling;  // later profilers must not run (run.on_empty_gate = fail)
  // The nsys.nvtx_capture of a gate that never opened, when the stage stopped on it (nothing took its place).
  std::optional<std::string> unopened_gate;
  // Set when the timeline holds no CUDA kernel and the machine has no NVIDIA driver: why there is nothing
  // to select (kernel-level stages need a GPU), for the select stage to say.
  std::optional<std::string> no_kernels_without_gpu;
  // The kernel tables of `stats` come from the second, node-traced capture (MAIN/nsys/node/).
  bool kernels_from_node_capture = false;

  // The NVTX range the captured timeline is limited to (CaptureRecord::gated_range), when it is.
  std::optional<std::string> gate() const { return capture ? capture->gated_range() : std::nullopt; }
};

struct SelectOutput {
  std::optional<std::string> kernel_regex;    // ncu --kernel-name, when there is a filter
  std::optional<std::int64_t> launch_bound;   // ncu --launch-count for that filter
  std::vector<std::string> selected_kernels;  // demangled names (empty for a user regex)
  // The selection itself (unset for a user regex): the ncu stage plans its launches from it (ncu.plan =
  // per-kernel). Select owns the selection; the ncu stage owns the plan.
  std::optional<KernelSelection> selection;
  // Select found no range to select from, so ncu's NVTX filter cannot match either: why, and the --set line that
  // would work. The ncu stage is then skipped instead of spending a pass.
  std::optional<std::string> filter_cannot_match;
};

struct AnalyzeOutput {
  bool written = false;  // analysis/report.json exists for the report stage
};

// What each stage handed on to the later ones.
struct StageOutputs {
  ProbeOutput probe;
  WorkloadOutput workload;
  NsysOutput nsys;
  SelectOutput select;
  AnalyzeOutput analysis;
};

// What the ncu stage reads from the stages before it.
struct NcuInputs {
  const ProbeOutput& probe;
  const WorkloadOutput& workload;
  const NsysOutput& nsys;
  const SelectOutput& select;
};

// The context of one run that every stage shares: configuration, tools to run processes and tell
// time, the run directory, progress reporting. Nothing a stage computes for another lives here.
struct PipelineRun {
  PipelineRun(const DeepProfileConfig& config_, ProcessRunner& runner_, const Clock& clock_,
              const ProgressCallback& progress_, const DeepProfilerEnvironment& environment_,
              const std::atomic<bool>& stop_requested_, RunDirectory& directory_,
              std::chrono::steady_clock::time_point started_)
      : config(config_),
        runner(runner_),
        clock(clock_),
        progress(progress_),
        environment(environment_),
        stop_requested(stop_requested_),
        directory(directory_),
        started(started_) {}

  const DeepProfileConfig& config;
  ProcessRunner& runner;
  const Clock& clock;
  const ProgressCallback& progress;
  const DeepProfilerEnvironment& environment;
  const std::atomic<bool>& stop_requested;
  RunDirectory& directory;
  std::chrono::steady_clock::time_point started;

  ResolvedWorkload workload;                    // resolved before the first stage; the same for every stage
  std::vector<GpuStateSnapshot> gpu_snapshots;  // MAIN/gpu_state.json, in capture order
  bool gpu_state_unavailable = false;           // nvidia-smi missing or failing: said once, not asked again
  std::vector<std::string> notes;               // end up in RunSummary::notes
  std::optional<std::string> disk_full;         // a write of the run failed for want of space (its reason)
  // run.on_empty_gate = discover chose this range for selection and the ncu NVTX filter (over run.stage).
  std::optional<std::string> discovered_stage;
  std::string stage_choice;  // why discovered_stage (run.stage = "auto"), said on select's first line
  // The captured window is the stage: run.stage = "auto" found no kind in the workload's window, or the capture
  // holds no NVTX range of the workload's own (none, or only library ranges).
  bool whole_window_selection = false;
  // The capture the run followed instead of nsys.capture_range, because the workload emits no NVTX range of its
  // own: its cudaProfilerStart/Stop window, or the whole run (none). nsys, ncu (--profile-from-start) and the
  // capture record read capture_range(), never the configured gate alone.
  std::optional<NsysCaptureRange> followed_capture_range;
  // nsys options learned from the workload, added to every capture from then on (CaptureRecord).
  std::vector<std::string> learned_nsys_arguments;
  std::string capture_scope;  // why the capture is scoped as it is, when the run decided it (CaptureRecord::scope)
  // The followed window taken out of the discovery capture rather than captured again (CaptureRecord).
  std::optional<CaptureSpan> restricted_window;
  NsysCaptureRange capture_range() const { return followed_capture_range.value_or(config.nsys.capture_range); }
  // Which NVTX ranges are a library's: the built-in rules and run.ignore_ranges (validated when the run started).
  LibraryRanges library_ranges() const;
  // This machine's NVIDIA driver: DeepProfilerEnvironment::nvidia_driver_present when set, else detect_nvidia_driver.
  NvidiaDriver nvidia_driver() const;
  TimelineOptions timeline_options() const;  // the timeline engine's defaults with library_ranges()
  // SQLite exports this run already made (paths relative to MAIN), and how: the tables come from the export
  // before the stage's own export step, which must not run nsys export twice.
  std::map<std::filesystem::path, std::pair<std::filesystem::path, StageResult>> sqlite_exports;  // by export: report
  const std::string& selection_stage() const { return discovered_stage ? *discovered_stage : config.run.stage; }
  std::map<Stage, StageReport> stage_reports;  // of the stages not yet written into run.json (stage_report())

  // request_stop(), or a SIGINT/SIGTERM the host left at its default action (process/signal_fallback.hpp).
  bool stopping() const { return stop_requested.load() || detail::fallback_signal_received() != 0; }
  std::chrono::nanoseconds elapsed() const { return clock.now() - started; }
  // What `stage` has reported so far (created empty); the stage table writes it into run.json when the stage ends.
  StageReport& stage_report(Stage stage) { return stage_reports[stage]; }
  // run.json's record of `stage` as the stage table last wrote it; nullptr when run.json lists no such stage.
  const StageRecord* recorded(Stage stage) const;

  // Progress helpers (also logged to deep-profile.log).
  void say(Stage stage, const std::string& message, bool warning = false);
  void tool_progress(Stage stage, const std::string& message);
  void emit(ProgressEvent event) const;
  // Adds a warning to the stage's report and tells the user.
  void warn(Stage stage, const std::string& message);
  void note(Stage stage, const std::string& message);  // also into RunSummary::notes
  // The same for what concerns the run as a whole rather than one stage (run.json, retention, resuming).
  void say_about_run(const std::string& message, bool warning = false);
  void note_about_run(const std::string& message);
};

// Runs the stages not in `kept` (a resumed run's stages before its resume point, whose outputs `outputs`
// holds), then settles run.json's status: the end of every run, fresh or resumed.
RunSummary finish_run(PipelineRun& run, StageOutputs& outputs, const std::set<Stage>& kept);

// Stages (one file each). They fill their StageReport (command, exit code, artifacts, warnings) and
// return what the later stages read; they read nothing else from one another.
Staged<ProbeOutput> run_probe_stage(PipelineRun& run);
Staged<WorkloadOutput> run_workload_stage(PipelineRun& run);
Staged<NsysOutput> run_nsys_stage(PipelineRun& run, const ProbeOutput& probe, const WorkloadOutput& workload);
Staged<SelectOutput> run_select_stage(PipelineRun& run, const NsysOutput& nsys);
StageResult run_ncu_stage(PipelineRun& run, const NcuInputs& inputs);
Staged<AnalyzeOutput> run_analyze_stage(PipelineRun& run, const NsysOutput& nsys);
StageResult run_report_stage(PipelineRun& run, const AnalyzeOutput& analysis);

// The same stages under a launcher (rank_stages.cpp): every rank runs through `deep-profile rank-exec`
// and writes only under MAIN/ranks/r<k>/; the lowest rank ncu profiles feeds select and analyze.
Staged<WorkloadOutput> run_ranked_workload_stage(PipelineRun& run);
Staged<NsysOutput> run_ranked_nsys_stage(PipelineRun& run, const ProbeOutput& probe, const WorkloadOutput& workload);
StageResult run_ranked_ncu_stage(PipelineRun& run, const NcuInputs& inputs);
Staged<AnalyzeOutput> run_ranked_analyze_stage(PipelineRun& run, const NsysOutput& nsys);

}  // namespace llmprof::detail
