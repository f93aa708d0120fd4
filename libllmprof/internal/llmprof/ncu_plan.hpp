// The per-kernel ncu plan: which launches of each selected kernel, and of each launch configuration of
// it, Nsight Compute profiles, in how few ncu passes (each pass replays the workload once), and what that
// is estimated to cost; after the run, which planned launches ncu's raw CSV really holds.
//
// It rests on ncu 2025.3.1's `--filter-mode per-launch-config`, which counts the launches of each function
// in each configuration apart (ncu_counting_key), so the plan replays that counting over the stage's launch
// table from nsys. Why, and the measurements behind each choice: docs/ncu-plan.md.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/kernel_name.hpp"
#include "llmprof/kernel_selection.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// One kernel launch inside the stage, in the order the workload launched them.
struct StageKernelLaunch {
  std::string kernel;  // demangled name, as nsys recorded it
  std::string grid;    // "(128, 1, 1)", ncu's "Grid Size" spelling; "" when unknown
  std::string block;   // "(256, 1, 1)"
  std::int64_t shared_memory_bytes = 0;
  std::int64_t duration_ns = 0;
  std::string mangled;  // "" when the export has no mangledName column
  std::int64_t start_ns = 0;  // GPU start, on the capture's clock (0 = the capture's start); 0 when not known
};

// "grid (128, 1, 1) block (256, 1, 1) smem 0": a launch configuration.
std::string launch_config_key(const StageKernelLaunch& launch);

// What ncu 2025.3.1's --filter-mode per-launch-config counts apart: the function (its mangled name, else the
// recorded name) in one configuration. Measured on the H200 (ncu 2025.3.1, the 1b example, one pass over 19
// functions at --launch-count 1): 37 launches profiled, grid (1, 1, 1) block (128, 1, 1) under 6 functions,
// so the count is not shared across the functions of a configuration (tests/data/ncu-plan/README.md).
std::string ncu_counting_key(const StageKernelLaunch& launch);

// "(100, 1, 8)" -> "(128, 1, 8)": each dimension raised to a power of two; the grid unchanged when it is not
// ncu's "(x, y, z)" spelling. Grids that follow the batch or the context (a continuous-batching engine, KV-cache
// copies of a growing decode) take a new value nearly every step; the plan groups a kernel's configurations by
// this bucket, so that their number stays logarithmic in the grid's range.
std::string grid_bucket(const std::string& grid);
// "grid bucket (128, 1, 8) block (256, 1, 1) smem 0": the plan's group of a kernel's launch configurations.
std::string launch_group_key(const StageKernelLaunch& launch);

struct NcuPlanOptions {
  KernelNameBase name_base = KernelNameBase::demangled;
  std::int64_t launch_skip = 0;          // --launch-skip, per launch configuration
  std::int64_t launches_per_config = 1;  // wanted per (kernel, configuration)
  std::int64_t max_launch_count = 16;    // the highest --launch-count a pass may use to reach shared configs
  double seconds_per_launch = 0.6;       // ncu cost per profiled launch: measured, H100, ncu 2025.3.1, roofline
  std::string seconds_per_launch_source = "default";
  double seconds_per_pass = 0;  // one replay of the workload under ncu, beyond the launches
  std::string seconds_per_pass_source = "default";
  // The start-up that seconds_per_pass holds, as the nsys capture measured it (stage_start_up_seconds); 0 when
  // not known. Kept in the plan so that the run can set ncu's measured start-up beside it.
  double start_up_seconds = 0;
  // What ncu spends intercepting one launch it does not profile (0.37-0.45 ms on the H100, ncu 2025.3.1). A
  // pass ends its workload once its planned launches are profiled, so a pass that ends at the stage's launch
  // i is estimated seconds_per_pass less the interception of the stage's launches after i. 0: every pass
  // costs seconds_per_pass.
  double seconds_per_intercepted_launch = 0;
  // At most this share of the stage's kernel time is left to extrapolation by choice: groups that first appear
  // after every selected kernel has appeared (grids that grow with the context) cost the replay up to their
  // first appearance; the latest of them are extrapolated from their kernel's profiled groups up to this
  // share, the rest profiled. 0: every group profiled.
  double extrapolated_share_limit = 0.05;
};

// The planned launches of one kernel in one group of launch configurations (launch_group_key()).
struct PlannedConfig {
  std::string kernel;  // nsys name
  std::string config;  // launch_config_key() of the group's first launch; "" when the table had no configurations
  std::string grid, block;  // of the group's first launch
  std::string group;        // launch_group_key(); "" without configurations
  std::int64_t group_configs = 1;    // exact configurations in the group
  std::int64_t first_launch = 0;     // 0-based index of the group's first launch in the stage's launch table
  std::int64_t stage_launches = 0;  // launches of this kernel in this configuration inside the stage
  std::int64_t stage_time_ns = 0;
  std::vector<std::int64_t> ordinals;  // 1-based among those launches: the ones ncu will profile
  std::size_t pass = 0;
  // No planned launch, but the same kernel has a profiled group: its counters are that group's (config key
  // here), per launch, scaled by nsys durations. "" when measured, or when nothing of the kernel is.
  std::string extrapolated_from;
  bool late = false;  // first appears after every selected kernel has: profiling it costs replay
  // nsys's mean duration of the planned launches; 0 when none is planned or the table has no durations.
  // ncu's figures for this configuration stand for all its launches (FLOP are scaled by the launch count),
  // so their duration next to stage_time_ns / stage_launches says how well they do.
  double planned_mean_ns = 0;
};

// How far the planned launches' mean duration may stray from their configuration's stage mean before the
// plan calls them unrepresentative: ratio above 1 + t or below 1 / (1 + t). On the recorded H100 decode
// (1b, batch 8, tests/data/ncu-plan) the planned launches of each of 27 configurations ran 0.88-1.25x its
// configuration's mean; an attention kernel profiled at the start of a long context would fall outside.
inline constexpr double kRepresentativeTolerance = 0.25;

// One ncu invocation: --kernel-name regex:... --filter-mode per-launch-config --launch-skip S --launch-count C.
struct NcuPlanPass {
  std::vector<std::string> kernels;  // nsys names
  std::string kernel_regex;
  // The regex lists mangled names (ncu --kernel-name-base mangled): with ncu 2025.3.1 only mangled names
  // reached every planned configuration (docs/ncu-plan.md).
  bool by_mangled_name = false;
  std::int64_t launch_skip = 0;
  std::int64_t launch_count = 0;
  std::int64_t profiled_launches = 0;  // every launch the pass profiles, other configurations' included
  // Stage launches replayed until the pass's last planned launch, when the pass ends its workload.
  std::int64_t replayed_launches = 0;
  double estimated_seconds = 0;
};

struct NcuPlan {
  std::string stage;
  bool configs_known = true;           // false: no launch configurations (no SQLite export); collisions unknown
  std::vector<PlannedConfig> configs;  // selection order, then first occurrence in the stage
  std::vector<NcuPlanPass> passes;
  // nsys name -> its mangled names, from the launch table; empty without a mangledName column.
  std::map<std::string, std::vector<std::string>> mangled_names;
  std::vector<std::string> kernels_without_launches;  // selected, but absent from the launch table
  // No launch planned: none past --launch-skip, or (under --kernel-name-base function) unselected namesakes
  // take every count up to max_launch_count.
  std::vector<std::string> kernels_unreached;
  std::int64_t planned_launches = 0;
  std::int64_t stage_kernel_time_ns = 0;
  double selection_coverage = 0;  // the selection's share of the stage's kernel time
  // Share of the stage's kernel time in (kernel, configuration group)s with at least one planned launch.
  double expected_coverage = 0;
  // Share in groups without a planned launch whose kernel has one: extrapolated (PlannedConfig::extrapolated_from).
  double expected_coverage_extrapolated = 0;
  std::int64_t stage_launches = 0;  // the launch table's length; 0 without one
  double seconds_per_launch = 0;
  std::string seconds_per_launch_source;
  double seconds_per_pass = 0;
  std::string seconds_per_pass_source;
  double seconds_per_intercepted_launch = 0;
  double start_up_seconds = 0;  // NcuPlanOptions::start_up_seconds
  // The two ways to passes the planner weighed and which it took, with both estimates; "" when only one was open
  // (configurations unknown, or a --launch-skip).
  std::string pass_choice;
  double estimated_seconds = 0;  // the passes' estimates
  // Kernel time of the planned configurations were every launch as long as its planned ones, over their
  // measured kernel time (nsys durations); 0 when not known (no launch table or no durations).
  double extrapolated_time_ratio = 0;
  // Indices into configs: planned configurations beyond kRepresentativeTolerance, heaviest first.
  std::vector<std::size_t> unrepresentative_configs;
  // Set by fit_ncu_plan when the plan was bounded: the bound, the kernels left out (in the order they were), and
  // the unbounded plan's estimate and expected coverage.
  double max_seconds = 0;
  std::vector<std::string> left_out_for_time;
  double unbounded_estimated_seconds = 0;
  double unbounded_expected_coverage = 0;
};

// The planned launches' mean duration over their configuration's stage mean; 0 when either is unknown.
double planned_duration_ratio(const PlannedConfig& config);
// True when the ratio is known and beyond kRepresentativeTolerance either way.
bool is_unrepresentative(const PlannedConfig& config);

// `launches` are the stage's launches in launch order (every kernel, not only the selected ones: those
// are what ncu counts). An empty `launches` plans from the selection's instance counts alone.
NcuPlan plan_ncu_launches(const KernelSelection& selection, const std::vector<StageKernelLaunch>& launches,
                          const NcuPlanOptions& options);

// plan_ncu_launches bounded by `max_seconds` of estimate (0: unbounded): while the estimate is past it and more
// than one kernel is selected, the selected kernel that gives up the least kernel time per second of estimate
// saved, among fit_candidates, is left out and the plan made again. A plan that cannot fit keeps its last kernel and says so by its
// estimate.
inline constexpr std::size_t kFitCandidatesByLaunch = 4;
// The kernels fit_ncu_plan weighs leaving out of `plan` (indices into selection.kernels, ascending): the
// kFitCandidatesByLaunch with the least kernel time per planned launch, and each kernel alone in a pass.
std::vector<std::size_t> fit_candidates(const KernelSelection& selection, const NcuPlan& plan);
NcuPlan fit_ncu_plan(const KernelSelection& selection, const std::vector<StageKernelLaunch>& launches,
                     const NcuPlanOptions& options, double max_seconds);

// A --kernel-name filter for `kernels` (nsys names): their mangled names when the plan knows one for
// every kernel (by_mangled_name), else kernel_name_regex() under `base`.
struct NcuKernelFilter {
  std::string kernel_regex;
  bool by_mangled_name = false;
};
NcuKernelFilter ncu_kernel_filter(const NcuPlan& plan, const std::vector<std::string>& kernels, KernelNameBase base);

// A row of ncu's raw CSV, as far as the check needs it.
struct ProfiledLaunch {
  std::string kernel_name;
  std::string grid;
  std::string block;
};

struct NcuPlanCheck {
  struct Shortfall {
    std::string kernel;
    std::string config;
    std::int64_t planned = 0;
    std::int64_t profiled = 0;
  };
  std::vector<Shortfall> not_profiled;            // planned (kernel, configuration) with fewer rows than planned
  std::vector<std::string> kernels_without_rows;  // planned kernels with no row at all
  std::int64_t planned_launches = 0;
  std::int64_t profiled_planned_launches = 0;  // rows that meet a planned launch (at most its count)
  std::int64_t rows = 0;
  // Share of the stage's kernel time with counters: measured (a group with at least one profiled row) plus
  // extrapolated (a group without rows whose kernel has a group with rows).
  double coverage_reached = 0;
  double coverage_measured = 0;
  double coverage_extrapolated = 0;
  // Filled by the ncu stage, not by check_ncu_plan: each plan pass's estimate beside its measured time, and
  // when ncu's first progress line of the pass came (the start-up the estimate modelled, plus ncu's own).
  struct PassTiming {
    double estimated_seconds = 0;
    double measured_seconds = 0;
    std::optional<double> first_launch_seconds;  // nullopt: no progress line (old ncu, or nothing profiled)
  };
  std::vector<PassTiming> pass_timings;
  // Filled by the ncu stage, not by check_ncu_plan: the passes whose workload it ended once their planned
  // launches were profiled ("pass 1 ended the workload after its 16 planned launches at 19.6 s"), and the
  // stage's time against its estimate.
  std::vector<std::string> workload_endings;
  double stage_seconds = 0;
};

NcuPlanCheck check_ncu_plan(const NcuPlan& plan, const std::vector<ProfiledLaunch>& rows, KernelNameBase name_base);

// The stage's kernel launches from an nsys SQLite export: kernels whose GPU execution starts inside an
// instance of the NVTX range `stage` (push/pop or start/end, any domain), in start order. Empty launch
// configurations when the export has no grid/block columns.
Result<std::vector<StageKernelLaunch>> read_stage_kernel_launches(const std::filesystem::path& sqlite_export,
                                                                  const std::string& stage);

// Every kernel launch of the export, in start order: the stage when the capture is the workload's own
// profiling window and no range tells its kernels apart (run.stage = auto on an engine without NVTX).
Result<std::vector<StageKernelLaunch>> read_capture_kernel_launches(const std::filesystem::path& sqlite_export);

// Seconds from the profiled process's start to the stage's first kernel launch, by the capture's own clock: the
// session's start to the capture's (ANALYSIS_DETAILS.startTime, Nsight Systems 2025.3) plus the first of
// `launches` (read from the same export). An ncu pass replays the workload up to there before it profiles
// anything. nullopt when the export has no ANALYSIS_DETAILS or `launches` is empty.
std::optional<double> stage_start_up_seconds(const std::filesystem::path& sqlite_export,
                                             const std::vector<StageKernelLaunch>& launches);

// ncu/plan.json, one record: the plan, and after the ncu stage its check and the cost per launch it measured.
// One field table per type (analysis/ncu_plan_record.hpp) writes it and reads it back; docs/report-json.md has a
// row per key.
struct NcuPlanFile {
  NcuPlan plan;
  std::optional<NcuPlanCheck> check;
  std::optional<double> measured_seconds_per_launch;
  // Figures read back that broke their row's bound, withheld (a coverage past 1, a negative count); empty as written.
  std::vector<std::string> warnings;
};

// ncu/plan.json: "llmprof.ncu_plan/1"; the check and the measured cost when given.
std::string ncu_plan_json(const NcuPlan& plan, const std::optional<NcuPlanCheck>& check = std::nullopt,
                          std::optional<double> measured_seconds_per_launch = std::nullopt);
// ncu/plan.json read back by the same table: an error names the file and the key of a value of the wrong type, a
// missing stage or a check without its measured / extrapolated split; a figure past its bound is withheld (0) with
// a warning in `warnings`. Fields the planner keeps only in memory (mangled names, the unrepresentative indices)
// come back empty.
Result<NcuPlanFile> read_ncu_plan_json(std::string_view text, const std::string& source_name);
Result<NcuPlanFile> read_ncu_plan_file(const std::filesystem::path& plan_json);
// "ncu.max_seconds = 30 s: the plan of every selected kernel was estimated at ...": empty when nothing was left out.
std::string ncu_plan_bound_text(const NcuPlan& plan);
// The plan for the log and the console: passes, launches per kernel, estimate.
std::string ncu_plan_text(const NcuPlan& plan);

}  // namespace llmprof
