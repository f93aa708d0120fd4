// The per-kernel ncu plan made from the nsys stage's launch table and the runs root's measured cost
// (ncu-launch-cost.json): the plan's options and its launches, before any pass runs.
#include "pipeline/ncu_plan_launches.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "core/text.hpp"
#include "pipeline/ncu_launch_cost.hpp"
#include "pipeline/ncu_sets.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::ncu;
constexpr const char* kLaunchCostFile = "ncu-launch-cost.json";

std::optional<MeasuredNcuCost> measured_ncu_cost(const PipelineRun& run) {
  return find_ncu_launch_cost(ncu_launch_cost_file(run), run.config.ncu.set, ncu_workload_key(run));
}

// "start-up to the stage 3.87 s by the nsys capture's clock + 14 s of ncu's (measured by run R) + 103808
// launches x 0.00045 s"
std::string start_up_source(double start_up_s, double overhead_s, const std::string& overhead_source,
                            std::int64_t launches, double per_launch) {
  std::ostringstream source;
  source.precision(3);
  source << "start-up to the stage " << start_up_s << " s by the nsys capture's clock + " << overhead_s
         << " s of ncu's (" << overhead_source << ") + " << launches << " launches x " << per_launch << " s";
  return source.str();
}

// The plan's options: the ncu section's budget keys, and a pass's start-up: the capture's own measure of the
// workload's start-up to the stage where the export has it, plus what ncu adds (as the runs root last measured
// it, else ncu.start_up_overhead_s), else the bare run's wall time.
NcuPlanOptions ncu_plan_options(const PipelineRun& run, KernelNameBase base,
                                std::optional<std::int64_t> recorded_launches, std::optional<double> start_up_s) {
  const NcuConfig& config = run.config.ncu;
  NcuPlanOptions options;
  options.name_base = base;
  options.launch_skip = config.launch_skip;
  options.launches_per_config = config.launches_per_config;
  options.max_launch_count = config.plan_max_launch_count;
  PlannedLaunchCost planned = planned_launch_cost(config);
  options.seconds_per_launch = planned.seconds_per_launch;
  options.seconds_per_launch_source = std::move(planned.source);
  const auto measured = measured_ncu_cost(run);
  if (measured) std::tie(options.seconds_per_launch, options.seconds_per_launch_source) =
      std::pair{measured->seconds_per_launch, measured->source};
  const StageRecord* bare = run.recorded(Stage::workload);
  const double bare_s = bare ? bare->duration_s : 0;
  // A pass that ends its workload early spares the interception of the stage's launches after its last one.
  if (config.end_workload_when_planned) options.seconds_per_intercepted_launch = config.seconds_per_intercepted_launch;
  const std::int64_t launches = recorded_launches.value_or(0);
  if (config.seconds_per_pass > 0) {
    options.seconds_per_pass = std::max(config.seconds_per_pass, bare_s);
    options.seconds_per_pass_source = "ncu.seconds_per_pass";
  } else if (start_up_s && config.end_workload_when_planned) {
    options.start_up_seconds = *start_up_s;
    const bool overhead_measured = measured && measured->start_up_overhead_s;
    const double overhead_s = overhead_measured ? *measured->start_up_overhead_s : config.start_up_overhead_s;
    options.seconds_per_pass = *start_up_s + overhead_s + double(launches) * config.seconds_per_intercepted_launch;
    options.seconds_per_pass_source =
        start_up_source(*start_up_s, overhead_s, overhead_measured ? measured->source : "ncu.start_up_overhead_s",
                        launches, config.seconds_per_intercepted_launch);
  } else {
    options.seconds_per_pass = bare_s + double(launches) * config.seconds_per_intercepted_launch;
    std::ostringstream source;
    source.precision(3);
    source << "bare run " << bare_s << " s + " << launches << " launches x " << config.seconds_per_intercepted_launch
           << " s" << (recorded_launches ? "" : " (nsys recorded no kernel table)");
    options.seconds_per_pass_source = source.str();
  }
  return options;
}

}  // namespace

fs::path ncu_launch_cost_file(const PipelineRun& run) {
  return run.directory.path().parent_path() / kLaunchCostFile;
}

std::string ncu_workload_key(const PipelineRun& run) { return join(run.workload.argv, " "); }

// ncu.plan = per-kernel: the launches of each selected kernel and launch configuration to profile, from
// the stage's launch table in the nsys SQLite export (without one, from the selection's counts alone).
// The node-traced capture's export when the selection came from it: the first one has no graph kernel rows.
NcuPlan plan_launches(PipelineRun& run, const KernelSelection& selection, KernelNameBase base, const NsysOutput& nsys) {
  const bool node_capture = nsys.kernels_from_node_capture;
  std::vector<StageKernelLaunch> launches;
  const fs::path sqlite =
      run.directory.layout().resolve(node_capture ? RunLayout::nsys_node_sqlite() : RunLayout::nsys_sqlite());
  if (!fs::exists(sqlite)) {
    run.say(kStage,
            "no nsys SQLite export (nsys.export_sqlite): the ncu plan cannot tell launch configurations "
            "apart and plans from the kernels' counts alone");
  } else if (auto read = run.whole_window_selection ? read_capture_kernel_launches(sqlite)
                                                     : read_stage_kernel_launches(sqlite, selection.stage);
             read) {
    // The whole window's launches when it is the stage (without them the plan of an engine without
    // NVTX knew no launch configuration nor mangled name, and ncu profiled 8 of its 30 planned launches in 185 s).
    launches = std::move(read.value());
  } else {
    run.say(kStage, "the ncu plan plans from the kernels' counts alone: " + read.error().describe());
  }
  const std::optional<double> start_up_s = launches.empty() ? std::nullopt : stage_start_up_seconds(sqlite, launches);
  return fit_ncu_plan(
      selection, launches,
      ncu_plan_options(run, base, nsys.stats ? count_kernel_launches(*nsys.stats) : std::nullopt, start_up_s),
      run.config.ncu.max_seconds);
}

}  // namespace llmprof::detail
