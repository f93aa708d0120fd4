// run.stage = "auto": the serving preset cannot know an engine's kind names (vLLM's decode_batch,
// SGLang's decode/extend/mixed), so the capture names them: the kind with the most GPU time is what the kernel
// selection and the ncu filter should look at.
#include "pipeline/stage_choice.hpp"

#include <algorithm>
#include <vector>

#include "core/format.hpp"
#include "core/text.hpp"
#include "llmprof/config.hpp"
#include "llmprof/run_layout.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/timeline.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {

namespace {

std::string kind_figures(const StepKindFigures& kind) {
  return "`" + kind.name + "` " + format_fraction_percent(kind.gpu_time_share.value_or(0)) + " of the kinds' GPU time, " +
         std::to_string(kind.count) + " steps";
}

}  // namespace

StepKindChoice pick_step_kind(const StepKindReport& steps) {
  const auto& kinds = steps.kinds;  // by GPU time, then by count
  StepKindChoice choice;
  if (kinds.empty()) return choice;
  const bool gpu = kinds.front().gpu_time_ns > 0;
  const auto more_steps = [](const StepKindFigures& a, const StepKindFigures& b) { return a.count < b.count; };
  auto chosen = kinds.begin();
  std::vector<const StepKindFigures*> tied;
  if (gpu) {
    // Kinds within kStepKindTie of the most GPU time are level: the serving example's two kinds split its 40-step
    // window 50/50 and the lead flipped between captures of the same workload (H200). The kind with
    // more steps then wins: its kernels repeat their launch configurations, where a mixed batch brings a new GEMM
    // shape nearly every step (74 planned ncu launches, 144 s, against 10 launches and 38 s for decode).
    const auto level = static_cast<double>(kinds.front().gpu_time_ns) * (1 - kStepKindTie);
    auto last = std::find_if(kinds.begin(), kinds.end(),
                             [&](const StepKindFigures& kind) { return static_cast<double>(kind.gpu_time_ns) < level; });
    chosen = std::max_element(kinds.begin(), last, more_steps);
    for (auto kind = kinds.begin(); kind != last; ++kind) tied.push_back(&*kind);
  } else {
    chosen = std::max_element(kinds.begin(), kinds.end(), more_steps);
  }
  choice.stage = chosen->name;
  std::string others;
  const auto is_tied = [&](const StepKindFigures& kind) {
    return tied.size() > 1 && std::any_of(tied.begin(), tied.end(), [&](const auto* one) { return one == &kind; });
  };
  for (const auto& kind : kinds)
    if (kind.name != chosen->name && !is_tied(kind)) others += (others.empty() ? "" : ", ") + kind.name + " x" + std::to_string(kind.count);
  const std::string of_steps = std::to_string(chosen->count) + " of " + std::to_string(steps.steps) + " steps";
  if (!gpu) {
    choice.why = "run.stage = auto chose `" + chosen->name + "`, the step kind with the most steps inside the captured "
                 "window (" + std::to_string(chosen->count) + " of " + std::to_string(steps.steps) +
                 "; no GPU work was recorded)";
  } else if (tied.size() > 1) {
    std::string level_kinds;
    for (const auto* kind : tied) level_kinds += (level_kinds.empty() ? "" : "; ") + kind_figures(*kind);
    choice.why = "run.stage = auto chose `" + chosen->name + "`: the step kinds " + level_kinds +
                 " are within " + format_fraction_percent(kStepKindTie) +
                 " of the most GPU time inside the captured window, and of those it has the most steps (" + of_steps +
                 "; its launch configurations repeat, so ncu measures it in the fewest launches)";
  } else {
    choice.why = "run.stage = auto chose `" + chosen->name + "`, the step kind with the most GPU time inside the "
                 "captured window (" + format_fraction_percent(chosen->gpu_time_share.value_or(0)) +
                 " of the kinds' GPU time, " + of_steps + ")";
  }
  if (!others.empty()) choice.why += "; the other kinds: " + others;
  return choice;
}

Result<StepKindChoice> choose_step_kind(const PipelineRun& run, const Result<TimelineReport>& timeline) {
  const auto sqlite = run.directory.layout().resolve(RunLayout::nsys_sqlite());
  if (!timeline) return timeline.error();
  const StepWindow bounds{run.config.nsys.capture_skip, run.config.nsys.capture_count};
  const auto steps = analyze_step_kinds(timeline.value(), {}, bounds);
  if (!steps || steps->kinds.empty())
    return make_error(ErrorCode::not_found, no_step_kinds_reason(timeline.value()),
                      "set run.stage to the range the kernel selection should look at", sqlite.string());
  return pick_step_kind(steps.value());
}

Result<StepKindChoice> choose_step_kind(const PipelineRun& run) {
  return choose_step_kind(
      run, analyze_timeline(run.directory.layout().resolve(RunLayout::nsys_sqlite()), run.timeline_options()));
}

std::optional<std::string> without_own_ranges(const Result<TimelineReport>& timeline) {
  if (!timeline) {
    // analyze_timeline's no_report: the export holds no closed NVTX range at all.
    if (timeline.error().code == ErrorCode::no_report) return "the capture holds no NVTX range";
    return std::nullopt;  // unreadable: the analysis says why; nothing is decided on it here
  }
  if (has_own_ranges(timeline.value())) return std::nullopt;
  std::vector<std::string> listed;
  for (const auto& stage : timeline->stages)
    if (listed.size() < 3) listed.push_back("`" + stage.qualified_name() + "` (" + stage.library + ")");
  const std::size_t more = timeline->stages.size() - listed.size();
  return "the capture holds no NVTX range of the workload's own, only library ranges (" + join(listed, ", ") +
         (more > 0 ? " and " + std::to_string(more) + " more" : "") + "), which are never a stage";
}

void choose_auto_stage(PipelineRun& run, bool nvtx_gate_opened) {
  if (run.discovered_stage || run.whole_window_selection) return;
  // An NVTX gate that opened opened on a range of the workload's own: nothing to check.
  const bool own_gate = nvtx_gate_opened;
  if (own_gate && run.config.run.stage != kAutoStage) return;
  const auto timeline =
      analyze_timeline(run.directory.layout().resolve(RunLayout::nsys_sqlite()), run.timeline_options());
  if (!own_gate) {
    if (const auto why = without_own_ranges(timeline)) {
      // The captured window is the stage, whatever run.stage names: no range to select from, and the step view
      // infers the steps from the host's synchronisation (run.step_source = auto).
      run.whole_window_selection = true;
      run.stage_choice = *why + ", so the kernels of the whole captured window are selected, ncu takes no NVTX "
                                "filter and the steps are inferred from the host's per-step synchronisation";
      run.say(Stage::nsys, run.stage_choice);
      return;
    }
  }
  if (run.config.run.stage != kAutoStage) return;
  auto choice = choose_step_kind(run, timeline);
  if (!choice && run.capture_range() == NsysCaptureRange::cuda_profiler_api) {
    // The capture is the workload's own window (its steps, by its own cudaProfilerStart/Stop): without a step
    // range to tell kinds apart, the window itself is what to select from (engines without NVTX).
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
