// What the report reads of the step records the analysis wrote beside report.json: the engine's step kinds
// (analysis/step_kinds.json) and the straggler among ranks (analysis/ranks.csv).
#pragma once

#include "llmprof/report.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_layout.hpp"

namespace llmprof::detail {

// analysis/step_kinds.json's kind names and analysis/ranks.csv's straggler into the model; absent files leave
// them empty.
Result<void> read_step_kinds_and_ranks(const RunLayout& layout, RunReportModel& model);

}  // namespace llmprof::detail
