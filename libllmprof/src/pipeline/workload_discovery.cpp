// discover_workload_ranges: a run of its own with only the probe and one ungated, light nsys capture, read
// back through the timeline engine and range discovery.
#include "llmprof/workload_discovery.hpp"

#include <algorithm>

#include "llmprof/run_layout.hpp"
#include "llmprof/timeline.hpp"
#include "pipeline/workload.hpp"
#include "process/process_launch.hpp"

namespace llmprof {
namespace fs = std::filesystem;

namespace {

// Ungated, NVTX and CUDA API only: kernels need no counters here, and without sampling the capture is light
// (the engine loop under the real nsys 2022.4: a few seconds).
DeepProfileConfig discovery_config(DeepProfileConfig config) {
  config.run.enable_stage1 = false;
  config.run.enable_ncu = false;
  config.run.enable_analyze = false;
  config.run.enable_report = false;
  config.run.repeats = 1;
  if (!config.run.run_id.empty()) config.run.run_id += "-discovery";
  config.nsys.capture_range = NsysCaptureRange::none;
  config.nsys.capture_windows = 0;
  config.nsys.trace = {"cuda", "nvtx"};
  config.nsys.sample = NsysProcessScope::none;
  config.nsys.cpuctxsw = NsysProcessScope::none;
  config.nsys.export_sqlite = true;
  config.nsys.graph_node_pass = false;
  return config;
}

// The workload's program, checked before the capture: nsys only says that the application failed (exit 1),
// where a program that does not exist is a missing input (exit 4), as `run` says of it.
Result<void> check_workload_program(const DeepProfileConfig& config, const DeepProfilerEnvironment& environment) {
  auto workload = detail::resolve_workload(config, environment);
  if (!workload) return workload.error();
  ProcessSpec spec;
  spec.argv = workload->argv;
  for (const auto& [name, value] : workload->environment) spec.environment[name] = value;
  auto program = detail::resolve_executable(spec);
  if (!program) return program.error();
  return {};
}

// A capture with no NVTX range and no CUDA call has nothing to choose from: most often the workload failed before
// its GPU work (a missing model file, a bad flag). nsys 2022.4 exits 0 whatever the application's status, 2025.3
// exits 1 and still writes the report, so the capture's content is what tells; "take the whole run" would be a
// confident suggestion about a run that did nothing.
std::optional<Error> nothing_to_discover(const RangeDiscovery& discovery, const StageRecord& nsys,
                                         const fs::path& main) {
  if (!discovery.ranges.empty() || discovery.cuda_calls > 0) return std::nullopt;
  const std::string exit = nsys.exit_code && *nsys.exit_code != 0
                               ? " (nsys profile exited with status " + std::to_string(*nsys.exit_code) +
                                     ", as nsys 2025.3 does when the application exits with an error)"
                               : "";
  return make_error(ErrorCode::no_report,
                    "the discovery capture recorded no NVTX range and no CUDA call" + exit +
                        ": the workload most likely failed before its GPU work, or it uses neither, so there is "
                        "nothing to discover",
                    "read the workload's output in " + (main / "nsys/profile.log").string() +
                        ", fix what stopped it, and run --discover again",
                    main.string());
}

}  // namespace

Result<WorkloadDiscovery> discover_workload_ranges(DeepProfileConfig config, ProcessRunner& runner, const Clock& clock,
                                                   ProgressCallback progress, DeepProfilerEnvironment environment) {
  if (auto program = check_workload_program(config, environment); !program) return program.error();
  auto library_ranges = library_ranges_of(config);  // run.ignore_ranges too: listed, never chosen
  if (!library_ranges) return library_ranges.error();
  DeepProfiler profiler(discovery_config(std::move(config)), runner, clock, std::move(progress),
                        std::move(environment));
  auto run = profiler.run();
  if (!run) return run.error();
  const auto nsys = std::find_if(run->stages.begin(), run->stages.end(),
                                 [](const StageRecord& stage) { return stage.name == to_string(Stage::nsys); });
  const fs::path sqlite = run->main_directory / RunLayout::nsys_sqlite();
  if (nsys == run->stages.end() || nsys->status != StageStatus::ok || !fs::exists(sqlite)) {
    const std::string why = nsys == run->stages.end() ? "no nsys stage ran" : nsys->reason;
    return make_error(ErrorCode::no_report, "the discovery capture gave no timeline: " + why,
                      "read " + (run->main_directory / "nsys/profile.log").string() + " and run.json there",
                      run->main_directory.string());
  }
  // An export without any NVTX range is a discovery too: the workload's window, else the whole run.
  auto discovery = discover_capture(sqlite, library_ranges.value());
  if (!discovery) return discovery.error();
  if (auto nothing = nothing_to_discover(discovery.value(), *nsys, run->main_directory)) return *nothing;
  return WorkloadDiscovery{std::move(run.value()), std::move(discovery.value())};
}

}  // namespace llmprof
