// The ncu stage's passes: what one pass profiles (NcuPassFilter), what came of it (NcuAttempt), the
// per-kernel plan's passes and progress, the follow-up passes, and the raw CSV they all feed.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llmprof/kernel_name.hpp"
#include "llmprof/ncu_command.hpp"
#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/ncu_plan.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

// Pieces of the ncu stage that the ranked stages share. Directories are relative to MAIN.
std::optional<StageResult> ncu_stage_precondition(const PipelineRun& run, const NcuInputs& inputs);
NcuCommand ncu_profile_command(const PipelineRun& run, const NcuInfo& ncu,
                               const std::optional<std::string>& kernel_regex, std::optional<std::int64_t> launch_count,
                               const std::filesystem::path& output,
                               std::optional<std::int64_t> launch_skip = std::nullopt,
                               std::optional<NcuFilterMode> filter_mode = std::nullopt, bool by_mangled_name = false);

// What one ncu pass profiles: the selection's regex and bound (bounded plan), nothing (unfiltered), one
// kernel a pass missed (follow-up passes), or one pass of the per-kernel plan (per launch configuration).
struct NcuPassFilter {
  std::optional<std::string> kernel_regex;
  std::optional<std::int64_t> launch_count;
  std::optional<std::int64_t> launch_skip;  // unset: ncu.launch_skip
  std::optional<NcuFilterMode> filter_mode;
  bool by_mangled_name = false;         // --kernel-name-base mangled instead of ncu.kernel_name_base
  std::string output_name = "profile";  // ncu/<output_name>.ncu-rep
};

struct NcuAttempt {
  std::optional<StageResult> problem;  // could not run, invalid, interrupted, timed out
  NcuOutputDiagnosis diagnosis;
  std::optional<ProcessOutcome> outcome;
  std::string filters;
  // The stage ended the workload once the pass's planned launches were profiled (ncu_pass_end.cpp): ncu's
  // "The application returned an error code (15)" is gone from the diagnosis and its exit code is no failure.
  std::optional<std::string> workload_ended;
  // ncu ran past its timeout and was killed, but its report exists: kept, and the stage says so.
  bool kept_after_timeout = false;
  bool succeeded() const {
    return outcome && (outcome->succeeded() || (workload_ended && outcome->exited) || kept_after_timeout);
  }
};

// How far past its estimate the ncu stage may run before it says so (progress line, stage warning).
inline constexpr double kPastEstimateFactor = 2.0;

// Progress of the per-kernel plan across its passes: launches finished and the time to go.
struct NcuPlanProgress {
  std::int64_t planned = 0;
  std::int64_t finished = 0;
  double seconds_per_launch = 0;  // the plan's figure until launches have finished
  std::chrono::steady_clock::time_point started;
  double estimated_seconds = 0;  // the plan's estimate: a line past kPastEstimateFactor times it says so
  std::string finished_launch(std::chrono::steady_clock::time_point now);  // "launch 3 of 40 planned, ETA 22 s"
};

// A pass whose kernels are not all met by its planned launch count ends at this many times that count.
inline constexpr std::int64_t kUnseenKernelBound = 2;

// Every pass's bound, unless ncu.pass_timeout_s sets one: kPassBoundFactor times its estimate, and at least
// kPassBoundMargin_s past it. Past it the pass's workload is ended as at its plan's end, and ncu keeps what it
// profiled. A first run's estimates were within 1.5x of its measured passes on the H200 (ncu 2025.3.1,
// ncu.start_up_overhead_s); 3x leaves room for a slower start-up, the minute for a short pass's (ncu's own start-up
// was 2.8-14.7 s there).
inline constexpr double kPassBoundFactor = 3.0;
inline constexpr double kPassBoundMargin_s = 60.0;
// After the bound, how long ncu may take to write its report once its application is gone before its own timeout
// kills it: on the H100 (ncu 2025.3.1) it exited 6 s after its application was sent SIGTERM.
inline constexpr double kReportWriteAllowance_s = 60.0;

struct NcuPassBound {
  double seconds = 0;
  std::string source;  // "ncu.pass_timeout_s", "3x its estimate of 25 s"
};
// The bound of a pass estimated at `estimated_seconds` (0: unknown, then kPassBoundMargin_s past nothing: 60 s).
NcuPassBound ncu_pass_bound(const NcuConfig& config, double estimated_seconds);

// Ends a pass's workload once the pass has profiled its planned launches, or at its bound (ncu_pass_end.cpp).
struct NcuPassEnd {
  std::size_t pass = 0;                // 0-based, for "pass 1 ended the workload ..."
  std::string label;                   // empty: "pass N"; else what the messages call the pass ("follow-up pass 2")
  std::int64_t planned_launches = 0;   // the pass's launches; 0: never ended early
  std::int64_t profiled_launches = 0;  // "==PROF== Profiling" lines seen so far
  // The pass's kernels without a progress line yet, each with the names a progress line may give it (its
  // function name; its mangled names when the pass filters by mangled name, as ncu 2025.3.1 then prints
  // "==PROF== Profiling \"_ZN2at6native29vectorized_elementwise_kernel...\""): with the count alone,
  // configurations the plan did not know (or ncu meeting them in another order) could end the pass before
  // a kernel's turn.
  std::map<std::string, std::vector<std::string>> kernels_unseen;
  // Expects `kernel` (an nsys name) under its function name and `mangled_names`.
  void expect_kernel(const std::string& kernel, const std::vector<std::string>& mangled_names = {});
  std::chrono::steady_clock::time_point started;
  std::optional<double> ended_at_s;  // since started, when the request was made
  // Since started, when the pass's first progress line came: the workload's start-up under ncu, plus the
  // interception of its launches up to the first the filter takes.
  std::optional<double> first_launch_at_s;
  bool ended_at_bound = false;       // ended at kUnseenKernelBound times the plan, some kernels not met
  // The pass's bound (from its estimate): the runner ends the workload there if the plan has not.
  NcuPassBound bound;
  bool ended_at_limit = false;  // the bound ended it (ended_at_s is then the bound)
  // The application ncu started, whole (ncu's direct child and everything under it), never ncu (DescendantEnding).
  std::shared_ptr<DescendantEnding> ending = std::make_shared<DescendantEnding>("ncu");
  // Counts a finished launch; requests the workload's end at the pass's last planned one.
  void finished_launch(const std::string& kernel_name, std::chrono::steady_clock::time_point now);
  // "pass 1 ended the workload after its 16 planned launches at 19.6 s", or what the bound did.
  std::string describe() const;
  std::string name() const;  // label, or "pass N"
};
// The pass's end for its attempt: the workload's end recorded (stage record, attempt.workload_ended; a warning when
// the bound ended it) and ncu's error about the ended application's exit code taken out of the diagnosis.
void settle_ended_workload(PipelineRun& run, NcuPassEnd& end, NcuAttempt& attempt);
// The end of plan pass `index` of `plan`: planned_launches 0 (run to the end) when ncu.end_workload_when_planned is
// off; bounded by the pass's estimate either way.
NcuPassEnd ncu_pass_end(const PipelineRun& run, const NcuPlan& plan, std::size_t index);
// The end of a pass with no plan (the bounded plan, its follow-up passes, the unfiltered re-run): its
// `launch_count` launches (ncu's --launch-count over all configurations) end it; its estimate is one replay of the
// workload under ncu (ncu.seconds_per_pass, else the bare run, ncu.start_up_overhead_s and `recorded_launches`
// intercepted) and those launches.
NcuPassEnd counted_pass_end(const PipelineRun& run, std::string label, std::int64_t launch_count,
                            std::optional<std::int64_t> recorded_launches);

// Runs one pass, ending its workload as `end` says, and within its bound (ncu_pass_end.cpp).
NcuAttempt run_ncu_pass(PipelineRun& run, const NcuInfo& ncu, const NcuPassFilter& filter, const std::string& log_name,
                        NcuPassEnd& end, NcuPlanProgress* plan = nullptr);
std::optional<StageResult> ncu_driver_skip(const NcuAttempt& attempt, const NcuInputs& inputs);
// Appends the data rows of `extra` to `target` when both have the same header and units rows (same set,
// sections and metrics); false leaves `target` untouched.
bool append_ncu_raw_rows(const std::filesystem::path& target, const std::filesystem::path& extra);
// One bounded pass per selected kernel with no row in raw.csv, merged into it (failures only warn).
void profile_missed_kernels(PipelineRun& run, const NcuInputs& inputs);
// The kernel launches the nsys capture recorded, when its tables count them.
std::optional<std::int64_t> recorded_kernel_launches(const NcuInputs& inputs);
// ncu.plan = per-kernel with a plan and an ncu that has --filter-mode per-launch-config: the whole stage
// by the plan; nullopt (after saying why) when the bounded plan has to run instead, with the planned
// pass in `profiled_nothing` when ncu profiled no kernels (the bounded plan then retries unfiltered).
std::optional<StageResult> run_planned_ncu(PipelineRun& run, const NcuInputs& inputs,
                                           std::optional<NcuAttempt>& profiled_nothing);
StageResult export_ncu_raw_csv(PipelineRun& run, const NcuInfo& ncu, const std::filesystem::path& report,
                               const std::filesystem::path& directory, const std::string& csv_name);
// The same, to `csv` relative to MAIN (ncu/raw.csv unless given).
StageResult export_raw_csv_of(PipelineRun& run, const NcuInfo& ncu, const std::filesystem::path& report,
                              const std::filesystem::path& csv = RunLayout::ncu_raw_csv());
// "a, b, c and 5 more" (at most 8 names), or "none listed".
std::string kernel_list(const std::vector<std::string>& names);

// The form a selection made from nsys's (demangled) kernel names is written in for ncu.kernel_name_base;
// nullopt for mangled, which no nsys name can be turned into. The one place the config's
// NcuKernelNameBase meets the selection's KernelNameBase.
std::optional<KernelNameBase> selection_name_base(NcuKernelNameBase base);

}  // namespace llmprof::detail
