// The headline of a capture that holds no NVTX range of the workload's own: its steps were inferred from the host's
// per-step synchronisation (llmprof/sync_steps.hpp), so the headline speaks of the captured window and those steps,
// never of a library's range (llmprof/library_ranges.hpp).
#pragma once

#include <string>

#include "llmprof/report.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_layout.hpp"

namespace llmprof::detail {

// Reads analysis/step_kinds.json's first window into model.inferred_steps when its steps were inferred; leaves it
// unset when the file is absent or its steps came from NVTX ranges. parse_error for a field of the wrong type.
Result<void> read_inferred_steps(const RunLayout& layout, RunReportModel& model);

// "the captured window: 32 steps inferred, 1.61 ms per step under the profiler, GPU busy 5.3% (86.1 µs of GPU work
// per step)."; "" without inferred steps. Each figure is a sum over the steps divided by their count.
std::string inferred_steps_headline(const RunReportModel& model);

}  // namespace llmprof::detail
