// run.json's record of each stage: only the stage table (deep_profiler.cpp) and a resumed run's start
// (deep_profiler_resume.cpp) call these; stages describe what they did in their StageReport instead.
#pragma once

#include <vector>

#include "llmprof/run_directory.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

// Rewrites run.json; a failure is said, not fatal (a full disk is remembered in run.disk_full).
void write_manifest_or_warn(PipelineRun& run);
// The one writer of a StageReport into run.json's StageRecord: lists appended, the fields the report set replaced.
void apply_stage_report(StageRecord& record, StageReport&& report);
// What `stage` reported so far goes into its record (apply_stage_report); its report starts afresh.
void record_stage_report(PipelineRun& run, Stage stage);
// Files a stage left in its own folder but did not list are added to its report's artifacts.
void record_unlisted_files(PipelineRun& run, Stage stage);
// What run.json keeps of a stage's typed output: the nsys stage's capture record.
void record_outputs(PipelineRun& run, Stage stage, const StageOutputs& outputs);
// A resumed run's records of the probe and of the stages in `rerun` start afresh (those stages run again);
// returns what the `rerun` ones had said before, for run.json's resumption record.
std::vector<ResumptionRecord::PreviousStage> restart_stage_records(PipelineRun& run, const std::vector<Stage>& rerun);

}  // namespace llmprof::detail
