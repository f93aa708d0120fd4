// DeepProfiler::run(): creates MAIN, runs the stages in order, records each one in run.json.
#include "llmprof/deep_profiler.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/enum_table.hpp"
#include "llmprof/logging.hpp"
#include "pipeline/artifact_checks.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/disk_space.hpp"
#include "pipeline/stage_records.hpp"
#include "process/signal_fallback.hpp"

namespace llmprof {
namespace fs = std::filesystem;
using detail::PipelineRun;
using detail::StageProblemKind;
using detail::StageResult;
using detail::record_outputs;
using detail::record_stage_report;
using detail::record_unlisted_files;
using detail::write_manifest_or_warn;

namespace {

using detail::StageOutputs;

template <class Output>
StageResult keep(detail::Staged<Output> staged, Output& into) {
  into = std::move(staged.output);
  return std::move(staged.result);
}

// The stages in order; each entry wires the outputs of earlier stages into its stage's inputs.
struct StageEntry {
  Stage stage;
  const char* description;
  StageResult (*run)(PipelineRun& run, StageOutputs& outputs);
};

const std::vector<StageEntry>& stage_table() {
  using detail::run_analyze_stage, detail::run_ncu_stage, detail::run_nsys_stage, detail::run_probe_stage,
      detail::run_report_stage, detail::run_select_stage, detail::run_workload_stage;
  // Under a launcher (environment.rank_launch) the workload stages and analyze run rank by rank.
  using detail::run_ranked_analyze_stage, detail::run_ranked_ncu_stage, detail::run_ranked_nsys_stage,
      detail::run_ranked_workload_stage;
  static const std::vector<StageEntry> table = {
      {Stage::probe, "finding nsys and ncu, recording the environment",
       [](PipelineRun& run, StageOutputs& out) { return keep(run_probe_stage(run), out.probe); }},
      {Stage::workload, "running the workload bare",
       [](PipelineRun& run, StageOutputs& out) {
         return keep(run.environment.rank_launch ? run_ranked_workload_stage(run) : run_workload_stage(run),
                     out.workload);
       }},
      {Stage::nsys, "Nsight Systems timeline",
       [](PipelineRun& run, StageOutputs& out) {
         return keep(run.environment.rank_launch ? run_ranked_nsys_stage(run, out.probe, out.workload)
                                                 : run_nsys_stage(run, out.probe, out.workload),
                     out.nsys);
       }},
      {Stage::select, "choosing the kernels that matter",
       [](PipelineRun& run, StageOutputs& out) { return keep(run_select_stage(run, out.nsys), out.select); }},
      {Stage::ncu, "Nsight Compute on the selected kernels",
       [](PipelineRun& run, StageOutputs& out) {
         const detail::NcuInputs inputs{out.probe, out.workload, out.nsys, out.select};
         return run.environment.rank_launch ? run_ranked_ncu_stage(run, inputs) : run_ncu_stage(run, inputs);
       }},
      {Stage::analyze, "roofline and MFU analysis",
       [](PipelineRun& run, StageOutputs& out) {
         return keep(
             run.environment.rank_launch ? run_ranked_analyze_stage(run, out.nsys) : run_analyze_stage(run, out.nsys),
             out.analysis);
       }},
      {Stage::report, "writing report.md and report.html",
       [](PipelineRun& run, StageOutputs& out) { return run_report_stage(run, out.analysis); }},
  };
  return table;
}

// What each stage problem means for the run: its rank, for finding the worst of the stages' problems, and the run
// status it gives, one row per StageProblemKind in declaration order.
struct ProblemMeaning {
  int severity;
  RunStatus status;  // a failure's, incomplete, is `failed` where the bare workload run failed (run_status_for)
};
constexpr detail::EnumRow<StageProblemKind, ProblemMeaning> kProblemMeanings[] = {
    {StageProblemKind::none, {0, RunStatus::ok}},
    {StageProblemKind::no_hardware, {1, RunStatus::hardware_limited}},
    {StageProblemKind::environment, {2, RunStatus::environment}},
    {StageProblemKind::failure, {3, RunStatus::incomplete}},
    // The run never had a workload: that, not what followed, is the news.
    {StageProblemKind::missing_input, {4, RunStatus::bad_input}},
    {StageProblemKind::timeout, {5, RunStatus::timeout}},
    {StageProblemKind::interrupted, {6, RunStatus::interrupted}}};
static_assert(detail::rows_in_enum_order(kProblemMeanings));

ProblemMeaning meaning(StageProblemKind kind) {
  return detail::enum_value(kProblemMeanings, kind, ProblemMeaning{0, RunStatus::incomplete});
}

int severity(StageProblemKind kind) { return meaning(kind).severity; }

// The one mapping from the stages' problems to the run's status (summary, RunOutcome and run.json alike):
// the worst problem decides, and a failure of the bare workload run is `failed` (nothing was measured).
RunStatus run_status_for(StageProblemKind worst, const std::map<Stage, StageProblemKind>& problems) {
  if (worst == StageProblemKind::failure) {
    const auto workload = problems.find(Stage::workload);
    const bool workload_failed = workload != problems.end() && workload->second == StageProblemKind::failure;
    if (workload_failed) return RunStatus::failed;
  }
  return meaning(worst).status;
}

// Room kept for run.json's last rewrites when a stage fills the disk (run.json is a few KB).
constexpr std::uint64_t kManifestReserveBytes = 1 << 20;
// Below this, a failed write or a failed child is taken to be the full disk's doing.
constexpr std::uint64_t kFullDiskBytes = 256 << 10;

// A child writing to a full disk usually dies with a generic exit code and an empty stderr.log
// (stderr is on the same disk), so a failure is checked against the free space of MAIN's file
// system and named as what it is: the machine's problem (exit 3), not the workload's.
StageResult name_full_disk(PipelineRun& run, StageOutputs& outputs, StageResult result) {
  if (result.status != StageStatus::failed && !run.disk_full) return result;
  auto available = detail::available_disk_bytes(run.directory.path());
  if (!available || available.value() >= kFullDiskBytes) return result;
  const std::string why = "no space left on the file system of " + run.directory.path().string() + " (" +
                          std::to_string(available.value()) + " bytes free)";
  outputs.probe.low_disk_space = why + "; free disk space or choose another run.runs_root";  // the profilers skip
  run.disk_full = why;
  if (result.status == StageStatus::failed || result.status == StageStatus::ok) {
    result.status = StageStatus::failed;
    result.reason =
        why + (result.reason.empty() ? "" : "; " + result.reason) + "; free disk space or choose another run.runs_root";
    result.problem = StageProblemKind::environment;
  }
  return result;
}

void start_stage(PipelineRun& run, const StageEntry& entry) {
  StageRecord& record = run.directory.stage(entry.stage);
  record.status = StageStatus::running;
  record.started_utc = format_utc_iso8601(run.clock.wall_now());
  write_manifest_or_warn(run);
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::stage_started;
  event.stage = to_string(entry.stage);
  event.message = entry.description;
  run.emit(event);
  log_info(event.stage, std::string("stage started: ") + entry.description);
}

void finish_stage(PipelineRun& run, Stage stage, const StageResult& result,
                  std::chrono::steady_clock::time_point began) {
  record_stage_report(run, stage);  // no-op when the stage table recorded it already
  StageRecord& record = run.directory.stage(stage);
  record.status = result.status;
  record.reason = result.reason;
  record.duration_s = std::chrono::duration<double>(run.clock.now() - began).count();
  write_manifest_or_warn(run);
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::stage_finished;
  event.stage = to_string(stage);
  event.status = result.status;
  event.message = result.reason;
  run.emit(event);
  const std::string line =
      std::string("stage ") + to_string(result.status) + (result.reason.empty() ? "" : ": " + result.reason);
  if (result.status == StageStatus::ok || result.status == StageStatus::skipped)
    log_info(event.stage, line);
  else
    log_warning(event.stage, line);
}

}  // namespace

namespace detail {

// Runs every stage, except those in `kept` (a resumed run's stages before its resume point, whose outputs
// `outputs` already holds); returns the worst problem seen.
StageProblemKind run_stages(PipelineRun& run, std::map<Stage, StageProblemKind>& problems, StageOutputs& outputs,
                            const std::set<Stage>& kept) {
  StageProblemKind worst = StageProblemKind::none;
  for (const auto& entry : stage_table()) run.directory.stage(entry.stage);  // run.json lists every stage up front
  for (const auto& entry : stage_table()) {
    if (kept.count(entry.stage)) {
      problems[entry.stage] = StageProblemKind::none;
      continue;
    }
    const auto began = run.clock.now();
    StageResult result;
    if (run.stopping()) {
      run.directory.stage(entry.stage).started_utc = format_utc_iso8601(run.clock.wall_now());
      result = StageResult::skipped("not run: the run was interrupted before this stage");
    } else {
      // The report renders run.json's status: give it the outcome of the stages before it.
      if (entry.stage == Stage::report) run.directory.manifest().status = run_status_for(worst, problems);
      start_stage(run, entry);
      detail::record_gpu_state(run, entry.stage, "before");
      result = entry.run(run, outputs);
      record_stage_report(run, entry.stage);
      record_outputs(run, entry.stage, outputs);
      result = detail::check_artifacts(run.directory.path(), run.directory.stage(entry.stage), result);
      if (result.status != StageStatus::skipped) detail::record_gpu_state(run, entry.stage, "after");
      // A stop that arrived while this stage ran interrupts it, whatever its child made of the signal.
      if (run.stopping() && (result.status == StageStatus::ok || result.status == StageStatus::failed)) {
        result = StageResult::interrupted("stopped by SIGINT/SIGTERM" +
                                          (result.reason.empty() ? "" : " (" + result.reason + ")"));
      }
      result = name_full_disk(run, outputs, result);
      record_unlisted_files(run, entry.stage);
    }
    problems[entry.stage] = result.problem;
    if (severity(result.problem) > severity(worst)) worst = result.problem;
    finish_stage(run, entry.stage, result, began);
  }
  return worst;
}

}  // namespace detail

namespace {

Result<void> write_provenance(RunDirectory& directory, const DeepProfileConfig& config,
                              const detail::ResolvedWorkload& workload) {
  if (auto written = directory.write_text(RunLayout::resolved_config(), config_to_toml(config)); !written)
    return written.error();
  WorkloadRecord record;
  record.argv = workload.argv;
  record.working_directory = workload.working_directory;
  record.environment = workload.environment;
  record.files = detail::fingerprint_workload_files(workload.argv, workload.working_directory, {});
  return directory.write_inputs(record);
}

// Logged once deep-profile.log exists, and noted for the console: deleting a run is never silent.
void report_retention(PipelineRun& run) {
  const auto& retention = run.directory.retention();
  if (!retention) return;
  if (!retention->has_value()) {
    run.note_about_run("retention did not complete: " + retention->error().describe());
    return;
  }
  for (const auto& removed : retention->value().removed)
    run.note_about_run("retention removed the old run " + removed.string());
  for (const auto& kept : retention->value().kept_unfinished) {
    run.note_about_run("retention kept " + kept.string() + ": that run is not finished (its run.lock is held)");
  }
  for (const auto& problem : retention->value().problems) run.note_about_run("retention: " + problem);
}

}  // namespace

const std::vector<std::string>& deep_profile_stage_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    for (const Stage stage : kStages) result.emplace_back(to_string(stage));
    return result;
  }();
  return names;
}

// One row per RunStatus in declaration order.
constexpr detail::EnumRow<RunStatus, ExitCode> kRunExits[] = {
    // Not an outcome of a returned run; counted as not finished.
    {RunStatus::running, exit_incomplete},
    {RunStatus::ok, exit_ok},
    // Everything the machine allows ran (the quick start on a GPU-less machine).
    {RunStatus::hardware_limited, exit_ok},
    {RunStatus::incomplete, exit_incomplete},
    {RunStatus::failed, exit_incomplete},
    {RunStatus::environment, exit_not_ready},
    {RunStatus::timeout, exit_timeout},
    {RunStatus::interrupted, exit_interrupted},
    {RunStatus::bad_input, exit_bad_input}};
static_assert(detail::rows_in_enum_order(kRunExits));

ExitCode exit_code_for(RunOutcome outcome) noexcept { return detail::enum_value(kRunExits, outcome, exit_incomplete); }

DeepProfiler::DeepProfiler(DeepProfileConfig config, ProcessRunner& runner, const Clock& clock,
                           ProgressCallback progress, DeepProfilerEnvironment environment)
    : config_(std::move(config)),
      runner_(runner),
      clock_(clock),
      progress_(std::move(progress)),
      environment_(std::move(environment)) {}

DeepProfiler::~DeepProfiler() = default;

void DeepProfiler::request_stop() noexcept {
  stop_requested_.store(true);
  runner_.request_stop();
}

Result<RunSummary> DeepProfiler::run() {
  // Outermost: a SIGINT/SIGTERM the host left at its default action stops this run, which then closes run.json;
  // the signal ends the host only when this scope (the last one) ends, after the manifest is written.
  const detail::SignalFallbackScope signals;
  const auto started = clock_.now();
  // A configuration built in code gets the checks load_config runs on files, before anything is written.
  if (auto valid = validate_config(config_); !valid) return valid.error();
  auto workload = detail::resolve_workload(config_, environment_);
  if (!workload) return workload.error();
  RunDirectoryOptions options;
  options.runs_root = config_.run.runs_root;
  options.run_id = config_.run.run_id;
  if (config_.run.keep_newest_runs > 0) options.keep_newest_runs = config_.run.keep_newest_runs;
  auto directory = RunDirectory::create(options, clock_);
  if (!directory) return directory.error();
  (void)directory->reserve_space(kManifestReserveBytes);  // best effort: without it, nothing changes
  if (auto written = write_provenance(directory.value(), config_, workload.value()); !written) return written.error();
  // This run's lines only (llmprof/logging.hpp): another DeepProfiler on another thread keeps its own log.
  const auto run_log = detail::open_run_log(environment_, directory->layout().resolve(RunLayout::log()));

  PipelineRun run{config_, runner_, clock_, progress_, environment_, stop_requested_, directory.value(), started};
  run.workload = std::move(workload.value());
  // In the workload stage's warnings: run.json and the report keep them, and the console shows them.
  for (const auto& setting : run.workload.ineffective_settings) run.warn(Stage::workload, setting);
  log_info("run", "run directory " + directory->path().string());
  report_retention(run);
  StageOutputs outputs;
  RunSummary summary = detail::finish_run(run, outputs, {});
  return summary;
}

namespace detail {

RunSummary finish_run(PipelineRun& run, StageOutputs& outputs, const std::set<Stage>& kept) {
  std::map<Stage, StageProblemKind> problems;
  StageProblemKind worst = run_stages(run, problems, outputs, kept);
  // A full disk explains whatever else failed: exit 3 (machine not ready), as the README says.
  if (run.disk_full && (worst == StageProblemKind::none || worst == StageProblemKind::no_hardware ||
                        worst == StageProblemKind::failure))
    worst = StageProblemKind::environment;

  RunSummary summary;
  summary.main_directory = run.directory.path();
  summary.outcome = run_status_for(worst, problems);
  summary.all_requested_succeeded = summary.outcome == RunOutcome::ok;
  for (const auto& [stage, problem] : problems) {
    if (problem == StageProblemKind::no_hardware) summary.skipped_for_hardware.emplace_back(to_string(stage));
  }
  run.directory.manifest().status = summary.outcome;
  write_manifest_or_warn(run);
  run.directory.release_space_reserve();
  summary.stages = run.directory.manifest().stages;
  summary.total_bytes = run.directory.manifest().total_bytes;
  summary.notes = run.notes;
  log_info("run", std::string("run finished: ") + to_string(run.directory.manifest().status));
  return summary;
}

}  // namespace detail

}  // namespace llmprof
