// Engine steps per kind for every capture window (llmprof/step_kinds.hpp), written beside the analysis by the
// analyze stage and by `deep-profile analyze MAIN` alike.
#include "pipeline/stage_analyze_steps.hpp"

#include "core/atomic_file.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/step_tokens.hpp"
#include "llmprof/sync_steps.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof {
namespace fs = std::filesystem;

namespace {

// nsys/profile.sqlite for window 1, nsys/window-<k>/profile.sqlite for window k.
fs::path window_export(const RunLayout& layout, int window) {
  if (window == 1) return layout.resolve(RunLayout::nsys_sqlite());
  return layout.resolve(RunLayout::nsys_window_directory(window) / RunLayout::nsys_sqlite().filename());
}

// Steps inferred from the launch sequence and its synchronisation (llmprof/sync_steps.hpp), window by window.
std::vector<StepKindReport> sync_windows(const RunLayout& layout, StepWindow bounds, std::vector<std::string>& warnings) {
  std::vector<StepKindReport> windows;
  for (int window = 1; fs::exists(window_export(layout, window)); ++window) {
    auto steps = infer_sync_steps(window_export(layout, window), bounds);
    if (!steps) {
      warnings.push_back("capture window " + std::to_string(window) + ": " + steps.error().describe());
      break;
    }
    if (!steps->has_value()) break;
    windows.push_back(std::move(**steps));
  }
  return windows;
}

// run.step_source = auto takes synchronisation only where ranges cannot serve: the capture was not gated on an NVTX
// range (the workload's own window, or the whole run) and holds no NVTX range of the workload's own (none, or only
// library ranges: CCCL's scans inside a Hugging Face generate()).
bool steps_from_sync(const fs::path& main, const AnalysisReport& report, StepSource source) {
  if (source == StepSource::sync) return true;
  if (source == StepSource::ranges) return false;
  if (report.timeline && has_own_ranges(*report.timeline)) return false;
  const auto manifest = read_manifest(main);
  return manifest && manifest->capture && manifest->capture->gate != CaptureGateKind::nvtx;
}

// Window 1 from the analysis's timeline, windows 2.. from nsys/window-<k>/profile.sqlite.
std::vector<StepKindReport> step_windows(const RunLayout& layout, const AnalysisReport& report, StepWindow bounds,
                                         std::vector<std::string>& warnings) {
  std::vector<StepKindReport> windows;
  if (report.timeline) {
    if (auto steps = analyze_step_kinds(*report.timeline, {}, bounds)) windows.push_back(std::move(*steps));
  }
  for (int window = 2; !windows.empty(); ++window) {
    const fs::path sqlite =
        layout.resolve(RunLayout::nsys_window_directory(window) / RunLayout::nsys_sqlite().filename());
    if (!fs::exists(sqlite)) break;
    auto timeline = analyze_timeline(sqlite);
    if (!timeline) {
      warnings.push_back("capture window " + std::to_string(window) + ": " + timeline.error().describe());
      break;
    }
    auto steps = analyze_step_kinds(timeline.value(), windows.front().step_range, bounds);
    if (!steps) {
      warnings.push_back("capture window " + std::to_string(window) + " has no " +
                         (windows.front().step_range.empty() ? std::string("step kind ranges")
                                                             : "`" + windows.front().step_range + "` step range"));
      break;
    }
    windows.push_back(std::move(*steps));
  }
  return windows;
}

}  // namespace

std::vector<StepKindReport> write_engine_steps(const fs::path& main, const AnalysisReport& report, StepWindow bounds,
                                               std::vector<std::string>& warnings, StepSource source) {
  const RunLayout layout(main);
  std::vector<StepKindReport> windows = steps_from_sync(main, report, source)
                                            ? sync_windows(layout, bounds, warnings)
                                            : step_windows(layout, report, bounds, warnings);
  for (std::size_t w = 0; w < windows.size(); ++w)
    if (!windows[w].window_shortfall.empty())
      warnings.push_back((windows.size() > 1 ? "capture window " + std::to_string(w + 1) + ": " : std::string()) +
                         windows[w].window_shortfall);
  const fs::path json = layout.resolve(RunLayout::analysis_step_kinds());
  const fs::path markdown = layout.resolve(RunLayout::analysis_step_kinds_markdown());
  if (windows.empty()) {
    std::error_code ignored;  // an earlier analysis's figures would otherwise stand in the report
    fs::remove(json, ignored);
    fs::remove(markdown, ignored);
    return windows;
  }
  // Read again on every analysis: a tokens file fixed after the run replaces what the run's analysis attached.
  if (const fs::path tokens_file = layout.resolve(RunLayout::nsys_step_tokens()); fs::exists(tokens_file)) {
    if (auto tokens = load_step_tokens(tokens_file))
      attach_step_tokens(windows, tokens.value());
    else
      warnings.push_back("no time per token: " + tokens.error().describe());
  }
  check_step_kind_bounds(windows, warnings);  // the rule the report applies when it reads the file back
  if (auto written = detail::write_file_atomically(json, step_kinds_json(windows) + "\n"); !written)
    warnings.push_back(written.error().describe());
  if (auto written = detail::write_file_atomically(markdown, step_kinds_markdown(windows)); !written)
    warnings.push_back(written.error().describe());
  return windows;
}

namespace detail {

void write_step_kinds(PipelineRun& run, const AnalysisReport& report) {
  const StepWindow bounds{run.config.nsys.capture_skip, run.config.nsys.capture_count};
  std::vector<std::string> warnings;
  const auto windows = write_engine_steps(run.directory.path(), report, bounds, warnings, run.config.run.step_source);
  for (const auto& warning : warnings) run.warn(Stage::analyze, warning);
  const RunLayout run_layout = run.directory.layout();
  // A run that expects steps (run.stage = "auto", or a workload that wrote its step tokens) says in one line why
  // it has none, in the report too.
  if (windows.empty() && report.timeline &&
      (run.config.run.stage == kAutoStage || fs::exists(run_layout.resolve(RunLayout::nsys_step_tokens())))) {
    // Where the steps were to be inferred, the ranges are not what is missing: say what the inference lacked.
    const std::string why =
        steps_from_sync(run.directory.path(), report, run.config.run.step_source)
            ? "no engine steps: the capture holds no NVTX range of the workload's own, and none could be inferred "
              "from its launches: no launch sequence repeats between waits for the GPU (device-to-host copies or "
              "synchronisations) on its busiest launching thread"
            : no_step_kinds_reason(*report.timeline);
    run.warn(Stage::analyze, why);
    const fs::path markdown = run_layout.resolve(RunLayout::analysis_step_kinds_markdown());
    if (auto written = detail::write_file_atomically(markdown, "## Engine steps\n\n" + why + ".\n"); written)
      run.stage_report(Stage::analyze).artifacts.push_back(RunLayout::analysis_step_kinds_markdown().string());
  }
  if (windows.empty()) return;
  const RunLayout layout = run.directory.layout();
  StageReport& reported = run.stage_report(Stage::analyze);
  for (const fs::path& file : {RunLayout::analysis_step_kinds(), RunLayout::analysis_step_kinds_markdown()})
    if (fs::exists(layout.resolve(file))) reported.artifacts.push_back(file.string());
  const std::string& range = windows.front().step_range;
  const std::string source = !windows.front().inferred.empty() ? "inferred from the launch sequence and its synchronisation"
                             : range.empty()                    ? "kind ranges, each one step"
                                                                : "`" + range + "`";
  run.say(Stage::analyze, "engine steps (" + source + "): " + windows.front().verdict);
}

}  // namespace detail
}  // namespace llmprof
