// Range discovery on request, before any profile: which NVTX ranges a workload emits (names, counts,
// nesting), whether it opens its own profiling window (cudaProfilerStart/Stop), and the --set line that would
// profile it. The same discovery the nsys stage runs when a gate never opens (llmprof/range_discovery.hpp),
// for a user who does not know the names yet: `deep-profile run --discover -- CMD`.
#pragma once

#include <filesystem>

#include "llmprof/clock.hpp"
#include "llmprof/config.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/process.hpp"
#include "llmprof/range_discovery.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

struct WorkloadDiscovery {
  RunSummary run;            // the discovery run (its MAIN keeps the capture, its SQLite export and run.json)
  RangeDiscovery discovery;  // what the capture shows
};

// One light run of `config`'s workload: the probe, then nsys ungated (--capture-range=none) with NVTX and
// CUDA API tracing only (no sampling, no context switches), exported to SQLite; no bare run, no ncu, no
// analysis, no report. The run id gets a "-discovery" suffix when one was set. Errors: the run could not
// start (DeepProfiler::run's errors), its nsys stage did not succeed (no_report, naming the stage's reason and
// MAIN), or the capture holds no NVTX range (no_report: the workload emits none on a thread nsys traces).
Result<WorkloadDiscovery> discover_workload_ranges(DeepProfileConfig config, ProcessRunner& runner, const Clock& clock,
                                                   ProgressCallback progress = {},
                                                   DeepProfilerEnvironment environment = {});

}  // namespace llmprof
