// Engine steps per kind for every capture window (llmprof/step_kinds.hpp), written beside the analysis.
#include "pipeline/stage_analyze_steps.hpp"

#include "core/atomic_file.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/step_tokens.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;

void write_step_kinds(PipelineRun& run, const AnalysisReport& report) {
  std::vector<StepKindReport> windows;
  const StepWindow bounds{run.config.nsys.capture_skip, run.config.nsys.capture_count};
  if (report.timeline) {
    if (auto steps = analyze_step_kinds(*report.timeline, {}, bounds)) windows.push_back(std::move(*steps));
  }
  const RunLayout layout = run.directory.layout();
  for (int window = 2; !windows.empty(); ++window) {
    const fs::path sqlite =
        layout.resolve(RunLayout::nsys_window_directory(window) / RunLayout::nsys_sqlite().filename());
    if (!fs::exists(sqlite)) break;
    auto timeline = analyze_timeline(sqlite);
    if (!timeline) {
      run.warn(Stage::analyze, "capture window " + std::to_string(window) + ": " + timeline.error().describe());
      break;
    }
    auto steps = analyze_step_kinds(timeline.value(), windows.front().step_range, bounds);
    if (!steps) {
      run.warn(Stage::analyze,
               "capture window " + std::to_string(window) + " has no `" + windows.front().step_range + "` step range");
      break;
    }
    windows.push_back(std::move(*steps));
  }
  if (windows.empty()) return;
  // The workload's own count of the tokens its steps carried, when it wrote one under nsys.
  if (const fs::path tokens_file = layout.resolve(RunLayout::nsys_step_tokens()); fs::exists(tokens_file)) {
    if (auto tokens = load_step_tokens(tokens_file))
      attach_step_tokens(windows, tokens.value());
    else
      run.warn(Stage::analyze, "no time per token: " + tokens.error().describe());
  }
  StageReport& reported = run.stage_report(Stage::analyze);
  if (auto written =
          write_file_atomically(layout.resolve(RunLayout::analysis_step_kinds()), step_kinds_json(windows) + "\n");
      written)
    reported.artifacts.push_back(RunLayout::analysis_step_kinds().string());
  if (auto written = write_file_atomically(layout.resolve(RunLayout::analysis_step_kinds_markdown()),
                                           step_kinds_markdown(windows));
      written)
    reported.artifacts.push_back(RunLayout::analysis_step_kinds_markdown().string());
  run.say(Stage::analyze, "engine steps (`" + windows.front().step_range + "`): " + windows.front().verdict);
}

}  // namespace llmprof::detail
