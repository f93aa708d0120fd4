// The timeline engine: per NVTX range instance, what the CPU did and what the GPU work it launched did,
// from the nsys SQLite export (`nsys export --type sqlite`), and stage figures built from instances.
//
// Why a timeline and not the `nsys stats` summaries: the summaries cannot see CUDA graph executions
// (with the default --cuda-graph-trace=graph only CUPTI_ACTIVITY_KIND_GRAPH_TRACE holds them), measure
// busy over the GPU projection instead of over the time the stage took, and cannot tell GPU work that
// was launched inside a range but never recorded (the range closed before the GPU finished).
//
// Attribution: an API call belongs to every range instance open on its thread when the call starts;
// a GPU activity belongs to the instances of its launching call (joined by process and correlation id,
// since ids are per process and the ranks of one capture reuse them), wherever and whenever it ran.
// Graph kernels traced per node carry the graph launch's correlation id, so they
// land in the range whose thread launched the graph.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/library_ranges.hpp"
#include "llmprof/result.hpp"
#include "llmprof/timeline_record.hpp"

namespace llmprof {

struct TimelineOptions {
  // A stage whose GPU busy fraction (union busy over the stage's span) is below this is host-bound,
  // unless its GPU work is mostly CUDA graph executions.
  double host_bound_busy_fraction = 0.5;
  // Leading instances longer than this multiple of the median are warm-up (first-call overhead,
  // graph capture, autotuning); at most half of a stage's instances are ever set aside.
  double warmup_outlier_factor = 1.5;
  std::size_t kernels_per_stage = 10;  // kernel table length per stage, by total time
  // False: the capture was taken without CUDA trace (nsys.trace without "cuda"), so TimelineReport::cuda_untraced
  // holds whatever the export says. True: inferred from the export (samples of a GPU but no CUDA call).
  bool cuda_traced = true;
  // Which ranges are a library's (TimelineStage::library): the built-in rules and run.ignore_ranges.
  LibraryRanges library_ranges;
};

// Reads the export and builds the report. Errors name the file: not_found, parse_error (not SQLite,
// truncated, not nsys, unknown schema), no_report (no NVTX range in the export: nothing to attribute).
Result<TimelineReport> analyze_timeline(const std::filesystem::path& sqlite_export,
                                        const TimelineOptions& options = {});

// Wall time of a profiled stage against the bare (unprofiled) run of the same stage: a note for
// MeasurementValidity, or nullopt when either side is missing.
std::optional<std::string> profiler_slowdown_note(const TimelineStage& stage, double bare_stage_s,
                                                  std::int64_t bare_instances);

// The report without the stages of library ranges (TimelineStage::library): what the workload itself marked, for
// choosing a stage, a gate or step kinds. Their instances' GPU work stays with the workload's stages that hold them.
TimelineReport without_library_ranges(TimelineReport report);
// Whether the report holds a range of the workload's own (a stage that is not a library's).
bool has_own_ranges(const TimelineReport& report);

// JSON of the report, as analysis/report.json holds it under "timeline" (every instance kept).
std::string timeline_json(const TimelineReport& report);

}  // namespace llmprof
