// The headline of a capture that holds no NVTX range of the workload's own: its steps were inferred from the host's
// per-step synchronisation (llmprof/sync_steps.hpp), so the headline speaks of the captured window and those steps,
// never of a library's range (llmprof/library_ranges.hpp).
#pragma once

#include <string>

#include "llmprof/report_model.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_layout.hpp"

namespace llmprof::detail {

// Reads analysis/step_kinds.json's first window into model.inferred_steps when its steps were inferred; leaves it
// unset when the file is absent or its steps came from NVTX ranges. parse_error for a field of the wrong type.
Result<void> read_inferred_steps(const RunLayout& layout, RunReportModel& model);

// "the captured window: 16 steps inferred (uniform-1 x15, varying x1), 11.4 ms per step under the profiler, GPU busy
// 3.7% of the steps' time (417 us of GPU work per step)."; "" without inferred steps. The step time and GPU work are
// sums over the steps divided by their count; where the mean and the median step of the most frequent kind differ by
// more than half (a whole run's start-up in its first steps), the median is the step and the mean is said beside it.
// Where the two ways of finding the steps disagree, no per-step figure, and why.
std::string inferred_steps_headline(const RunReportModel& model);

}  // namespace llmprof::detail
