// stage1, nsys, ncu and analyze under a launcher: each workload stage is one launcher call
// (rank_stage_launch.cpp); the reports each profiled rank left are post-processed here, rank by rank,
// in that rank's own directory (MAIN/ranks/r<k>/). The primary rank (the lowest one ncu profiles)
// feeds select and the single-rank analysis; every rank feeds the cross-rank view.
#include <algorithm>

#include "core/duration.hpp"
#include "core/file_text.hpp"
#include "core/format.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/cross_rank.hpp"
#include "llmprof/kernel_name.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/nsys_report_file.hpp"
#include "llmprof/nsys_trace.hpp"
#include "llmprof/rank_analysis.hpp"
#include "pipeline/nsys_capture.hpp"
#include "pipeline/rank_stage_launch.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

const RankLaunch& launch_of(const PipelineRun& run) { return *run.environment.rank_launch; }

// Ranks nsys profiles: --ranks, else every rank. Ranks ncu profiles: --ranks, else rank 0.
std::optional<std::vector<int>> nsys_ranks(const PipelineRun& run) { return launch_of(run).ranks; }
std::vector<int> ncu_ranks(const PipelineRun& run) { return launch_of(run).ranks.value_or(std::vector<int>{0}); }

std::string rank_path(int rank, Stage stage, const std::string& file) {
  return (RunLayout::rank_stage_directory(rank, stage) / file).string();
}

// MAIN/ranks/r@RANK@/<stage>/<file>, absolute: rank-exec replaces the token with its rank.
std::string absolute_rank_path(const PipelineRun& run, Stage stage, const std::string& file) {
  return (fs::absolute(run.directory.path()) / RunLayout::rank_stage_directory(kRankToken, stage) / file).string();
}

RankPlan base_plan(const PipelineRun& run, Stage stage, double timeout_s, const std::string& timeout_key) {
  RankPlan plan;
  plan.stage = stage;
  plan.environment = run.workload.environment;
  plan.environment["LLMPROF_METRICS_FILE"] = absolute_rank_path(run, stage, "metrics.json");
  plan.working_directory = run.workload.working_directory;
  plan.timeout_s = timeout_s;
  plan.timeout_key = timeout_key;
  if (const auto grace = survivor_grace(run)) plan.survivor_grace_s = std::chrono::duration<double>(*grace).count();
  return plan;
}

// The profiler's argv up to the workload: the builders append the workload, which rank-exec gets as `-- CMD`.
std::vector<std::string> profiler_prefix(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& workload) {
  if (argv.size() < workload.size() || !std::equal(workload.rbegin(), workload.rend(), argv.rbegin())) {
    throw std::logic_error("a profiler command does not end with the workload argv");
  }
  return {argv.begin(), argv.end() - static_cast<std::ptrdiff_t>(workload.size())};
}

const RankStatus* status_of(const LaunchedRanks& launched, int rank) {
  for (const auto& status : launched.statuses) {
    if (status.rank == rank) return &status;
  }
  return nullptr;
}

// Ranks that really ran the profiler (a rank outside the world never reports).
std::vector<int> profiled_ranks(const LaunchedRanks& launched) {
  std::vector<int> ranks;
  for (const auto& status : launched.statuses) {
    if (status.role != kBareRole) ranks.push_back(status.rank);
  }
  return ranks;
}

// The rank whose reports feed select and the single-rank analysis: the lowest one ncu profiles.
int primary_rank_of(const PipelineRun& run) { return ncu_ranks(run).front(); }

// The nsys tables select works on: collective kernels removed, so the ncu filter can never name one.
NsysStats without_collectives(NsysStats stats) {
  if (stats.kernels) std::erase_if(*stats.kernels, [](const auto& row) { return is_collective_kernel(row.name); });
  if (stats.range_kernels)
    std::erase_if(*stats.range_kernels, [](const auto& row) { return is_collective_kernel(row.kernel_name); });
  return stats;
}

// Per-rank captures sample where rank-exec decides (pipeline/gpu_metrics_claim.hpp): the sampling words the
// command builder wrote leave the shared prefix for the plan, the devices word to be chosen per rank.
void move_sampling_words(const GpuMetricsSupport& support, RankPlan& plan) {
  auto& argv = plan.profiler_argv;
  const std::string devices = support.devices_option + "=";
  const auto first = std::find_if(argv.begin(), argv.end(), [&](const std::string& word) {
    return !support.devices_option.empty() && word.rfind(devices, 0) == 0;
  });
  if (first == argv.end()) return;
  plan.gpu_metrics_option = support.devices_option;
  plan.gpu_metrics_listed = support.buses;
  plan.gpu_metrics_cuda_visible = support.cuda_visible;
  auto last = first + 1;
  while (last != argv.end() && last->rfind("--gpu-metrics-", 0) == 0) plan.gpu_metrics_words.push_back(*last++);
  argv.erase(first, last);
}

// The two trace tables of the cross-rank view, in their own `nsys stats` call: a version of nsys
// without them (before 2023.1 they had other names) costs only those figures, never the stage.
void export_traces(PipelineRun& run, const NsysInfo& nsys, const fs::path& report, const fs::path& directory) {
  const fs::path prefix = fs::absolute(run.directory.path() / directory / "summary");
  const NsysCommand command =
      NsysCommand::stats(nsys.path, report, {kNsysNvtxTraceReport, kNsysGpuTraceReport}, prefix);
  ToolCall call{Stage::nsys, command.argv()};
  call.log_file = directory / "traces.log";
  call.timeout = seconds_to_milliseconds(run.config.nsys.postprocess_timeout_s);
  append_command(run, directory / "cmd.txt", call);
  auto outcome = run_tool(run, call);
  if (!outcome || !outcome->succeeded()) {
    run.warn(Stage::nsys, "the trace tables for the cross-rank view could not be exported (see " +
                              call.log_file.string() + "); straggler, skew and overlap will not be computed");
  }
}

// Every profiled rank captured with the configured gate (a rank whose gate never opened fails the stage, so
// the gate opened wherever there is a report); the windows are the primary rank's.
CaptureRecord ranked_capture_record(const PipelineRun& run) {
  const NsysConfig& config = run.config.nsys;
  CaptureRecord record;
  record.gate = capture_gate_kind(config.capture_range);
  if (record.gate == CaptureGateKind::nvtx) record.range = config.nvtx_capture;
  record.gate_opened = record.gate != CaptureGateKind::none;
  record.graph_trace = requested_graph_trace(config.extra_args) == "node" ? "node" : "graph";
  return record;
}

// nsys stats of one rank's report; a StageResult naming the rank when the report is missing or unusable.
std::optional<StageResult> post_process_nsys_rank(PipelineRun& run, const NsysInfo& nsys, const RankStatus& status,
                                                  const std::vector<std::string>& profile_argv, NsysOutput& output) {
  const fs::path directory = RunLayout::rank_stage_directory(status.rank, Stage::nsys);
  ReportResolveRequest request;
  request.output_base = fs::absolute(run.directory.path() / directory / "profile");
  request.profiler_output = read_text(run.directory.path() / RunLayout::rank_stage_output(status.rank, Stage::nsys));
  ProcessOutcome outcome;
  outcome.exited = status.exit_code.has_value();
  outcome.exit_code = status.exit_code.value_or(-1);
  request.profile_outcome = outcome;
  request.import_timeout = seconds_to_milliseconds(run.config.nsys.postprocess_timeout_s);
  for (const auto& word : profile_argv) request.profile_argv.push_back(substitute_rank(word, status.rank));
  auto report = resolve_report(run.runner, nsys, request);
  if (!report)
    return StageResult::failed("rank " + std::to_string(status.rank) +
                               " left no nsys report: " + report.error().describe());
  run.stage_report(Stage::nsys)
      .artifacts.push_back(fs::relative(report->report, fs::absolute(run.directory.path())).string());
  NsysStats stats;
  if (auto exported = export_nsys_stats(run, nsys, report->report, directory, stats);
      exported.status != StageStatus::ok) {
    exported.reason = "rank " + std::to_string(status.rank) + ": " + exported.reason;
    return exported;
  }
  if (status.rank == primary_rank_of(run)) {
    output.stats = without_collectives(std::move(stats));
    output.capture->windows.push_back({fs::relative(report->report, fs::absolute(run.directory.path())).string()});
  }
  export_traces(run, nsys, report->report, directory);
  // The timeline engine's input: the cross-rank view reads each rank's steps from it with any nsys
  // version, and measures them on the GPU (the `nsys stats` trace tables exist only from 2023.1).
  if (run.config.nsys.export_sqlite) {
    if (auto exported = export_nsys_sqlite(run, nsys, report->report, directory); exported.status != StageStatus::ok)
      run.warn(Stage::nsys, "rank " + std::to_string(status.rank) + ": " + exported.reason +
                                "; the cross-rank view falls back to the nsys stats tables");
  }
  return std::nullopt;
}

// analysis/ranks.csv and ranks.md from every rank's files; warnings only, the single-rank analysis
// stands on its own.
void write_cross_rank(PipelineRun& run) {
  std::vector<std::string> warnings;
  const CrossRankAnalysis analysis = analyze_ranks_of_run(run.directory.path(), run.directory.manifest(), warnings);
  for (const auto& warning : warnings) run.warn(Stage::analyze, warning);
  if (auto written = write_cross_rank_files(analysis, run.directory.path()); !written) {
    run.warn(Stage::analyze, written.error().describe());
    return;
  }
  StageReport& reported = run.stage_report(Stage::analyze);
  reported.artifacts.push_back(RunLayout::analysis_ranks_csv().string());
  reported.artifacts.push_back(RunLayout::analysis_ranks_markdown().string());
  if (analysis.straggler) {
    run.say(Stage::analyze, "straggler: rank " + std::to_string(*analysis.straggler) + " (steps start " +
                                detail::format_number(*analysis.straggler_lag_ms) +
                                " ms after the earliest rank's, after alignment)");
  } else if (analysis.latest_rank) {
    run.say(Stage::analyze, "no straggler: the latest rank's steps start " +
                                detail::format_number(*analysis.latest_lag_ms) + " ms after the earliest's, under " +
                                detail::format_fraction_percent(kStragglerStepShare) + " of a step");
  }
}

}  // namespace

Staged<WorkloadOutput> run_ranked_workload_stage(PipelineRun& run) {
  if (!run.config.run.enable_stage1) return StageResult::skipped("disabled (run.enable_stage1 = false)");
  const RankPlan plan = base_plan(run, Stage::workload, run.config.workload.timeout_s, "workload.timeout_s");
  LaunchedRanks launched = launch_ranks(run, plan, std::nullopt);
  WorkloadOutput output;
  if (launched.problem) {
    output.failure = "the workload failed in stage1 (" + launched.problem->reason + ")";
    return {*launched.problem, std::move(output)};
  }
  run.say(Stage::workload, std::to_string(launched.world_size) + " ranks ran the workload bare");
  const fs::path metrics = run.directory.path() / rank_path(primary_rank_of(run), Stage::workload, "metrics.json");
  if (auto ranges = read_emitted_ranges(metrics); ranges) output.emitted_ranges = ranges.value();
  for (const auto& status : launched.statuses) {
    const std::string file = rank_path(status.rank, Stage::workload, "metrics.json");
    if (fs::exists(run.directory.path() / file)) run.stage_report(Stage::workload).artifacts.push_back(file);
  }
  return {StageResult::ok(), std::move(output)};
}

Staged<NsysOutput> run_ranked_nsys_stage(PipelineRun& run, const ProbeOutput& probe, const WorkloadOutput& workload) {
  if (auto skip = nsys_stage_precondition(run, probe, workload)) return *skip;
  const NsysCommand command =
      nsys_profile_command(run, probe.nsys, true, absolute_rank_path(run, Stage::nsys, "profile"));
  std::vector<std::string> warnings;
  if (auto valid = command.validate(probe.nsys, &warnings); !valid)
    return StageResult::failed("invalid nsys options: " + valid.error().describe());
  for (const auto& warning : warnings) run.warn(Stage::nsys, warning);
  RankPlan plan = base_plan(run, Stage::nsys, run.config.nsys.timeout_s, "nsys.timeout_s");
  plan.role = to_string(Stage::nsys);
  plan.profiler_argv = profiler_prefix(command.argv(), run.workload.argv);
  move_sampling_words(probe.nsys.gpu_metrics, plan);
  if (!plan.gpu_metrics_option.empty()) {
    run.say(Stage::nsys, "GPU-metrics sampling per rank (" + detail::join(plan.gpu_metrics_words, " ") +
                             "), one nsys per GPU: each rank samples the GPU it sees alone, or the one nsys lists "
                             "under its local rank (claims in ranks/gpu-metrics/)");
    // Claims of an earlier attempt of this stage would keep its ranks from sampling.
    const fs::path claims = run.directory.path() / RunLayout::ranks_directory() / "gpu-metrics";
    std::error_code error;
    fs::remove_all(claims, error);
    if (error)
      run.warn(Stage::nsys, "could not remove the earlier GPU-metrics claims (" + claims.string() + ": " +
                                error.message() + "): ranks whose GPU they name will not sample");
  }
  LaunchedRanks launched = launch_ranks(run, plan, nsys_ranks(run));
  if (launched.problem) return *launched.problem;
  NsysOutput output;
  output.capture = ranked_capture_record(run);
  for (int rank : profiled_ranks(launched)) {
    if (run.stopping()) return StageResult::interrupted("interrupted while post-processing the nsys reports");
    if (auto problem = post_process_nsys_rank(run, probe.nsys, *status_of(launched, rank), command.argv(), output)) {
      return {*problem, std::move(output)};
    }
  }
  run.say(Stage::nsys, std::to_string(profiled_ranks(launched).size()) + " of " + std::to_string(launched.world_size) +
                           " ranks profiled");
  if (!plan.gpu_metrics_option.empty()) {
    for (const auto& status : launched.statuses)
      if (status.role != kBareRole)
        run.say(Stage::nsys, "rank " + std::to_string(status.rank) + " (" + status.host + "): " +
                                 (status.gpu_metrics_note.empty() ? "no GPU-metrics decision recorded" : status.gpu_metrics_note));
  }
  return {StageResult::ok(), std::move(output)};
}

StageResult run_ranked_ncu_stage(PipelineRun& run, const NcuInputs& inputs) {
  if (auto skip = ncu_stage_precondition(run, inputs)) return *skip;
  run.stage_report(Stage::ncu).ncu_set = run.config.ncu.set;  // run.json: which metrics fed the figures
  const int world = world_size_of_run(run.directory.manifest());
  const std::optional<std::string>& kernel_regex = inputs.select.kernel_regex;
  if (!kernel_regex && world > 1) {
    return StageResult::skipped(
        "no kernel selection (see the select stage): an unfiltered ncu would replay NCCL collectives, which "
        "wait for their peers and hang; fix the nsys stage or set ncu.kernel_regex");
  }
  if (world > 1) {
    const std::vector<int> profiled = ncu_ranks(run);
    run.warn(Stage::ncu,
             std::string(profiled.size() == 1 ? "rank " : "ranks ") + format_rank_list(profiled) +
                 (profiled.size() == 1 ? " takes" : " take") + " part in collectives with " + std::to_string(world) +
                 " ranks: ncu replays one kernel at a time, so collective (NCCL) kernels are kept out of the "
                 "kernel filter and "
                 "each rank's ncu is bounded by ncu.timeout_s=" +
                 std::to_string(static_cast<int>(run.config.ncu.timeout_s)) + "s");
    if (!run.config.ncu.kernel_regex.empty())
      run.warn(Stage::ncu, "ncu.kernel_regex is used as given: make sure it matches no NCCL kernel");
  }
  const NcuInfo& ncu = inputs.probe.ncu;
  const NcuCommand command = ncu_profile_command(run, ncu, kernel_regex, inputs.select.launch_bound,
                                                 absolute_rank_path(run, Stage::ncu, "profile"));
  if (auto valid = command.validate(ncu); !valid)
    return StageResult::failed("invalid ncu options: " + valid.error().describe());
  RankPlan plan = base_plan(run, Stage::ncu, run.config.ncu.timeout_s, "ncu.timeout_s");
  plan.role = to_string(Stage::ncu);
  plan.profiler_argv = profiler_prefix(command.argv(), run.workload.argv);
  LaunchedRanks launched = launch_ranks(run, plan, ncu_ranks(run));
  if (launched.problem) return *launched.problem;
  for (int rank : profiled_ranks(launched)) {
    const fs::path directory = RunLayout::rank_stage_directory(rank, Stage::ncu);
    const NcuOutputDiagnosis diagnosis =
        diagnose_ncu_output(read_text(run.directory.path() / RunLayout::rank_stage_output(rank, Stage::ncu)));
    if (auto error = ncu_output_error(diagnosis, kernel_regex.value_or(""))) {
      return StageResult::failed("rank " + std::to_string(rank) + ": " + error->describe());
    }
    const fs::path report = run.directory.path() / directory / "profile.ncu-rep";
    if (!fs::exists(report)) {
      return StageResult::failed("rank " + std::to_string(rank) + " left no ncu report (" +
                                 (directory / "profile.ncu-rep").string() + "); see " +
                                 RunLayout::rank_stage_output(rank, Stage::ncu).string());
    }
    run.stage_report(Stage::ncu).artifacts.push_back((directory / "profile.ncu-rep").string());
    if (auto exported = export_ncu_raw_csv(run, ncu, fs::absolute(report), directory, "raw.csv");
        exported.status != StageStatus::ok) {
      exported.reason = "rank " + std::to_string(rank) + ": " + exported.reason;
      return exported;
    }
  }
  return StageResult::ok();
}

Staged<AnalyzeOutput> run_ranked_analyze_stage(PipelineRun& run, const NsysOutput& nsys) {
  if (!run.config.run.enable_analyze) return StageResult::skipped("disabled (run.enable_analyze = false)");
  write_cross_rank(run);
  const int primary = primary_rank_of(run);
  AnalysisOptions options = analysis_options(run, nsys);
  std::vector<std::string> already_warned;  // the cross-rank view read the same captures and said so
  options.attributed_samples =
      attributed_samples_of_rank(run.directory.path(), run.directory.manifest(), primary, already_warned);
  auto report = analyze_run_directory(run.directory.path() / RunLayout::rank_directory(primary), options);
  if (!report)
    return StageResult::skipped("nothing to analyze on rank " + std::to_string(primary) + ": " +
                                report.error().describe());
  if (auto written = write_analysis(report.value(), run.directory.analysis_dir()); !written) {
    return StageResult::failed("could not write the analysis: " + written.error().describe());
  }
  store_verdict(run);
  StageReport& record = run.stage_report(Stage::analyze);
  for (const auto& file : {RunLayout::analysis_kernels(), RunLayout::analysis_stages(), RunLayout::analysis_report()})
    record.artifacts.push_back(file.string());
  record.warnings.push_back("single-rank figures are rank " + std::to_string(primary) + "'s");
  for (const auto& warning : report->warnings) record.warnings.push_back(warning);
  return {StageResult::ok(), AnalyzeOutput{true}};
}

}  // namespace llmprof::detail
