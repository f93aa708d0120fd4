// TEMPORARY (pipeline engineer, not committed): replaced by the real stage once analysis.hpp lands.
#include "deep_profiler_internal.hpp"
namespace llmprof::detail {
StageResult run_analyze_stage(PipelineRun& run) {
  if (!run.config.run.enable_analyze) return StageResult::skipped("disabled (run.enable_analyze = false)");
  return StageResult::skipped("the analysis library is not in this build yet");
}
}  // namespace llmprof::detail
