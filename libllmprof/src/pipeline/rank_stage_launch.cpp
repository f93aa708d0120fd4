// launch_ranks: one launcher call per stage, then every rank's status.json (see rank_stage_launch.hpp).
#include "pipeline/rank_stage_launch.hpp"
#include "core/duration.hpp"
#include "core/file_text.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <charconv>

#include "llmprof/logging.hpp"
#include "llmprof/shell_quote.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

// The launcher gets this much longer than a rank, so that a hanging rank's own timeout fires
// first and the stage can say which rank hung.
constexpr double kLauncherGraceS = 60;

std::vector<std::string> launcher_argv(const PipelineRun& run, Stage stage,
                                       const std::optional<std::vector<int>>& ranks) {
  const RankLaunch& launch = *run.environment.rank_launch;
  std::vector<std::string> argv = launch.launcher.words;
  argv.push_back(run.environment.executable.string());
  RankExecRequest request;
  request.main_directory = fs::absolute(run.directory.path());
  request.stage = to_string(stage);
  request.ranks = ranks;
  const std::vector<std::string> rank_exec = rank_exec_arguments(request);
  argv.insert(argv.end(), rank_exec.begin(), rank_exec.end());
  argv.insert(argv.end(), run.workload.argv.begin(), run.workload.argv.end());
  return argv;
}

StageStatus stage_status_of(const RankStatus& status) {
  if (status.outcome == "ok") return StageStatus::ok;
  if (status.outcome == "interrupted") return StageStatus::interrupted;
  if (status.outcome == "running") return StageStatus::running;
  return StageStatus::failed;
}

RankRecord rank_record(const RankStatus& status, Stage stage) {
  RankRecord record;
  record.rank = status.rank;
  record.local_rank = status.local_rank;
  record.host = status.host;
  record.role = status.role;
  record.status = stage_status_of(status);
  record.reason = status.reason;
  record.exit_code = status.exit_code;
  record.duration_s = status.duration_s;
  record.directory = RunLayout::rank_stage_directory(status.rank, stage).string();
  return record;
}

// Reads ranks/r*/<stage>/status.json; the world size is what the ranks themselves reported.
void collect_statuses(PipelineRun& run, Stage stage, LaunchedRanks& launched) {
  std::error_code error;
  const fs::path ranks_root = run.directory.path() / RunLayout::ranks_directory();
  for (const auto& entry : fs::directory_iterator(ranks_root, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.size() < 2 || name[0] != 'r') continue;
    int rank = 0;
    const auto parsed = std::from_chars(name.data() + 1, name.data() + name.size(), rank);
    if (parsed.ec != std::errc() || parsed.ptr != name.data() + name.size()) continue;  // not ranks/r<k>/
    const fs::path file = run.directory.path() / RunLayout::rank_stage_status(rank, stage);
    if (!fs::exists(file)) continue;
    auto status = read_rank_status(file);
    if (!status) {
      run.warn(stage, status.error().describe());
      continue;
    }
    launched.statuses.push_back(status.value());
  }
  std::sort(launched.statuses.begin(), launched.statuses.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (const auto& status : launched.statuses) launched.world_size = std::max(launched.world_size, status.world_size);
}

// The first line in which a task explains itself in the launcher's log ("deep-profile rank-exec: ...", an
// "error" line), else its last lines: the stage's reason carries the child's own words.
std::string launcher_explanation(const fs::path& log) {
  const std::string text = read_text(log);
  for (const auto& line : split_lines(text)) {
    const std::string_view trimmed = trim(line);
    if (trimmed.find("deep-profile") != std::string_view::npos || trimmed.find("rror") != std::string_view::npos)
      return printable_excerpt(trimmed, 300);
  }
  return tail_lines(log, 3);
}

// The stage's reason: the first rank that timed out, else failed or was refused, else a rank that
// left no status or never finished, else one that was stopped (usually by the launcher, after
// another rank's failure).
std::optional<StageResult> worst_rank(const LaunchedRanks& launched, const ProcessOutcome& launcher,
                                      const std::string& log, const fs::path& log_path) {
  for (const auto& status : launched.statuses) {
    if (status.outcome == "timeout") return StageResult::failed(status.reason, StageProblemKind::timeout);
  }
  for (const auto& status : launched.statuses) {
    if (status.outcome == "failed" || status.outcome == "refused") return StageResult::failed(status.reason);
  }
  for (int rank = 0; rank < launched.world_size; ++rank) {
    auto found = std::find_if(launched.statuses.begin(), launched.statuses.end(),
                              [rank](const auto& s) { return s.rank == rank; });
    if (found == launched.statuses.end()) {
      return StageResult::failed(
          "rank " + std::to_string(rank) + " of " + std::to_string(launched.world_size) +
          " left no status (it never started, or was killed before it could write); the launcher ended with " +
          launcher.describe() + "; see " + log);
    }
    if (found->outcome == "running") {
      return StageResult::failed("rank " + std::to_string(rank) + " did not finish: the launcher ended with " +
                                 launcher.describe() + " while it was running; see " + log);
    }
  }
  for (const auto& status : launched.statuses) {
    if (status.outcome == "interrupted") return StageResult::interrupted(status.reason);
  }
  if (!launcher.succeeded()) {
    // A task that refused before it knew its rank wrote no status (srun with a stale RANK/WORLD_SIZE):
    // the ranks that reported all finished, and the launcher's own log says why it failed.
    const std::string said = launcher_explanation(log_path);
    return StageResult::failed("the launcher ended with " + launcher.describe() + " after the " +
                               std::to_string(launched.statuses.size()) + " rank(s) that reported finished" +
                               (said.empty() ? std::string() : "; its log says: " + said) + "; see " + log);
  }
  return std::nullopt;
}

}  // namespace

LaunchedRanks launch_ranks(PipelineRun& run, const RankPlan& plan, const std::optional<std::vector<int>>& ranks) {
  LaunchedRanks launched;
  const Stage stage = plan.stage;
  if (auto written = run.directory.write_json(RunLayout::rank_plan(stage), rank_plan_to_json(plan)); !written) {
    launched.problem = StageResult::failed("could not write the stage plan: " + written.error().describe());
    return launched;
  }
  const std::vector<std::string> argv = launcher_argv(run, stage, ranks);
  ToolCall call{stage, argv};
  call.log_file = RunLayout::launcher_log(stage);
  if (plan.timeout_s > 0) call.timeout = seconds_to_milliseconds(plan.timeout_s + kLauncherGraceS);
  StageReport& reported = run.stage_report(stage);
  reported.command = command_line(run, call);
  reported.cmd_file = RunLayout::launcher_commands(stage).string();
  reported.log_file = call.log_file.string();
  append_command(run, RunLayout::launcher_commands(stage), call);
  auto outcome = run_tool(run, call);
  if (!outcome) {
    launched.problem = StageResult::failed("could not start the launcher: " + outcome.error().describe(),
                                           StageProblemKind::environment);
    return launched;
  }
  collect_statuses(run, stage, launched);
  for (const auto& status : launched.statuses) {
    reported.ranks.push_back(rank_record(status, stage));
    if (status.survivors.empty()) continue;
    ProcessOutcome survivors;  // the rank's, as its status.json says, worded like every stage's survivors
    survivors.surviving_descendants = status.survivors;
    survivors.survivors_ended = status.survivors_ended;
    survivors.survivors_killed = status.survivors_killed;
    report_survivors(run, stage, "rank " + std::to_string(status.rank) + "'s workload", survivors);
  }
  if (outcome->interrupted) {
    launched.problem = StageResult::interrupted("the launcher was stopped by SIGINT/SIGTERM");
    return launched;
  }
  if (launched.statuses.empty()) {
    const std::string tail = tail_lines(run.directory.path() / call.log_file, 5);
    launched.problem =
        StageResult::failed("the launcher (" + run.environment.rank_launch->launcher.words.front() + ") ended with " +
                                outcome->describe() + " before any rank started" +
                                (tail.empty() ? std::string("; it printed nothing") : "; its last lines: " + tail),
                            outcome->timed_out ? StageProblemKind::timeout : StageProblemKind::failure);
    return launched;
  }
  launched.problem =
      worst_rank(launched, outcome.value(), call.log_file.string(), run.directory.path() / call.log_file);
  if (!launched.problem && outcome->timed_out) {
    launched.problem = StageResult::failed("the launcher ran past its timeout", StageProblemKind::timeout);
  }
  log_info(to_string(stage),
           std::to_string(launched.statuses.size()) + " of " + std::to_string(launched.world_size) + " ranks reported");
  return launched;
}

}  // namespace llmprof::detail
