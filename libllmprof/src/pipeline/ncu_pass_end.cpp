// Ending an ncu pass's workload once the pass has profiled its planned launches. ncu intercepts every launch
// of the workload whether or not it profiles it: on the H100 (ncu 2025.3.1, the 1b decode) the first pass had
// profiled its 16 planned launches by 19.6 s and ran on to 49.8 s. SIGTERM to the workload (ncu's
// descendants, not ncu) at that point ended the pass at 25.6 s; ncu printed "==ERROR== The application
// returned an error code (15)." and still wrote its report. ncu's exit code then is the application's (the
// Debian ncu 2022.3 exits 1 after "error code (1)"), so the stage reads neither as a failure.
#include <algorithm>
#include <sstream>

#include "llmprof/kernel_name.hpp"

#include "pipeline/deep_profiler_internal.hpp"

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

NcuPassEnd ncu_pass_end(const PipelineRun& run, const NcuPlan& plan, std::size_t index) {
  NcuPassEnd end;
  end.pass = index;
  if (!run.config.ncu.end_workload_when_planned) return end;
  const NcuPlanPass& pass = plan.passes.at(index);
  end.planned_launches = pass.profiled_launches;
  for (const auto& kernel : pass.kernels) {
    const auto mangled = plan.mangled_names.find(kernel);
    end.expect_kernel(kernel, pass.by_mangled_name && mangled != plan.mangled_names.end() ? mangled->second
                                                                                          : std::vector<std::string>{});
  }
  return end;
}

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
  text << "pass " << pass + 1 << " ended the workload after its " << planned_launches << " planned launches at "
       << ended_at_s.value_or(0) << " s";
  if (ended_at_bound)
    text << ", at " << profiled_launches << " profiled launches (" << kUnseenKernelBound
         << "x the plan) with " << kernels_unseen.size() << " kernel(s) not met";
  return text.str();
}

void settle_ended_workload(PipelineRun& run, const NcuPassEnd& end, NcuAttempt& attempt) {
  if (!attempt.outcome || !attempt.outcome->descendants_ended || !end.ended_at_s) return;
  attempt.workload_ended = end.describe();
  // The ended application's exit code (15 for SIGTERM) is ncu's error line, not a profiling error.
  auto& errors = attempt.diagnosis.errors;
  std::erase_if(errors, [](const std::string& line) { return line.find(kApplicationError) != std::string::npos; });
  StageReport& reported = run.stage_report(kStage);
  reported.workload_endings.push_back(*attempt.workload_ended + " (ncu: " + attempt.outcome->describe() + ")");
  run.say(kStage, *attempt.workload_ended);
}

}  // namespace llmprof::detail
