// Stage "nsys": the timeline under Nsight Systems (gated on an NVTX range by default), the report resolved
// (a .qdstrm imported when needed), the empty gate followed up (stage_nsys_gate.cpp), the graph node pass, and the
// exports of the report (`nsys stats` CSVs, the optional SQLite file; nsys_capture.cpp runs them).
#include <algorithm>

#include "core/duration.hpp"
#include "core/file_text.hpp"
#include "llmprof/capture_record.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/nsys_command.hpp"
#include "llmprof/nsys_report_file.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/step_tokens.hpp"
#include "llmprof/tool_probe.hpp"
#include "llmprof/shell_quote.hpp"
#include "llmprof/timeline.hpp"
#include "pipeline/capture_windows.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/nsys_capture.hpp"
#include "pipeline/nsys_stage_capture.hpp"
#include "pipeline/stage_choice.hpp"
#include "pipeline/tool_call.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::nsys;

// Lines of nsys's own progress worth showing (not the workload's output).
bool is_nsys_progress(const std::string& line) {
  for (const char* prefix :
       {"Collecting data", "Generating", "Processing", "Capture range", "Importer", "[1/", "Generated"}) {
    if (line.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The nsys profile call: cmd.txt records it without the overwrite flag, and the workload learns where it may
// write its metrics and its step tokens (beside them: RunLayout::nsys_step_tokens() for the main capture).
ToolCall profile_call(PipelineRun& run, const NsysCommand& command, const CaptureTarget& target) {
  ToolCall call = profiler_call(run, kStage, command.argv(), target.log, run.config.nsys.timeout_s);
  call.recorded_argv = command.without_overwrite().argv();
  call.recorded_comment = kRecordedWithoutOverwrite;
  const fs::path metrics = fs::absolute(run.directory.layout().resolve(target.metrics));
  call.environment["LLMPROF_METRICS_FILE"] = metrics.string();
  call.environment[std::string(step_tokens_environment_variable)] =
      (metrics.parent_path() / RunLayout::nsys_step_tokens().filename()).string();
  call.on_line = [&run](const std::string& line) {
    if (is_nsys_progress(line)) run.tool_progress(kStage, line);
  };
  return call;
}

// What the report resolver needs of a finished profile; an exit 143 that the capture range's end caused is
// no workload failure.
ReportResolveRequest resolve_request(PipelineRun& run, const NsysCommand& command, const ToolCall& call,
                                     const ProcessOutcome& outcome, const fs::path& report_base) {
  ReportResolveRequest request;
  request.output_base = report_base;
  request.profiler_output = read_text(run.directory.path() / call.log_file);
  request.profile_outcome = outcome;
  if (ended_by_capture_range(run, outcome)) {
    run.note(kStage,
             "nsys ended the workload when the NVTX capture range closed (--capture-range-end=stop-shutdown) "
             "and exited 143; that is how this setting works, not a workload failure");
    request.profile_outcome->exit_code = 0;
  }
  request.import_timeout = seconds_to_milliseconds(run.config.nsys.postprocess_timeout_s);
  request.profile_argv = command.argv();
  request.on_import = [&run](const std::vector<std::string>& argv) {
    append_command(run, RunLayout::nsys_commands(), ToolCall{kStage, argv});
    run.say(kStage, "nsys left only a .qdstrm; importing it: " + join_shell_command(argv));
  };
  return request;
}

}  // namespace

CaptureTarget first_capture(const std::string& log_name) {
  return {RunLayout::nsys_report_base(), RunLayout::nsys_metrics(), RunLayout::nsys_log(log_name), {}};
}

CaptureTarget discovery_capture() {
  return {RunLayout::nsys_directory() / "discovery" / "profile",
          RunLayout::nsys_directory() / "discovery" / "metrics.json",
          RunLayout::nsys_directory() / "discovery" / "profile.log",
          {}};
}

Capture capture(PipelineRun& run, const NsysInfo& nsys, bool gated, const CaptureTarget& target) {
  Capture result;
  gated = gated && run.capture_range() != NsysCaptureRange::none;  // a followed whole-run capture has no gate
  result.gated = gated;
  const fs::path report_base = fs::absolute(run.directory.layout().resolve(target.report_base));
  const NsysCommand command = nsys_profile_command(run, nsys, gated, report_base, target.added_arguments);
  std::vector<std::string> warnings;
  if (auto valid = command.validate(nsys, &warnings); !valid) {
    result.problem = StageResult::failed("invalid nsys options: " + valid.error().describe());
    return result;
  }
  for (const auto& warning : warnings) run.warn(kStage, warning);
  ToolCall call = profile_call(run, command, target);
  result.problem = run_profiler_call(run, call, RunLayout::nsys_commands(), "nsys profile", result.outcome);
  if (result.problem) return result;
  warn_about_cupti_conflict(run, kStage, call.log_file);
  ReportResolveRequest request = resolve_request(run, command, call, *result.outcome, report_base);
  if (captures_windows(run.config.nsys, gated) && target.added_arguments.empty()) {
    auto windows = resolve_capture_windows(run.runner, nsys, request);
    if (!windows) {
      result.report = windows.error();
      return result;
    }
    if (!windows->empty()) {
      result.windows = std::move(windows.value());
      ResolvedReport first;
      first.report = result.windows.front().report;
      for (const auto& window : result.windows)
        for (const auto& note : window.notes) first.notes.push_back(note);
      result.report = std::move(first);
      return result;
    }
  }
  result.report = resolve_report(run.runner, nsys, request);
  result.gate_never_opened =
      !result.report && gated && capture_gate_never_opened(request.profiler_output, request.profile_argv);
  return result;
}

namespace {

// An NVTX gate, or a cudaProfilerApi window, that never opened: run.on_empty_gate decides what follows.
bool gate_never_opened(const PipelineRun& run, const Capture& attempt) {
  if (run.capture_range() == NsysCaptureRange::nvtx) return attempt.gate_never_opened;
  // A cudaProfilerApi window the workload never opened: nsys 2025.3 says "No reports were generated"; 2022.4
  // prints "Generated:" with nothing under it and exits 0, and the resolver finds no file at all.
  return run.capture_range() == NsysCaptureRange::cuda_profiler_api && attempt.gated && !attempt.report &&
         attempt.report.error().code == ErrorCode::no_report && attempt.outcome && attempt.outcome->succeeded();
}

// The record of the capture the stage continues with (`attempt`): gated as configured, or the ungated re-run.
CaptureRecord capture_record(const PipelineRun& run, const Capture& attempt, bool ungated_rerun) {
  const NsysConfig& config = run.config.nsys;
  CaptureRecord record;
  record.gate = capture_gate_kind(run.capture_range());
  if (record.gate == CaptureGateKind::nvtx) record.range = config.nvtx_capture;
  record.gate_opened = attempt.gated && record.gate != CaptureGateKind::none && attempt.report.has_value();
  record.ungated_rerun = ungated_rerun && !run.followed_capture_range;
  record.scope = run.capture_scope;
  record.learned_nsys_arguments = run.learned_nsys_arguments;
  // A repeat capture (--capture-range-end=repeat[:N]) lists every numbered report, window 1 first.
  for (const auto& window : attempt.windows)
    record.windows.push_back({fs::relative(window.report, fs::absolute(run.directory.path())).string()});
  if (attempt.report && attempt.windows.empty()) {
    record.windows.push_back({fs::relative(attempt.report->report, fs::absolute(run.directory.path())).string()});
  }
  record.graph_trace = requested_graph_trace(config.extra_args) == "node" ? "node" : "graph";
  record.discovered_stage = run.discovered_stage;  // in run.json, so resume and analyze MAIN keep discovery's choice
  record.stage_choice = run.stage_choice;
  record.whole_window_selection = run.whole_window_selection;
  record.restricted_window = run.restricted_window;
  return record;
}

StageResult run_stats(PipelineRun& run, const NsysInfo& nsys, const fs::path& report, NsysOutput& output) {
  NsysStats stats;
  StageResult result = export_nsys_stats(run, nsys, report, RunLayout::nsys_directory(), stats);
  if (result.status == StageStatus::ok) output.stats = std::move(stats);
  return result;
}

// Why the capture needs no node-traced second one; nullopt when it does (it recorded graph launches whole).
std::optional<std::string> node_pass_not_needed(const PipelineRun& run, const NsysOutput& output) {
  if (!run.config.nsys.graph_node_pass) return "nsys.graph_node_pass = false";
  if (requested_graph_trace(run.config.nsys.extra_args) == "node") return "the capture already traced graph nodes";
  const auto launches = count_graph_launches(*output.stats);
  if (!launches) return "no CUDA API summary to count graph launches in";
  if (*launches == 0) return "no CUDA graph launch recorded";
  return std::nullopt;
}

// The node-traced second capture: its kernel tables replace the first capture's, which list no kernel that ran
// inside a CUDA graph. A failure here costs only the graph kernels, so it warns and the stage stays ok; being
// interrupted or timing out stops the stage as anywhere else.
StageResult run_graph_node_pass(PipelineRun& run, const NsysInfo& nsys, bool gated, NsysOutput& output) {
  const std::int64_t launches = count_graph_launches(*output.stats).value_or(0);
  run.say(kStage, std::to_string(launches) +
                      " CUDA graph launches were traced whole, so their kernels are not listed; capturing again "
                      "with --cuda-graph-trace=node into " +
                      RunLayout::nsys_node_directory().string() + " for the kernel figures");
  const std::string fallback = "; the kernel figures list only kernels launched outside CUDA graphs";
  std::error_code error;
  fs::create_directories(run.directory.layout().resolve(RunLayout::nsys_node_directory()), error);
  const CaptureTarget target{RunLayout::nsys_node_report_base(),
                             RunLayout::nsys_node_metrics(),
                             RunLayout::nsys_node_directory() / "profile.log",
                             {"--cuda-graph-trace=node"}};
  Capture node = capture(run, nsys, gated, target);
  if (node.problem) {
    if (node.problem->status == StageStatus::interrupted || node.problem->problem == StageProblemKind::timeout)
      return *node.problem;
    run.warn(kStage, "the node-traced capture failed: " + node.problem->reason + fallback);
    return StageResult::ok();
  }
  if (!node.report) {
    run.warn(kStage, "the node-traced capture left no report: " + node.report.error().describe() + fallback);
    return StageResult::ok();
  }
  const fs::path report = node.report->report;
  run.stage_report(kStage).artifacts.push_back(fs::relative(report, fs::absolute(run.directory.path())).string());
  check_report_size(run, kStage, report);
  NsysStats node_stats;
  if (auto stats = export_nsys_stats(run, nsys, report, RunLayout::nsys_node_directory(), node_stats);
      stats.status != StageStatus::ok) {
    if (stats.status == StageStatus::interrupted) return stats;
    run.warn(kStage, "nsys stats of the node-traced capture failed: " + stats.reason + fallback);
    return StageResult::ok();
  }
  output.stats = with_kernel_tables_of(std::move(*output.stats), node_stats);
  output.kernels_from_node_capture = true;
  output.capture->node_capture_directory = RunLayout::nsys_node_directory().string();
  run.say(kStage, "kernel figures (kernel table, selection, ncu) come from the node-traced capture in " +
                      RunLayout::nsys_node_directory().string() +
                      "; stage times, GPU busy and the step chart from the first capture (node tracing slows "
                      "the host side)");
  if (!run.config.nsys.export_sqlite) return StageResult::ok();
  if (auto exported = export_nsys_sqlite(run, nsys, report, RunLayout::nsys_node_directory());
      exported.status != StageStatus::ok) {
    if (exported.status == StageStatus::interrupted) return exported;
    run.warn(kStage, "the SQLite export of the node-traced capture failed: " + exported.reason);
  }
  return StageResult::ok();
}

StageResult nsys_stage(PipelineRun& run, const ProbeOutput& probe, const WorkloadOutput& workload, NsysOutput& output) {
  if (auto skip = nsys_stage_precondition(run, probe, workload)) return *skip;
  const NsysInfo& nsys = probe.nsys;
  const std::string sampling = gpu_metrics_plan_sentence(run.config.nsys, nsys);
  const bool asked = run.config.nsys.gpu_metrics.mode == GpuMetricsMode::frequency;
  if (asked && !nsys.gpu_metrics.available)
    run.warn(kStage, sampling);
  else
    run.say(kStage, sampling);
  Capture attempt;
  bool empty_gate = false;
  std::optional<StageResult> stop;
  if (discovers_before_gate(run, workload)) {
    stop = capture_after_discovery(run, nsys, workload, attempt, output, empty_gate);
  } else {
    attempt = capture(run, nsys, true, first_capture("profile.log"));
    if (attempt.problem) return *attempt.problem;
    empty_gate = gate_never_opened(run, attempt);
    if (empty_gate) {
      output.capture = capture_record(run, attempt, false);
      stop = handle_empty_gate(run, nsys, workload, attempt, output);
    }
  }
  if (stop) {
    output.capture = capture_record(run, attempt, false);  // the scope the run chose, when it chose one
    if (run.config.nsys.capture_range == NsysCaptureRange::nvtx && empty_gate)
      output.unopened_gate = run.config.nsys.nvtx_capture;
    return *stop;
  }
  output.capture = capture_record(run, attempt, empty_gate);
  if (!attempt.report) return StageResult::failed(attempt.report.error().describe());
  const ResolvedReport& report = attempt.report.value();
  for (const auto& note : report.notes) run.warn(kStage, note);
  StageReport& reported = run.stage_report(kStage);
  reported.artifacts.push_back(fs::relative(report.report, fs::absolute(run.directory.path())).string());
  check_report_size(run, kStage, report.report);
  if (run.stopping()) return StageResult::interrupted("interrupted after nsys profile");
  if (auto stats = run_stats(run, nsys, report.report, output); stats.status != StageStatus::ok) return stats;
  output.no_kernels_without_gpu = no_kernels_to_select(*output.stats, probe.nvidia_driver);
  if (run.config.nsys.export_sqlite) {
    StageResult exported = export_nsys_sqlite(run, nsys, report.report, RunLayout::nsys_directory());
    if (exported.status != StageStatus::ok) return exported;
    choose_auto_stage(run, attempt.gated && run.capture_range() == NsysCaptureRange::nvtx);
    output.capture = capture_record(run, attempt, empty_gate);
  }
  if (!attempt.windows.empty()) {
    run.say(kStage, std::to_string(attempt.windows.size()) +
                        " capture windows (one report each); window 1 is analysed in nsys/, later ones in "
                        "nsys/window-<k>/, all listed in " +
                        RunLayout::nsys_windows().string());
    if (auto windows = export_capture_windows(run, nsys, attempt.windows); windows.status != StageStatus::ok)
      return windows;
    output.capture = capture_record(run, attempt, empty_gate);  // the windows that were exported
  }
  if (auto why_not = node_pass_not_needed(run, output)) {
    log_info(to_string(kStage), "no node-traced capture: " + *why_not);
    return StageResult::ok();
  }
  if (run.stopping()) return StageResult::interrupted("interrupted before the node-traced capture");
  return run_graph_node_pass(run, nsys, attempt.gated, output);
}

}  // namespace

Staged<NsysOutput> run_nsys_stage(PipelineRun& run, const ProbeOutput& probe, const WorkloadOutput& workload) {
  NsysOutput output;
  StageResult result = nsys_stage(run, probe, workload, output);
  return {std::move(result), std::move(output)};
}

}  // namespace llmprof::detail
