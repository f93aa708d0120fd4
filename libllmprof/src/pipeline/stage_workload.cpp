// Stage "stage1": the workload bare (no profiler): its output, wall time and metrics JSON.
#include "pipeline/deep_profiler_internal.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/shell_quote.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kStderrLinesInReason = 5;

// "cd DIR && env K=V ... argv" so that cmd.txt reproduces the run exactly.
std::string workload_shell_command(const ResolvedWorkload& workload, const std::map<std::string, std::string>& environment) {
  std::string command;
  if (!workload.working_directory.empty()) command += "cd " + quote_shell_argument(workload.working_directory.string()) + " && ";
  if (!environment.empty()) {
    command += "env";
    for (const auto& [name, value] : environment) command += " " + quote_shell_argument(name + "=" + value);
    command += " ";
  }
  return command + join_shell_command(workload.argv);
}

StageResult workload_problem(PipelineRun& run, const ProcessOutcome& outcome, WorkloadOutput& output) {
  if (outcome.interrupted) return StageResult::interrupted("the workload was stopped by SIGINT/SIGTERM");
  if (outcome.timed_out) {
    output.failure = "the workload ran past workload.timeout_s in stage1";
    return StageResult::failed("the workload ran past workload.timeout_s=" + std::to_string(run.config.workload.timeout_s) +
                                   "s and its process tree was killed (" + outcome.describe() + ")",
                               StageProblemKind::timeout);
  }
  const std::string stderr_tail = tail_lines(run.directory.layout().resolve(RunLayout::stage1_stderr()), kStderrLinesInReason);
  output.failure = "the workload failed in stage1 (" + outcome.describe() + ")";
  return StageResult::failed("the workload failed: " + outcome.describe() +
                             (stderr_tail.empty() ? std::string("; it wrote nothing to stderr") : "; last stderr lines: " + stderr_tail));
}

void read_metrics(PipelineRun& run, const fs::path& metrics_file, WorkloadOutput& output) {
  auto ranges = read_emitted_ranges(metrics_file);
  if (ranges) {
    output.emitted_ranges = ranges.value();
    run.record("stage1").artifacts.push_back(RunLayout::stage1_metrics().string());
    return;
  }
  const std::string why = ranges.error().message;  // names the file
  if (run.workload.is_bundled_example) run.warn("stage1", why);
  else log_info("stage1", why + "; fine for a workload that does not write llmprof metrics");
}


StageResult workload_stage(PipelineRun& run, WorkloadOutput& output) {
  if (!run.config.run.enable_stage1) return StageResult::skipped("disabled (run.enable_stage1 = false)");
  const RunLayout layout = run.directory.layout();
  const fs::path metrics_file = layout.resolve(RunLayout::stage1_metrics());
  ProcessSpec spec;
  spec.argv = run.workload.argv;
  std::map<std::string, std::string> environment = run.workload.environment;
  environment["LLMPROF_METRICS_FILE"] = fs::absolute(metrics_file).string();
  environment["LLMPROF_PROFILER"] = "none";  // the bare run: no profiler attached (nsys/ncu in their stages)
  for (const auto& [name, value] : environment) spec.environment[name] = value;
  spec.working_directory = run.workload.working_directory;
  spec.stdout_file = layout.resolve(RunLayout::stage1_stdout());
  spec.stderr_file = layout.resolve(RunLayout::stage1_stderr());
  spec.timeout = seconds_to_ms(run.config.workload.timeout_s);

  StageRecord& record = run.record("stage1");
  record.command = workload_shell_command(run.workload, environment);
  record.cmd_file = RunLayout::stage1_commands().string();
  record.log_file = RunLayout::stage1_stderr().string();
  record.artifacts = {RunLayout::stage1_stdout().string(), RunLayout::stage1_stderr().string()};
  append_command(run, RunLayout::stage1_commands(), *record.command);
  log_info("stage1", "running: " + *record.command);
  auto outcome = run.runner.run(spec);
  if (!outcome) {
    output.failure = "the workload could not be started";
    return StageResult::failed("could not start the workload: " + outcome.error().describe());
  }
  if (outcome->exited) record.exit_code = outcome->exit_code;
  run.say("stage1", "workload " + outcome->describe());
  if (!outcome->surviving_descendants.empty()) {
    std::string list;
    for (const auto& process : outcome->surviving_descendants) list += (list.empty() ? "" : ", ") + process;
    run.warn("stage1", "the workload exited but left " + std::to_string(outcome->surviving_descendants.size()) +
                           " process(es) running: " + list + "; they may skew the profiled runs (kill them, or make the "
                           "workload wait for its children)");
  }
  if (!outcome->succeeded()) return workload_problem(run, outcome.value(), output);
  read_metrics(run, metrics_file, output);
  return StageResult::ok();
}

}  // namespace

Staged<WorkloadOutput> run_workload_stage(PipelineRun& run) {
  WorkloadOutput output;
  StageResult result = workload_stage(run, output);
  return {std::move(result), std::move(output)};
}

}  // namespace llmprof::detail
