// Range discovery: which NVTX ranges a workload emits (names, counts, nesting), whether it opens its own
// profiling window (cudaProfilerStart/cudaProfilerStop), and the settings that would profile it; read from
// the SQLite export of a light, ungated capture (nsys --trace=nvtx,cuda, no sampling).
//
// Used when an NVTX gate or a cudaProfilerApi window never opened, and on request; instead of "the range
// names are unknown", the user gets the names and the exact --set line, or (run.on_empty_gate = discover)
// the run goes on with the best choice. A workload with no range of its own (none, or only a library's:
// llmprof/library_ranges.hpp) gets its own window or the whole run, which the run then follows by itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/result.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/timeline.hpp"

namespace llmprof {

struct DiscoveredRange {
  std::string name;
  std::string domain;                 // empty: the default domain
  std::optional<std::string> parent;  // qualified name of the range that encloses most of its instances
  // Every enclosing range and how many of its instances it holds, most first (a range's first instance need not
  // sit where most do: the bundled example's first `attention` is in `prefill`, 128 of 132 in `decode_step`).
  std::vector<std::pair<std::string, std::int64_t>> parents;
  int level = 0;
  std::int64_t count = 0;
  std::int64_t gpu_time_ns = 0;
  // The library that emits it (llmprof/library_ranges.hpp: CCCL, PyTorch, ...); empty for the workload's own range.
  // Listed, never chosen.
  std::string library;
  std::string qualified_name() const { return domain.empty() ? name : domain + ":" + name; }
};

struct RangeDiscovery {
  std::vector<DiscoveredRange> ranges;    // outermost first, then by first start (the timeline's order)
  std::int64_t profiler_start_calls = 0;  // cudaProfilerStart, from CUPTI_ACTIVITY_KIND_RUNTIME
  std::int64_t profiler_stop_calls = 0;
  // The workload's own profiling windows: [cudaProfilerStart, the next cudaProfilerStop] in the capture's time
  // (a Start without a Stop runs to the capture's end).
  std::vector<std::pair<std::int64_t, std::int64_t>> profiler_windows;
  std::int64_t kernels = 0;  // CUDA kernels in the capture (CUPTI_ACTIVITY_KIND_KERNEL), wherever they ran
  std::int64_t cuda_calls = 0;  // CUDA runtime API calls traced (CUPTI_ACTIVITY_KIND_RUNTIME)
  std::optional<StepKindReport> steps;  // when a step range with kinds was found
  // The choice: the range whose kernels to select and profile (run.stage, ncu.nvtx_include), and the capture
  // that opens on the workload's own window or an enclosing range ("cudaProfilerApi", "nvtx", "none").
  std::string stage;
  std::string capture_range;
  std::string nvtx_capture;                // with capture_range "nvtx"
  std::string why;                         // one sentence: what was chosen and why
  // The chosen range has an instance inside the workload's profiling windows (true when it opens none): only then
  // does the suggested capture follow those windows.
  bool chosen_in_window = true;
  std::vector<std::string> set_arguments;  // "nsys.capture_range=cudaProfilerApi", ... (one --set each)
  std::string set_line() const;            // "--set a=b --set c=d"
  // Whether the workload emits a range of its own (library ranges do not count). Without one there is no range to
  // choose (`stage` is empty): the capture follows the workload's own window (cudaProfilerStart/Stop) or takes the
  // whole run, its kernels are selected as a whole and the steps are inferred (llmprof/sync_steps.hpp).
  bool own_ranges() const;
};

// From an analysed timeline and the export it came from (for the profiler API calls). The choice, among the step
// kinds when there are any (nested under a step range or standing alone), else among every range whatever its
// nesting: the most GPU time, else (no GPU work, e.g. on a CPU machine) the most instances. When the workload
// opens profiling windows, only what falls inside them counts, and a range with instances inside them is
// preferred; the capture opens on cudaProfilerStart only when the chosen range has an instance inside a window,
// else on a range that occurs once and encloses every instance of the chosen one, else it is ungated.
// Error(no_report) when the export holds no NVTX range.
// Library ranges (TimelineStage::library) are listed but never chosen, neither as the stage nor as the capture's
// gate; with only such ranges the choice is the workload's window or the whole run (own_ranges()).
Result<RangeDiscovery> discover_ranges(const TimelineReport& timeline, const std::filesystem::path& sqlite_export);

// discover_ranges over an export read here (analyze_timeline, library ranges marked by `library_ranges`); an export
// without any NVTX range is no error: its discovery lists no range, counts the profiler calls, and chooses the
// workload's window or the whole run.
Result<RangeDiscovery> discover_capture(const std::filesystem::path& sqlite_export,
                                        const LibraryRanges& library_ranges = {});

// Several lines: the ranges with counts and nesting, the profiler API calls, the choice and the --set line.
std::string describe_discovery(const RangeDiscovery& discovery);

}  // namespace llmprof
