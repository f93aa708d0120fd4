// What a stage's "per step" figures are per (ReportStage::step_basis, found by the analysis): the words every
// renderer uses for it, and the unit of a report.json written before the analysis recorded one.
#pragma once

#include <string>

#include "llmprof/report.hpp"
#include "rundir/report_model_views.hpp"

namespace llmprof::detail {

// step_definition, the sentence naming a stage's step, is shared with the analysis: rundir/report_model_views.hpp.

// Short cell for the Stages table's Steps column: "48 `decode_step`", "128 tokens (bare run)", "64 graph launches",
// "16 inferred", "128, one each", "2,048 ranges (no step)" ("1 range (no step)").
std::string steps_cell(const ReportStage& stage);

// What the Steps column counts, and for each stage whose steps lie inside its range, how they were found; plain text.
std::string steps_caption(const RunReportModel& model);

// A report.json written before step_basis existed: each stage's unit as that analysis counted it (the workload's
// decode steps where steps_source says so, an engine step kind, else the range's instances), and for one written
// before `steps` existed, the count the report then used (a single instance counts the instances of the range that
// repeats inside it).
void complete_step_units(RunReportModel& model);

}  // namespace llmprof::detail
