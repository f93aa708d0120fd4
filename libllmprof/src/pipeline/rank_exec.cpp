// `deep-profile rank-exec`: one rank's share of a stage run under a launcher (see rank_launch.hpp).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/atomic_file.hpp"
#include "llmprof/clock.hpp"
#include "llmprof/rank.hpp"
#include "llmprof/rank_launch.hpp"
#include "llmprof/run_layout.hpp"
#include "llmprof/shell_quote.hpp"
#include "pipeline/gpu_metrics_claim.hpp"
#include "pipeline/rank_files.hpp"
#include "pipeline/tool_call.hpp"

namespace llmprof {
namespace fs = std::filesystem;
using detail::RankPlan;
using detail::RankStatus;

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

// Exit statuses rank-exec passes back to the launcher (README "Exit codes").
constexpr int kExitBadRequest = 2;
constexpr int kExitTimeout = 124;
constexpr int kExitInterrupted = 130;

bool selected(const RankExecRequest& request, int rank) {
  return !request.ranks || std::find(request.ranks->begin(), request.ranks->end(), rank) != request.ranks->end();
}

Result<void> write_status(const fs::path& file, const RankStatus& status) {
  return detail::write_file_atomically(file, detail::rank_status_to_json(status) + "\n");
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds << "s";
  return text.str();
}

// Fills outcome, reason and exit code from how the child ended; returns rank-exec's exit status.
int record_outcome(RankStatus& status, const ProcessOutcome& outcome, const RankPlan& plan, const std::string& log) {
  status.duration_s = std::chrono::duration<double>(outcome.wall_time).count();
  status.survivors = outcome.surviving_descendants;
  status.survivors_ended = outcome.survivors_ended;
  status.survivors_killed = outcome.survivors_killed;
  if (outcome.exited) status.exit_code = outcome.exit_code;
  if (outcome.timed_out) {
    status.outcome = "timeout";
    status.reason = "rank " + std::to_string(status.rank) + " ran past " + plan.timeout_key + "=" +
                    seconds_text(plan.timeout_s) + "; its process tree was killed (see " + log + ")";
    return kExitTimeout;
  }
  if (outcome.interrupted) {
    status.outcome = "interrupted";
    status.reason = "rank " + std::to_string(status.rank) +
                    " was stopped (SIGINT/SIGTERM, e.g. the launcher ending the job after another rank failed)";
    return kExitInterrupted;
  }
  if (outcome.succeeded()) {
    status.outcome = "ok";
    return 0;
  }
  status.outcome = "failed";
  status.reason = "rank " + std::to_string(status.rank) + " " +
                  (status.role == detail::kBareRole ? "workload" : status.role) + " " + outcome.describe() + " (see " +
                  log + ")";
  return outcome.exited && outcome.exit_code != 0 ? outcome.exit_code : 1;
}

// What status.json says of a rank before it runs.
RankStatus starting_status(const RankIdentity& identity, const std::string& role) {
  RankStatus status;
  status.rank = identity.rank;
  status.local_rank = identity.local_rank;
  status.world_size = identity.world_size;
  status.source = to_string(identity.source);
  status.evidence = identity.evidence;
  status.host = host_name();
  status.role = role;
  status.started_utc = format_utc_iso8601(SystemClock().wall_now());
  return status;
}

// The process one rank runs: the profiler's words (a profiled rank) then the workload, with the plan's
// environment and directory, @RANK@ filled in; `recorded` gets the environment its cmd.txt records.
ProcessSpec rank_process(const detail::RankPlan& plan, const RankExecRequest& request, const RankIdentity& identity,
                         Stage stage, bool profiled, const std::vector<std::string>& sampling_words,
                         std::map<std::string, std::string>& recorded) {
  ProcessSpec spec;
  if (profiled) {
    for (const auto& word : plan.profiler_argv) spec.argv.push_back(detail::substitute_rank(word, identity.rank));
    spec.argv.insert(spec.argv.end(), sampling_words.begin(), sampling_words.end());
  }
  spec.argv.insert(spec.argv.end(), request.workload.begin(), request.workload.end());
  for (const auto& [name, value] : plan.environment) {
    recorded[name] = detail::substitute_rank(value, identity.rank);
    spec.environment[name] = recorded[name];
  }
  spec.working_directory = plan.working_directory;
  spec.stdout_file = request.main_directory / RunLayout::rank_stage_output(identity.rank, stage);
  spec.stderr_file = spec.stdout_file;
  if (plan.timeout_s > 0)
    spec.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(plan.timeout_s * 1000)));
  if (plan.survivor_grace_s)
    spec.end_survivors_after = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(*plan.survivor_grace_s * 1000)));
  const std::filesystem::path tool = spec.argv.empty() ? std::filesystem::path() : std::filesystem::path(spec.argv.front());
  spec.is_tool_executable = [tool, profiled](const std::filesystem::path& executable) {
    return profiled && detail::is_tool_process(executable, tool);
  };
  return spec;
}

// The nsys words that make this rank sample GPU metrics, decided under the host's claims lock; none when another
// rank of the host samples its GPU (status says which), the plan asks for no sampling, or the claim fails.
std::vector<std::string> sampling_words(const detail::RankPlan& plan, const RankExecRequest& request,
                                        const RankIdentity& identity, RankStatus& status) {
  if (plan.gpu_metrics_option.empty()) return {};
  std::optional<std::string> visible = request.cuda_visible_devices;
  if (const auto set = plan.environment.find("CUDA_VISIBLE_DEVICES"); set != plan.environment.end())
    visible = detail::substitute_rank(set->second, identity.rank);  // as rank_process gives it to the rank
  detail::GpuMetricsRequest wanted{identity.rank, identity.local_rank, visible, plan.gpu_metrics_cuda_visible,
                                   plan.gpu_metrics_listed};
  auto decision = detail::claim_gpu_metrics_sampling(
      request.main_directory / RunLayout::ranks_directory() / "gpu-metrics", status.host, wanted);
  if (!decision) {
    status.gpu_metrics_note = "not sampling: " + decision.error().describe();
    return {};
  }
  status.gpu_metrics = decision->devices_value;
  status.gpu_metrics_bus = decision->bus;
  status.gpu_metrics_note = decision->note;
  if (decision->devices_value.empty()) return {};
  std::vector<std::string> words{plan.gpu_metrics_option + "=" + decision->devices_value};
  words.insert(words.end(), plan.gpu_metrics_words.begin(), plan.gpu_metrics_words.end());
  return words;
}

}  // namespace

Result<RankExecResult> run_rank_exec(const RankExecRequest& request, const RankIdentity& identity,
                                     ProcessRunner& runner) {
  const std::optional<Stage> stage = parse_stage(request.stage);
  if (!stage) {
    return make_error(ErrorCode::invalid_argument, "--stage " + request.stage + " is no stage",
                      "rank-exec is started by `deep-profile run --launcher ...` with stage1, nsys or ncu");
  }
  auto plan = detail::read_rank_plan(request.main_directory / RunLayout::rank_plan(*stage));
  if (!plan) return plan.error();
  const fs::path directory = request.main_directory / RunLayout::rank_stage_directory(identity.rank, *stage);
  const fs::path status_file = request.main_directory / RunLayout::rank_stage_status(identity.rank, *stage);
  if (auto created = detail::ensure_directory(directory, "the rank directory"); !created) return created.error();

  const bool profiled = plan->role != detail::kBareRole && selected(request, identity.rank);
  RankStatus status = starting_status(identity, profiled ? plan->role : detail::kBareRole);

  if (request.ranks && !request.ranks->empty() && request.ranks->back() >= identity.world_size) {
    status.outcome = "refused";
    status.reason = "--ranks " + format_rank_list(*request.ranks) + " names rank " +
                    std::to_string(request.ranks->back()) + ", outside the world size " +
                    std::to_string(identity.world_size) + " (ranks 0-" + std::to_string(identity.world_size - 1) +
                    "); nothing was run";
    if (auto written = write_status(status_file, status); !written) return written.error();
    return RankExecResult{kExitBadRequest, status.reason};
  }

  std::map<std::string, std::string> environment;  // what the plan sets for this rank, as cmd.txt records it
  const std::vector<std::string> sampling =
      profiled ? sampling_words(plan.value(), request, identity, status) : std::vector<std::string>{};
  const ProcessSpec spec = rank_process(plan.value(), request, identity, *stage, profiled, sampling, environment);
  // The rank's own argv, environment and directory, as every cmd.txt records them: pasted, it runs this rank again.
  status.command = reproduce_command_line(spec.argv, environment, spec.working_directory);
  const fs::path commands = request.main_directory / RunLayout::rank_stage_commands(identity.rank, *stage);
  if (auto written = detail::write_file_atomically(commands, status.command + "\n"); !written)
    return written.error();
  if (auto written = write_status(status_file, status); !written) return written.error();

  auto outcome = runner.run(spec);
  int exit_code = 0;
  if (!outcome) {
    status.outcome = "failed";
    status.reason = "rank " + std::to_string(identity.rank) + " could not start " + spec.argv.front() + ": " +
                    outcome.error().describe();
    exit_code = 127;
  } else {
    exit_code = record_outcome(status, outcome.value(), plan.value(),
                               RunLayout::rank_stage_output(identity.rank, *stage).string());
  }
  if (auto written = write_status(status_file, status); !written) return written.error();
  const std::string summary = "rank " + std::to_string(identity.rank) + "/" + std::to_string(identity.world_size) +
                              " (" + status.role + "): " + status.outcome +
                              (status.reason.empty() ? "" : ": " + status.reason);
  return RankExecResult{exit_code, summary};
}

}  // namespace llmprof
