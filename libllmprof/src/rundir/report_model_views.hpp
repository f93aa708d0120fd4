// Views of the report model that both the analysis (which computes the verdict from it) and the report (which
// renders it) need: the timeline stage behind a Stages row, a stage by name, the run's main stage, what a stage's
// step is in words, and a stage verdict's class. One home each, so that the verdict's sentences and the report's
// tables say the same.
#pragma once

#include <optional>
#include <string>

#include "llmprof/report_model.hpp"

namespace llmprof::detail {

// The timeline stage behind a Stages row: same qualified name, and the timeline saw its GPU work or
// its launches (then the analysis took the timeline's busy fraction and verdict for it). nullptr else.
const TimelineStage* timeline_stage_of(const RunReportModel& model, const ReportStage& stage);

// The stage of that qualified name ("domain:name", or the plain name in the default domain), else the first of
// that plain name; nullptr when none.
const ReportStage* stage_named(const RunReportModel& model, const std::string& qualified_or_plain);

// Whether the analysis measured the stage: its kernel time and its verdict.
bool measured_stage(const ReportStage& stage);

// The run's main stage, the one the headline speaks of: the profiled stage (ncu's selection), else `decode`, else
// the outermost measured stage with the most kernel time; never a library's range (CCCL's
// `cub::DeviceScan::InclusiveScan`: ReportStage::library). nullptr when no stage of the workload's own was measured.
const ReportStage* main_stage(const RunReportModel& model);

// The part of a stage verdict before its first ':' ("host/launch-bound", "runs as CUDA graphs").
std::string verdict_class(const std::string& verdict);

// The stage's StepBasis; nullopt for a spelling this version does not know (or none).
std::optional<StepBasis> step_basis_of(const ReportStage& stage);
// A step count as the report writes it ("2,016"); "?" when unknown.
std::string step_count_text(const std::optional<double>& count);
// The child range named in an analysis's steps_source ("48 `decode_step` ranges, ..." -> "`decode_step`").
std::string step_child_range(const std::string& steps_source);
// "`name`".
std::string in_backticks(const std::string& name);

// One sentence saying which step the figures are per and what defined it: "A step is one of its 48 `decode_step`
// ranges.", or, with no step known, "No step is known inside `decode`: its figures are per range, which holds
// 2,016 GPU launches."; "" when the stage's steps are not counted at all.
std::string step_definition(const RunReportModel& model, const ReportStage& stage);

}  // namespace llmprof::detail
