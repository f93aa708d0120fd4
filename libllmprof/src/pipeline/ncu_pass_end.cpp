// Ending an ncu pass's workload once the pass has profiled its planned launches. ncu intercepts every launch
// of the workload whether or not it profiles it: on the H100 (ncu 2025.3.1, the 1b decode) the first pass had
// profiled its 16 planned launches by 19.6 s and ran on to 49.8 s. SIGTERM to the workload (ncu's
// descendants, not ncu) at that point ended the pass at 25.6 s; ncu printed "==ERROR== The application
// returned an error code (15)." and still wrote its report. ncu's exit code then is the application's (the
// Debian ncu 2022.3 exits 1 after "error code (1)"), so the stage reads neither as a failure.
//
// The workload is the whole application ncu started (DescendantEnding): a serving engine's front process never
// touches CUDA, so ncu never names it, and it blocks on its worker without a timeout; ending only the worker left
// four such engines' passes running on the H100 until an outer timeout, 122-301 s, after their plans were met at
// 43-51 s. Every pass also has a bound (ncu_pass_bound): past it the workload is ended the same way.
#include <algorithm>
#include <sstream>

#include "core/format.hpp"
#include "core/text.hpp"
#include "llmprof/kernel_name.hpp"

#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/ncu_sets.hpp"

namespace llmprof::detail {
namespace {

constexpr Stage kStage = Stage::ncu;
constexpr std::string_view kApplicationError = "The application returned an error code";

// ncu's progress line names the kernel by its function name, long ones cut to a prefix and "..." (recorded:
// "nvjet_sm90_hsh_64x8_64x16_4x1...", tests/data/h100-nsight-2025.3/cli/transcripts.md).
bool progress_name_matches(const std::string& progress_name, const std::string& function_name) {
  constexpr std::string_view ellipsis = "...";
  if (progress_name == function_name) return true;
  if (!progress_name.ends_with(ellipsis)) return false;
  return function_name.starts_with(std::string_view(progress_name).substr(0, progress_name.size() - ellipsis.size()));
}

}  // namespace

NcuPassBound ncu_pass_bound(const NcuConfig& config, double estimated_seconds) {
  if (config.pass_timeout_s > 0) return {config.pass_timeout_s, "ncu.pass_timeout_s"};
  const double estimate = std::max(estimated_seconds, 0.0);
  const double bound = std::max(kPassBoundFactor * estimate, estimate + kPassBoundMargin_s);
  if (estimate <= 0) return {bound, "no estimate: " + format_seconds(kPassBoundMargin_s)};
  return {bound, format_number(kPassBoundFactor) + "x its estimate of " + format_seconds(estimate) + ", at least " +
                     format_seconds(kPassBoundMargin_s) + " past it"};
}

NcuPassEnd ncu_pass_end(const PipelineRun& run, const NcuPlan& plan, std::size_t index) {
  NcuPassEnd end;
  end.pass = index;
  const NcuPlanPass& pass = plan.passes.at(index);
  end.bound = ncu_pass_bound(run.config.ncu, pass.estimated_seconds);
  if (!run.config.ncu.end_workload_when_planned) return end;
  end.planned_launches = pass.profiled_launches;
  for (const auto& kernel : pass.kernels) {
    const auto mangled = plan.mangled_names.find(kernel);
    end.expect_kernel(kernel, pass.by_mangled_name && mangled != plan.mangled_names.end() ? mangled->second
                                                                                          : std::vector<std::string>{});
  }
  return end;
}

NcuPassEnd counted_pass_end(const PipelineRun& run, std::string label, std::int64_t launch_count,
                            std::optional<std::int64_t> recorded_launches) {
  const NcuConfig& config = run.config.ncu;
  NcuPassEnd end;
  end.label = std::move(label);
  const StageRecord* bare = run.recorded(Stage::workload);
  const double replay_s = config.seconds_per_pass > 0
                              ? config.seconds_per_pass
                              : (bare ? bare->duration_s : 0) + config.start_up_overhead_s +
                                    double(recorded_launches.value_or(0)) * config.seconds_per_intercepted_launch;
  end.bound =
      ncu_pass_bound(config, replay_s + double(std::max<std::int64_t>(launch_count, 0)) *
                                            planned_launch_cost(config).seconds_per_launch);
  if (config.end_workload_when_planned) end.planned_launches = std::max<std::int64_t>(launch_count, 0);
  return end;
}

std::string NcuPassEnd::name() const { return label.empty() ? "pass " + std::to_string(pass + 1) : label; }

void NcuPassEnd::expect_kernel(const std::string& kernel, const std::vector<std::string>& mangled_names) {
  std::vector<std::string>& names = kernels_unseen[kernel];
  names.push_back(kernel_function_name(kernel));
  names.insert(names.end(), mangled_names.begin(), mangled_names.end());
}

void NcuPassEnd::finished_launch(const std::string& kernel_name, std::chrono::steady_clock::time_point now) {
  ++profiled_launches;
  if (!first_launch_at_s) first_launch_at_s = std::chrono::duration<double>(now - started).count();
  std::erase_if(kernels_unseen, [&](const auto& kernel) {
    return std::any_of(kernel.second.begin(), kernel.second.end(),
                       [&](const std::string& name) { return progress_name_matches(kernel_name, name); });
  });
  if (planned_launches <= 0 || ended_at_s || profiled_launches < planned_launches) return;
  // A kernel not seen yet waits, up to a bound: launch configurations the nsys capture did not have (a batch
  // that changes step to step) would otherwise keep ncu profiling new ones to the end of the workload.
  const bool bound_reached = profiled_launches >= kUnseenKernelBound * planned_launches;
  if (!kernels_unseen.empty() && !bound_reached) return;
  ended_at_s = std::chrono::duration<double>(now - started).count();
  ended_at_bound = !kernels_unseen.empty();
  ending->request();
}

std::string NcuPassEnd::describe() const {
  std::ostringstream text;
  text.precision(3);
  if (ended_at_limit) {
    text << name() << " reached its bound of " << format_seconds(bound.seconds) << " (" << bound.source << ") after "
         << profiled_launches << " profiled launches";
    if (planned_launches > 0) text << " of its " << planned_launches << " planned";
    text << ": its workload was ended and ncu kept what it had profiled; raise ncu.pass_timeout_s to give a pass longer";
    return text.str();
  }
  text << name() << " ended the workload after its " << planned_launches << " planned launches at "
       << ended_at_s.value_or(0) << " s";
  if (ended_at_bound)
    text << ", at " << profiled_launches << " profiled launches (" << kUnseenKernelBound
         << "x the plan) with " << kernels_unseen.size() << " kernel(s) not met";
  return text.str();
}

void settle_ended_workload(PipelineRun& run, NcuPassEnd& end, NcuAttempt& attempt) {
  if (!attempt.outcome || !attempt.outcome->descendants_ended) return;
  if (attempt.outcome->descendants_ended_at_limit) {
    end.ended_at_limit = true;
    end.ended_at_s = end.bound.seconds;
  }
  if (!end.ended_at_s) return;
  attempt.workload_ended = end.describe();
  const auto& killed = attempt.outcome->descendants_killed;
  if (!killed.empty())
    *attempt.workload_ended += "; SIGKILL after the " + format_seconds(run.config.ncu.workload_end_grace_s) +
                               " grace to " + join(killed, ", ");
  // The ended application's exit code (15 for SIGTERM) is ncu's error line, not a profiling error.
  auto& errors = attempt.diagnosis.errors;
  std::erase_if(errors, [](const std::string& line) { return line.find(kApplicationError) != std::string::npos; });
  StageReport& reported = run.stage_report(kStage);
  reported.workload_endings.push_back(*attempt.workload_ended + " (ncu: " + attempt.outcome->describe() + ")");
  if (end.ended_at_limit)
    run.warn(kStage, *attempt.workload_ended);
  else
    run.say(kStage, *attempt.workload_ended);
}

}  // namespace llmprof::detail
