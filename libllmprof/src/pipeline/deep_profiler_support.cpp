// Helpers shared by the pipeline's stages: progress, running tools, reading logs, size checks.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/duration.hpp"
#include "core/file_text.hpp"
#include "core/text.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/shell_quote.hpp"
#include "llmprof/workload_metrics.hpp"
#include "pipeline/nsys_capture.hpp"
#include "pipeline/tool_call.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;

void PipelineRun::emit(ProgressEvent event) const {
  event.elapsed = clock.now() - started;
  if (progress) progress(event);
}

std::unique_ptr<ScopedLogFile> open_run_log(const DeepProfilerEnvironment& environment, const fs::path& path) {
  if (!environment.attach_log_file) return nullptr;
  auto file = ScopedLogFile::open(path);
  if (!file) {
    log_warning("run", "no run log: " + file.error().describe());
    return nullptr;
  }
  return std::move(file.value());
}

namespace {

// Run-level messages go out under this name (the log's component, the progress line's stage column).
constexpr const char* kRunComponent = "run";

}  // namespace

void PipelineRun::say(Stage stage, const std::string& message, bool warning) {
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::message;
  event.stage = to_string(stage);
  event.message = message;
  event.warning = warning;
  emit(event);
  if (warning)
    log_warning(event.stage, message);
  else
    log_info(event.stage, message);
}

void PipelineRun::say_about_run(const std::string& message, bool warning) {
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::message;
  event.stage = kRunComponent;
  event.message = message;
  event.warning = warning;
  emit(event);
  if (warning)
    log_warning(kRunComponent, message);
  else
    log_info(kRunComponent, message);
}

void PipelineRun::tool_progress(Stage stage, const std::string& message) {
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::tool_progress;
  event.stage = to_string(stage);
  event.message = message;
  emit(event);
}

LibraryRanges PipelineRun::library_ranges() const {
  // DeepProfiler::run and resume validate the configuration first, run.ignore_ranges included.
  return library_ranges_of(config).value();
}

NvidiaDriver PipelineRun::nvidia_driver() const {
  if (!environment.nvidia_driver_present) return detect_nvidia_driver();
  NvidiaDriver driver;
  driver.present = *environment.nvidia_driver_present;
  driver.evidence = std::string("the harness says ") + (driver.present ? "it has" : "it has no") +
                    " NVIDIA driver (DeepProfilerEnvironment::nvidia_driver_present)";
  return driver;
}

TimelineOptions PipelineRun::timeline_options() const {
  TimelineOptions options;
  options.library_ranges = library_ranges();
  return options;
}

const StageRecord* PipelineRun::recorded(Stage stage) const {
  const auto& stages = directory.manifest().stages;
  auto found = std::find_if(stages.begin(), stages.end(),
                            [&](const StageRecord& record) { return record.name == to_string(stage); });
  return found == stages.end() ? nullptr : &*found;
}

void PipelineRun::warn(Stage stage, const std::string& message) {
  stage_report(stage).warnings.push_back(message);
  say(stage, message, true);
}

void PipelineRun::note(Stage stage, const std::string& message) {
  notes.push_back(std::string(to_string(stage)) + ": " + message);
  say(stage, message, true);
}

void PipelineRun::note_about_run(const std::string& message) {
  notes.push_back(std::string(kRunComponent) + ": " + message);
  say_about_run(message, true);
}

std::string command_line(const PipelineRun& run, const ToolCall& call) {
  std::string line =
      reproduce_command_line(call.recorded_argv.value_or(call.argv), call.environment, run.workload.working_directory);
  if (!call.stdout_file.empty())
    line += " > " + quote_shell_argument(fs::absolute(run.directory.path() / call.stdout_file).string());
  return line;
}

void append_command(PipelineRun& run, const fs::path& cmd_file, const ToolCall& call) {
  std::string text = read_text(run.directory.path() / cmd_file);
  if (!call.recorded_comment.empty()) text += call.recorded_comment + "\n";
  text += command_line(run, call) + "\n";
  if (auto written = run.directory.write_text(cmd_file, text); !written) {
    run.say_about_run("could not write " + cmd_file.string() + ": " + written.error().describe(), true);
  }
}

ToolCall profiler_call(const PipelineRun& run, Stage stage, std::vector<std::string> argv, fs::path log_file,
                       double timeout_s) {
  ToolCall call{stage, std::move(argv)};
  call.environment = run.workload.environment;
  // The stage's name, nsys or ncu: lets a harness turn its own CUPTI profiler off (only one subscriber can attach).
  call.environment["LLMPROF_PROFILER"] = to_string(stage);
  call.log_file = std::move(log_file);
  call.timeout = seconds_to_milliseconds(timeout_s);
  return call;
}

std::optional<StageResult> run_profiler_call(PipelineRun& run, const ToolCall& call, const fs::path& cmd_file,
                                             const std::string& what, std::optional<ProcessOutcome>& outcome) {
  StageReport& reported = run.stage_report(call.stage);
  reported.command = command_line(run, call);
  reported.cmd_file = cmd_file.string();
  reported.log_file = call.log_file.string();
  append_command(run, cmd_file, call);
  auto finished = run_tool(run, call);
  if (!finished)
    return StageResult::failed(std::string("could not start ") + to_string(call.stage) + ": " +
                               finished.error().describe());
  outcome = finished.value();
  if (finished->interrupted || finished->timed_out) return outcome_problem(*finished, what, call.log_file.string());
  return std::nullopt;
}

Result<ProcessOutcome> run_tool(PipelineRun& run, const ToolCall& call) {
  ProcessSpec spec;
  spec.argv = call.argv;
  for (const auto& [name, value] : call.environment) spec.environment[name] = value;
  spec.working_directory = run.workload.working_directory;
  const fs::path log = run.directory.path() / call.log_file;
  spec.stderr_file = log;
  spec.stdout_file = call.stdout_file.empty() ? log : run.directory.path() / call.stdout_file;
  if (call.on_line) {
    spec.on_stderr_line = call.on_line;
    if (call.stdout_file.empty()) spec.on_stdout_line = call.on_line;
  }
  if (call.timeout.count() > 0) spec.timeout = call.timeout;
  spec.end_descendants = call.end_descendants;
  spec.descendants_kill_grace = call.descendants_kill_grace;
  spec.end_descendants_after = call.end_descendants_after;
  spec.end_survivors_after = survivor_grace(run);
  std::error_code unresolved;
  fs::path tool_executable = call.argv.empty() ? fs::path() : fs::canonical(call.argv.front(), unresolved);
  if (unresolved) tool_executable = call.argv.front();
  spec.is_tool_executable = [tool_executable](const fs::path& executable) {
    return is_tool_process(executable, tool_executable);
  };
  log_info(to_string(call.stage), "running: " + command_line(run, call));
  auto outcome = run.runner.run(spec);
  if (outcome) {
    run.stage_report(call.stage).exit_code.emplace(outcome->exited ? std::optional<int>(outcome->exit_code)
                                                                   : std::nullopt);
    log_info(to_string(call.stage), "finished: " + outcome->describe());
    report_survivors(run, call.stage,
                     "the workload under " +
                         (call.argv.empty() ? std::string("the tool") : fs::path(call.argv.front()).filename().string()),
                     *outcome);
  }
  return outcome;
}

bool is_tool_process(const fs::path& executable, const fs::path& tool_executable) {
  if (!tool_executable.empty() && executable == tool_executable) return true;
  return std::any_of(executable.begin(), executable.end(), [](const fs::path& component) {
    std::string name = component.string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    return name.starts_with("nsight-");
  });
}

std::optional<std::chrono::milliseconds> survivor_grace(const PipelineRun& run) {
  if (run.config.run.leave_survivors) return std::nullopt;
  return seconds_to_milliseconds(run.config.run.survivor_grace_s);
}

void report_survivors(PipelineRun& run, Stage stage, const std::string& what, const ProcessOutcome& outcome) {
  if (!outcome.tool_survivors.empty())
    log_info(to_string(stage), "the profiler's own processes still running under " + what +
                                   ", left to finish its work: " + join(outcome.tool_survivors, ", "));
  if (outcome.surviving_descendants.empty()) return;
  const std::string list = join(outcome.surviving_descendants, ", ");
  // The tool's own survivors were split off above: these are its workload's.
  std::string text = what + " left " +
                     std::to_string(outcome.surviving_descendants.size()) + " process(es) running after exiting: " + list;
  if (!outcome.survivors_ended && run.config.run.leave_survivors) {
    text += "; left running (run.leave_survivors = true): they may hold ports or GPU memory the next stage needs";
  } else if (!outcome.survivors_ended) {
    text += "; left running: they may hold ports or GPU memory the next stage needs";
  } else {
    text += "; ended them with SIGTERM";
    if (!outcome.survivors_killed.empty())
      text += ", and with SIGKILL after run.survivor_grace_s = " + format_number(run.config.run.survivor_grace_s) +
              " s: " + join(outcome.survivors_killed, ", ");
    text += " (set run.leave_survivors = true to leave them)";
  }
  run.warn(stage, text);
}

StageResult outcome_problem(const ProcessOutcome& outcome, const std::string& what, const std::string& log_file) {
  if (outcome.interrupted)
    return StageResult::interrupted(what + " was stopped by SIGINT/SIGTERM (" + outcome.describe() + ")");
  if (outcome.timed_out) {
    return StageResult::failed(
        what + " ran past its timeout and its process tree was killed (" + outcome.describe() + ")",
        StageProblemKind::timeout);
  }
  std::string reason = what + " failed: " + outcome.describe();
  if (!log_file.empty()) reason += "; see " + log_file;
  return StageResult::failed(reason);
}

void check_report_size(PipelineRun& run, Stage stage, const fs::path& report) {
  std::error_code error;
  const auto bytes = fs::file_size(report, error);
  if (error) return;
  const double cap_bytes = run.config.run.report_size_cap_gb * 1e9;
  if (cap_bytes > 0 && static_cast<double>(bytes) > cap_bytes) {
    std::ostringstream message;
    message.precision(3);
    message << report.filename().string() << " is " << static_cast<double>(bytes) / 1e9
            << " GB, above run.report_size_cap_gb=" << run.config.run.report_size_cap_gb
            << "; narrow the capture (nsys.nvtx_capture, fewer iterations) to keep runs small";
    run.warn(stage, message.str());
  }
}

Result<EmittedRanges> read_emitted_ranges(const fs::path& metrics_file) {
  auto metrics = load_workload_metrics(metrics_file);
  if (!metrics) return metrics.error();
  return EmittedRanges{metrics->nvtx_domain, metrics->nvtx_ranges, metrics->warnings};
}

}  // namespace llmprof::detail
