// run.stage = "auto" (issue 34): the serving preset cannot know an engine's kind names (vLLM's decode_batch,
// SGLang's decode/extend/mixed), so the capture names them: the kind with the most GPU time is what the kernel
// selection and the ncu filter should look at.
#include "pipeline/stage_choice.hpp"

#include <algorithm>

#include "core/format.hpp"
#include "llmprof/config.hpp"
#include "llmprof/run_layout.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/timeline.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {

Result<StepKindChoice> choose_step_kind(const PipelineRun& run) {
  const auto sqlite = run.directory.layout().resolve(RunLayout::nsys_sqlite());
  auto timeline = analyze_timeline(sqlite);
  if (!timeline) return timeline.error();
  const StepWindow bounds{run.config.nsys.capture_skip, run.config.nsys.capture_count};
  const auto steps = analyze_step_kinds(timeline.value(), {}, bounds);
  if (!steps || steps->kinds.empty())
    return make_error(ErrorCode::not_found, no_step_kinds_reason(timeline.value()),
                      "set run.stage to the range the kernel selection should look at", sqlite.string());
  const auto& kinds = steps->kinds;  // by GPU time, then by count
  const bool gpu = kinds.front().gpu_time_ns > 0;
  const auto chosen = gpu ? kinds.begin() : std::max_element(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) {
    return a.count < b.count;
  });
  StepKindChoice choice;
  choice.stage = chosen->name;
  std::string others;
  for (const auto& kind : kinds)
    if (kind.name != chosen->name) others += (others.empty() ? "" : ", ") + kind.name + " x" + std::to_string(kind.count);
  choice.why = "run.stage = auto chose `" + chosen->name + "`, the step kind with " +
               (gpu ? "the most GPU time inside the captured window (" +
                          format_fraction_percent(chosen->gpu_time_share) + " of the kinds' GPU time, " +
                          std::to_string(chosen->count) + " of " + std::to_string(steps->steps) + " steps)"
                    : "the most steps inside the captured window (" + std::to_string(chosen->count) + " of " +
                          std::to_string(steps->steps) + "; no GPU work was recorded)") +
               (others.empty() ? std::string() : "; the other kinds: " + others);
  return choice;
}

void choose_auto_stage(PipelineRun& run) {
  if (run.config.run.stage != kAutoStage || run.discovered_stage || run.whole_window_selection) return;
  auto choice = choose_step_kind(run);
  if (!choice && run.config.nsys.capture_range == NsysCaptureRange::cuda_profiler_api) {
    // The capture is the workload's own window (its steps, by its own cudaProfilerStart/Stop): without a step
    // range to tell kinds apart, the window itself is what to select from (issue 34: engines without NVTX).
    run.whole_window_selection = true;
    run.stage_choice = "run.stage = auto found no step kind (" + choice.error().message +
                       "); the capture is the workload's own profiling window, so the kernels of the whole window "
                       "are selected and ncu takes no NVTX filter";
    run.say(Stage::nsys, run.stage_choice);
    return;
  }
  if (!choice) {
    run.warn(Stage::nsys, "run.stage = auto: " + choice.error().message);
    return;
  }
  run.discovered_stage = choice->stage;
  run.stage_choice = choice->why;
  run.say(Stage::nsys, choice->why);
}

}  // namespace llmprof::detail
