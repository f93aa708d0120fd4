// Stage workload (folder and run.json name: stage1): the workload bare (no profiler), run.repeats times:
// its output, wall time and metrics JSON, and the repeats' statistics (stage1/repeats.json).
#include "core/duration.hpp"
#include "core/file_text.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/shell_quote.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kStderrLinesInReason = 5;

StageResult workload_problem(PipelineRun& run, const ProcessOutcome& outcome, const fs::path& stderr_file,
                             WorkloadOutput& output) {
  if (outcome.interrupted) return StageResult::interrupted("the workload was stopped by SIGINT/SIGTERM");
  if (outcome.timed_out) {
    output.failure = "the workload ran past workload.timeout_s in stage1";
    return StageResult::failed(
        "the workload ran past workload.timeout_s=" + std::to_string(run.config.workload.timeout_s) +
            "s and its process tree was killed (" + outcome.describe() + ")",
        StageProblemKind::timeout);
  }
  const std::string stderr_tail = tail_lines(stderr_file, kStderrLinesInReason);
  output.failure = "the workload failed in stage1 (" + outcome.describe() + ")";
  return StageResult::failed(
      "the workload failed: " + outcome.describe() +
      (stderr_tail.empty() ? std::string("; it wrote nothing to stderr") : "; last stderr lines: " + stderr_tail));
}

void read_metrics(PipelineRun& run, const fs::path& metrics_file, WorkloadOutput& output) {
  auto ranges = read_emitted_ranges(metrics_file);
  if (ranges) {
    output.emitted_ranges = ranges.value();
    run.stage_report(Stage::workload).artifacts.push_back(RunLayout::stage1_metrics().string());
    for (const auto& warning : ranges->warnings) run.warn(Stage::workload, warning);
    return;
  }
  const std::string why = ranges.error().message;  // names the file
  if (run.workload.is_bundled_example)
    run.warn(Stage::workload, why);
  else
    log_info(to_string(Stage::workload), why + "; fine for a workload that does not write llmprof metrics");
}

// One bare run of the workload into `directory` (relative to MAIN): its logs and metrics file.
struct WorkloadRun {
  ProcessOutcome outcome;
  fs::path metrics_file, stderr_file;
};

Result<WorkloadRun> run_workload_once(PipelineRun& run, const fs::path& directory, bool first) {
  const RunLayout layout = run.directory.layout();
  std::error_code ignored;
  fs::create_directories(layout.resolve(directory), ignored);
  WorkloadRun result;
  // The first run keeps the layout a single run always had (stage1/stdout.log, metrics.json, ...).
  result.metrics_file = layout.resolve(first ? RunLayout::stage1_metrics() : directory / "metrics.json");
  result.stderr_file = layout.resolve(first ? RunLayout::stage1_stderr() : directory / "stderr.log");
  ProcessSpec spec;
  spec.argv = run.workload.argv;
  std::map<std::string, std::string> environment = run.workload.environment;
  environment["LLMPROF_METRICS_FILE"] = fs::absolute(result.metrics_file).string();
  environment["LLMPROF_PROFILER"] = "none";  // the bare run: no profiler attached (nsys/ncu in their stages)
  for (const auto& [name, value] : environment) spec.environment[name] = value;
  spec.working_directory = run.workload.working_directory;
  spec.stdout_file = layout.resolve(first ? RunLayout::stage1_stdout() : directory / "stdout.log");
  spec.stderr_file = result.stderr_file;
  spec.timeout = seconds_to_milliseconds(run.config.workload.timeout_s);
  spec.end_survivors_after = survivor_grace(run);
  ToolCall recorded{Stage::workload, run.workload.argv};
  recorded.environment = environment;
  const std::string command = command_line(run, recorded);
  if (first) {
    StageReport& reported = run.stage_report(Stage::workload);
    reported.command = command;
    reported.cmd_file = RunLayout::stage1_commands().string();
    reported.log_file = RunLayout::stage1_stderr().string();
    reported.artifacts = {RunLayout::stage1_stdout().string(), RunLayout::stage1_stderr().string()};
  }
  append_command(run, RunLayout::stage1_commands(), recorded);
  log_info(to_string(Stage::workload), "running: " + command);
  auto outcome = run.runner.run(spec);
  if (!outcome) return outcome.error();
  result.outcome = outcome.value();
  return result;
}

StageResult workload_stage(PipelineRun& run, WorkloadOutput& output) {
  if (!run.config.run.enable_stage1) return StageResult::skipped("disabled (run.enable_stage1 = false)");
  const int repeats = std::max(run.config.run.repeats, 1);
  RepeatSamples samples;
  for (int index = 1; index <= repeats; ++index) {
    if (run.stopping())
      return StageResult::interrupted("stopped by SIGINT/SIGTERM before repeat " + std::to_string(index));
    const fs::path directory = index == 1 ? RunLayout::stage1_directory() : RunLayout::stage1_repeat_directory(index);
    auto ran = run_workload_once(run, directory, index == 1);
    if (!ran) {
      output.failure = "the workload could not be started";
      return StageResult::failed("could not start the workload: " + ran.error().describe(),
                                 ran.error().code == ErrorCode::not_found ? StageProblemKind::missing_input
                                                                          : StageProblemKind::failure);
    }
    const ProcessOutcome& outcome = ran->outcome;
    if (index == 1 && outcome.exited) run.stage_report(Stage::workload).exit_code.emplace(outcome.exit_code);
    run.say(Stage::workload,
            (repeats > 1 ? "repeat " + std::to_string(index) + "/" + std::to_string(repeats) + ": " : std::string()) +
                "workload " + outcome.describe());
    report_survivors(run, Stage::workload, "the workload", outcome);
    if (!outcome.succeeded()) {
      if (index > 1)
        run.warn(Stage::workload, "repeat " + std::to_string(index) + " failed; its logs are in " + directory.string());
      return workload_problem(run, outcome, ran->stderr_file, output);
    }
    if (index == 1) read_metrics(run, ran->metrics_file, output);
    add_repeat_sample(samples, outcome, ran->metrics_file);
  }
  record_repeats(run, samples);
  return StageResult::ok();
}

}  // namespace

Staged<WorkloadOutput> run_workload_stage(PipelineRun& run) {
  WorkloadOutput output;
  StageResult result = workload_stage(run, output);
  return {std::move(result), std::move(output)};
}

}  // namespace llmprof::detail
