// One DeepProfiler::run(): the context every stage shares (PipelineRun), what each stage hands to the
// later ones (ProbeOutput, WorkloadOutput, ...), and the helpers the stage files (stage_*.cpp) use.
//
// Data flow, as deep_profiler.cpp wires it:
//   probe -> ProbeOutput            (nsys, ncu, low disk space)
//   stage1 -> WorkloadOutput        (why the workload failed, the NVTX ranges it emitted)
//   nsys(probe, stage1) -> NsysOutput  (the stats tables, the gate, a halt of later profiling)
//   select(nsys) -> SelectOutput    (the kernel regex, its launch bound, the selected kernels)
//   ncu(probe, stage1, nsys, select); analyze(nsys) -> AnalyzeOutput; report(analyze)
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llmprof/analysis.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/gpu_state.hpp"
#include "llmprof/kernel_name.hpp"
#include "llmprof/ncu_command.hpp"
#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/ncu_plan.hpp"
#include "llmprof/nsys_command.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/tool_probe.hpp"
#include "pipeline/workload.hpp"

namespace llmprof::detail {

// Why a stage did not succeed; decides the run's outcome (and the CLI's exit code).
enum class StageProblemKind { none, environment, failure, timeout, interrupted };

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
  std::optional<std::string> gate;            // the NVTX range the capture was gated on, when it was
  std::optional<std::string> halt_profiling;  // later profilers must not run (run.on_empty_gate = fail)
  // Set when the timeline holds no CUDA kernel and the machine has no NVIDIA driver: why there is nothing
  // to select (kernel-level stages need a GPU), for the select stage to say.
  std::optional<std::string> no_kernels_without_gpu;
  // The kernel tables of `stats` come from the second, node-traced capture (MAIN/nsys/node/).
  bool kernels_from_node_capture = false;
};

struct SelectOutput {
  std::optional<std::string> kernel_regex;    // ncu --kernel-name, when there is a filter
  std::optional<std::int64_t> launch_bound;   // ncu --launch-count for that filter
  std::vector<std::string> selected_kernels;  // demangled names (empty for a user regex)
  std::optional<NcuPlan> plan;                // ncu.plan = per-kernel: the launches to profile
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

  bool stopping() const { return stop_requested.load(); }
  std::chrono::nanoseconds elapsed() const { return clock.now() - started; }
  StageRecord& record(const std::string& stage) { return directory.stage(stage); }

  // Progress helpers (also logged to deep-profile.log).
  void say(const std::string& stage, const std::string& message, bool warning = false);
  void tool_progress(const std::string& stage, const std::string& message);
  void emit(ProgressEvent event) const;
  // Adds a warning to the stage record and tells the user.
  void warn(const std::string& stage, const std::string& message);
  void note(const std::string& stage, const std::string& message);  // also into RunSummary::notes
};

// Samples of the bare stage-1 runs, by quantity: "wall_s" (the process), and from the workload's
// metrics file when it wrote one, "prefill_s" and "decode_s".
using RepeatSamples = std::map<std::string, std::vector<double>>;
void add_repeat_sample(RepeatSamples& samples, const ProcessOutcome& outcome,
                       const std::filesystem::path& metrics_file);
// Summaries into stage1/repeats.json (schema llmprof.repeats/1) and the stage's messages.
void record_repeats(PipelineRun& run, const RepeatSamples& samples);

// nvidia-smi snapshot `moment` ("before"/"after") of a stage that runs the workload on the GPU (stage1,
// nsys, ncu), into MAIN/gpu_state.json; throttling or another process on the GPU becomes a stage warning.
void record_gpu_state(PipelineRun& run, const std::string& stage, const std::string& moment);

// Runs the stages not in `kept` (a resumed run's stages before its resume point, whose outputs `outputs`
// holds), then settles run.json's status: the end of every run, fresh or resumed.
RunSummary finish_run(PipelineRun& run, StageOutputs& outputs, const std::set<std::string>& kept);

// The files the workload consists of, for run --resume to tell whether it changed: the executable argv[0]
// names (found on `path_variable`, empty: PATH) and every argument that names a regular file (relative ones
// against `working_directory`).
std::vector<FileFingerprint> fingerprint_workload_files(const std::vector<std::string>& argv,
                                                        const std::filesystem::path& working_directory,
                                                        const std::string& path_variable);

// Where the probe looks for nsys and ncu: the configured paths, then PATH and the usual places.
ProbeOptions probe_options(const PipelineRun& run);

// Stages (one file each). They fill their StageRecord (command, exit code, artifacts, warnings) and
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

// Why there is nothing to select: no CUDA kernel in the timeline on a machine without an NVIDIA driver.
std::optional<std::string> no_kernels_to_select(const NsysStats& stats, const NvidiaDriver& driver);

// Pieces of the nsys, ncu and analyze stages that the ranked stages share. Directories are relative to MAIN.
std::optional<StageResult> nsys_stage_precondition(const PipelineRun& run, const ProbeOutput& probe,
                                                   const WorkloadOutput& workload);
std::optional<StageResult> ncu_stage_precondition(const PipelineRun& run, const NcuInputs& inputs);
// `added_arguments` go after nsys.extra_args (the node-traced capture's --cuda-graph-trace=node).
NsysCommand nsys_profile_command(const PipelineRun& run, const NsysInfo& nsys, bool gated,
                                 const std::filesystem::path& output_base,
                                 const std::vector<std::string>& added_arguments = {});
// `nsys stats` of `report` into <directory>/summary_*.csv, parsed into `stats`.
StageResult export_nsys_stats(PipelineRun& run, const NsysInfo& nsys, const std::filesystem::path& report,
                              const std::filesystem::path& directory, NsysStats& stats);
// `nsys export --type sqlite` of `report` into <directory>/profile.sqlite (the timeline engine's input).
StageResult export_nsys_sqlite(PipelineRun& run, const NsysInfo& nsys, const std::filesystem::path& report,
                               const std::filesystem::path& directory);
NcuCommand ncu_profile_command(const PipelineRun& run, const NcuInfo& ncu,
                               const std::optional<std::string>& kernel_regex, std::optional<std::int64_t> launch_count,
                               const std::filesystem::path& output,
                               std::optional<std::int64_t> launch_skip = std::nullopt,
                               std::optional<NcuFilterMode> filter_mode = std::nullopt,
                               bool by_mangled_name = false);

// What one ncu pass profiles: the selection's regex and bound (bounded plan), nothing (unfiltered), one
// kernel a pass missed (follow-up passes), or one pass of the per-kernel plan (per launch configuration).
struct NcuPassFilter {
  std::optional<std::string> kernel_regex;
  std::optional<std::int64_t> launch_count;
  std::optional<std::int64_t> launch_skip;  // unset: ncu.launch_skip
  std::optional<NcuFilterMode> filter_mode;
  bool by_mangled_name = false;         // --kernel-name-base mangled instead of ncu.kernel_name_base
  std::string output_name = "profile";  // ncu/<output_name>.ncu-rep
};

struct NcuAttempt {
  std::optional<StageResult> problem;  // could not run, invalid, interrupted, timed out
  NcuOutputDiagnosis diagnosis;
  std::optional<ProcessOutcome> outcome;
  std::string filters;
  // The stage ended the workload once the pass's planned launches were profiled (ncu_pass_end.cpp): ncu's
  // "The application returned an error code (15)" is gone from the diagnosis and its exit code is no failure.
  std::optional<std::string> workload_ended;
  bool succeeded() const { return outcome && (outcome->succeeded() || (workload_ended && outcome->exited)); }
};

// How far past its estimate the ncu stage may run before it says so (progress line, stage warning).
inline constexpr double kPastEstimateFactor = 2.0;

// Progress of the per-kernel plan across its passes: launches finished and the time to go.
struct NcuPlanProgress {
  std::int64_t planned = 0;
  std::int64_t finished = 0;
  double seconds_per_launch = 0;  // the plan's figure until launches have finished
  std::chrono::steady_clock::time_point started;
  double estimated_seconds = 0;  // the plan's estimate: a line past kPastEstimateFactor times it says so
  std::string finished_launch(std::chrono::steady_clock::time_point now);  // "launch 3 of 40 planned, ETA 22 s"
};

// A pass whose kernels are not all met by its planned launch count ends at this many times that count.
inline constexpr std::int64_t kUnseenKernelBound = 2;

// Ends a pass's workload once the pass has profiled its planned launches (ncu_pass_end.cpp).
struct NcuPassEnd {
  std::size_t pass = 0;                // 0-based, for "pass 1 ended the workload ..."
  std::int64_t planned_launches = 0;   // the pass's launches; 0: never ended early
  std::int64_t profiled_launches = 0;  // "==PROF== Profiling" lines seen so far
  // Function names of the pass's kernels without a progress line yet: with the count alone, configurations
  // the plan did not know (or ncu meeting them in another order) could end the pass before a kernel's turn.
  std::set<std::string> kernels_unseen;
  std::chrono::steady_clock::time_point started;
  std::optional<double> ended_at_s;  // since started, when the request was made
  bool ended_at_bound = false;       // ended at kUnseenKernelBound times the plan, some kernels not met
  std::shared_ptr<DescendantEnding> ending = std::make_shared<DescendantEnding>();
  // Counts a finished launch; requests the workload's end at the pass's last planned one.
  void finished_launch(const std::string& kernel_name, std::chrono::steady_clock::time_point now);
  std::string describe() const;  // "pass 1 ended the workload after its 16 planned launches at 19.6 s"
};
// The pass's end for its attempt: the workload's end recorded (stage record, attempt.workload_ended) and
// ncu's error about the ended application's exit code taken out of the diagnosis.
void settle_ended_workload(PipelineRun& run, const NcuPassEnd& end, NcuAttempt& attempt);
// The end of plan pass `index`: planned_launches 0 (run to the end) when ncu.end_workload_when_planned is off.
NcuPassEnd ncu_pass_end(const PipelineRun& run, const NcuPlanPass& pass, std::size_t index);

NcuAttempt run_ncu_pass(PipelineRun& run, const NcuInfo& ncu, const NcuPassFilter& filter, const std::string& log_name,
                        NcuPlanProgress* plan = nullptr, NcuPassEnd* end = nullptr);
std::optional<StageResult> ncu_driver_skip(const NcuAttempt& attempt, const NcuInputs& inputs);
// Appends the data rows of `extra` to `target` when both have the same header and units rows (same set,
// sections and metrics); false leaves `target` untouched.
bool append_ncu_raw_rows(const std::filesystem::path& target, const std::filesystem::path& extra);
// One bounded pass per selected kernel with no row in raw.csv, merged into it (failures only warn).
void profile_missed_kernels(PipelineRun& run, const NcuInfo& ncu, const SelectOutput& select);
// ncu.plan = per-kernel with a plan and an ncu that has --filter-mode per-launch-config: the whole stage
// by the plan; nullopt (after saying why) when the bounded plan has to run instead, with the planned
// pass in `profiled_nothing` when ncu profiled no kernels (the bounded plan then retries unfiltered).
std::optional<StageResult> run_planned_ncu(PipelineRun& run, const NcuInputs& inputs,
                                           std::optional<NcuAttempt>& profiled_nothing);
// The plan's options from the configuration, the bare run's wall time and a measured per-launch cost.
// `recorded_launches`: kernel launches the nsys capture recorded (nullopt: unknown), for the pass estimate.
NcuPlanOptions ncu_plan_options(const PipelineRun& run, KernelNameBase base,
                                std::optional<std::int64_t> recorded_launches);
StageResult export_ncu_raw_csv(PipelineRun& run, const NcuInfo& ncu, const std::filesystem::path& report,
                               const std::filesystem::path& directory, const std::string& csv_name);
AnalysisOptions analysis_options(const PipelineRun& run, const NsysOutput& nsys);

// The form a selection made from nsys's (demangled) kernel names is written in for ncu.kernel_name_base;
// nullopt for mangled, which no nsys name can be turned into. The one place the config's
// NcuKernelNameBase meets the selection's KernelNameBase.
std::optional<KernelNameBase> selection_name_base(NcuKernelNameBase base);

// Runs one child, records "exit_code" and appends its command to `cmd_file` (relative to MAIN).
struct ToolCall {
  ToolCall(std::string stage_, std::vector<std::string> argv_, std::string shell_command_)
      : stage(std::move(stage_)), argv(std::move(argv_)), shell_command(std::move(shell_command_)) {}
  std::string stage;
  std::vector<std::string> argv;
  std::string shell_command;  // for cmd.txt and run.json
  std::map<std::string, std::string> environment;
  std::filesystem::path log_file;     // relative to MAIN; stdout+stderr
  std::filesystem::path stdout_file;  // relative to MAIN; when set, stdout goes here instead
  std::chrono::milliseconds timeout{0};
  std::function<void(const std::string&)> on_line;  // every output line (stdout and stderr)
  // Lets on_line end the tool's workload (its descendants) while the tool goes on (ProcessSpec).
  std::shared_ptr<DescendantEnding> end_descendants;
  std::chrono::milliseconds descendants_kill_grace{10000};
};
Result<ProcessOutcome> run_tool(PipelineRun& run, const ToolCall& call);
// A profiler's call in stage `stage` (nsys, ncu): the workload's environment, output to `log_file`
// (relative to MAIN), and a timeout of `timeout_s` seconds.
ToolCall profiler_call(const PipelineRun& run, const std::string& stage, std::vector<std::string> argv,
                       std::string shell_command, std::filesystem::path log_file, double timeout_s);
// Records the call in run.json and appends it to `cmd_file`, then runs it. The stage's result when the
// tool could not start, was interrupted or timed out (`what` names it: "nsys profile"); else nullopt,
// with `outcome` set.
std::optional<StageResult> run_profiler_call(PipelineRun& run, const ToolCall& call,
                                             const std::filesystem::path& cmd_file, const std::string& what,
                                             std::optional<ProcessOutcome>& outcome);
// Appends a command line to a cmd.txt (creating it); cmd.txt holds every command the stage ran.
void append_command(PipelineRun& run, const std::filesystem::path& cmd_file, const std::string& command);

// Warns (in the stage record, hence the report) when the workload's output in `log_file` (relative to
// MAIN) shows its own CUPTI client lost to nsys/ncu (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).
void warn_about_cupti_conflict(PipelineRun& run, const std::string& stage, const std::filesystem::path& log_file);
// nsys exit 143 because it ended the workload when the NVTX range closed (capture-range-end stop-shutdown).
bool ended_by_capture_range(const PipelineRun& run, const ProcessOutcome& outcome);

// StageResult for a process that did not succeed: interrupted, timeout or a failed exit.
StageResult outcome_problem(const ProcessOutcome& outcome, const std::string& what, const std::string& log_file);
// The last `count` non-empty lines of a file under MAIN, joined with " | ".
std::string tail_lines(const std::filesystem::path& file, std::size_t count);
std::string read_text(const std::filesystem::path& file);
std::chrono::milliseconds seconds_to_ms(double seconds);
// Warns when a report file is larger than run.report_size_cap_gb.
void check_report_size(PipelineRun& run, const std::string& stage, const std::filesystem::path& report);
// The NVTX domain and ranges of a stage-1 metrics file, read with load_workload_metrics (strict).
Result<EmittedRanges> read_emitted_ranges(const std::filesystem::path& metrics_file);
// The empty-gate diagnosis: compares the gate with the emitted ranges and gives the exact fix.
std::string diagnose_empty_gate(const std::string& gate, const std::optional<EmittedRanges>& emitted,
                                const std::string& preferred_stage);

}  // namespace llmprof::detail
