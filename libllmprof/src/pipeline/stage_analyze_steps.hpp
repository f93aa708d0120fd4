// The analyze stage's engine-step figures: step kinds of every capture window into analysis/step_kinds.*.
#pragma once

#include "llmprof/analysis.hpp"

namespace llmprof::detail {

struct PipelineRun;

// Window 1 from the analysis's timeline, windows 2.. from nsys/window-<k>/profile.sqlite. Writes nothing when
// no window has a step range with kinds; a window that cannot be read is a warning of the stage.
void write_step_kinds(PipelineRun& run, const AnalysisReport& report);

}  // namespace llmprof::detail
