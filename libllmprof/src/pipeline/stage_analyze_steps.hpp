// The analyze stage's engine-step figures: step kinds of every capture window into analysis/step_kinds.*.
#pragma once

#include "llmprof/analysis.hpp"

namespace llmprof::detail {

struct PipelineRun;

// write_engine_steps (llmprof/run_analysis.hpp) for the analyze stage: its warnings become the stage's, the files
// it wrote the stage's artifacts.
void write_step_kinds(PipelineRun& run, const AnalysisReport& report);

}  // namespace llmprof::detail
