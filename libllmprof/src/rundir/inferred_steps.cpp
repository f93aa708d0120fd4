// The inferred steps' headline (see inferred_steps.hpp).
#include "rundir/inferred_steps.hpp"

#include <algorithm>

#include "core/file_text.hpp"
#include "core/format.hpp"
#include "llmprof/step_kinds_record.hpp"

namespace llmprof::detail {

Result<void> read_inferred_steps(const RunLayout& layout, RunReportModel& model) {
  const auto path = layout.resolve(RunLayout::analysis_step_kinds());
  const auto text = read_file_text(path);
  if (!text) return {};
  // The figures a bound withheld are read as absent; the report's reader of this file (report_step_records.cpp)
  // carries the warnings.
  auto file = read_step_kinds_json(*text, path.string());
  if (!file) return file.error();
  if (file->windows.empty() || file->windows.front().inferred.empty()) return {};
  const StepKindReport& window = file->windows.front();
  ReportInferredSteps steps;
  steps.steps = window.steps;
  steps.inference_check = window.inference_check;
  steps.figures_withheld = window.figures_withheld;
  for (const StepKindFigures& kind : window.kinds) {
    steps.kinds.emplace_back(kind.name, kind.count);
    steps.kind_p50_ns.push_back(kind.step_time.p50_ns);
    steps.gpu_busy_ns += kind.gpu_busy_ns;
    steps.step_time_ns += kind.step_time.total_ns;
  }
  // A file written before kinds carried total_ns reads as 0 ns of step time: the headline says to re-run.
  steps.step_time_recorded = steps.step_time_ns > 0;
  if (steps.steps > 0) model.inferred_steps = steps;
  return {};
}

std::string inferred_steps_headline(const RunReportModel& model) {
  if (!model.inferred_steps) return "";
  const ReportInferredSteps& inferred = *model.inferred_steps;
  const auto steps = static_cast<double>(inferred.steps);
  std::string text = "the captured window: " + std::to_string(inferred.steps) + " steps inferred";
  if (inferred.kinds.size() > 1) {
    std::string kinds;
    for (const auto& [name, count] : inferred.kinds)
      kinds += (kinds.empty() ? "" : ", ") + name + " x" + std::to_string(count);
    text += " (" + kinds + ")";
  }
  if (inferred.figures_withheld)
    return text + "; no per-step figure: the two ways of finding them disagree (" + inferred.inference_check + ").";
  // A step's time and GPU work are sums over the steps, so their ratio is the window's GPU busy over its steps.
  if (!inferred.step_time_recorded || inferred.step_time_ns <= 0)
    return text + ", " + format_duration_ns(static_cast<double>(inferred.gpu_busy_ns) / steps) +
           " of GPU work per step (the step times predate this report: re-run `deep-profile analyze`).";
  const double busy = static_cast<double>(inferred.gpu_busy_ns) / static_cast<double>(inferred.step_time_ns);
  const double mean_ns = static_cast<double>(inferred.step_time_ns) / steps;
  // A whole run's first steps carry the start-up (the zoo's generate(): its warm-up passes took 70 ms to 1.2 s, the
  // measured ones 4 ms), so the step is the median of the most frequent kind, and the mean is said beside it when
  // the two differ by more than half.
  std::string step = format_duration_ns(mean_ns) + " per step under the profiler";
  if (const auto most = std::max_element(inferred.kinds.begin(), inferred.kinds.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      most != inferred.kinds.end() && inferred.kind_p50_ns.size() == inferred.kinds.size()) {
    const auto median = static_cast<double>(inferred.kind_p50_ns[static_cast<std::size_t>(most - inferred.kinds.begin())]);
    if (median > 0 && (mean_ns > 1.5 * median || median > 1.5 * mean_ns))
      step = format_duration_ns(median) + " per step under the profiler (the median " + most->first + " step; " +
             format_duration_ns(mean_ns) + " on average over all " + std::to_string(inferred.steps) + ")";
  }
  // A step lasts until its GPU work ends, so it holds that work: more GPU work than step time is a broken input.
  if (busy > 1.0 + 1e-9)
    return text + ", " + format_duration_ns(static_cast<double>(inferred.step_time_ns) / steps) +
           " per step under the profiler (GPU busy withheld: the steps' GPU work, " +
           format_duration_ns(static_cast<double>(inferred.gpu_busy_ns)) + ", exceeds their time).";
  return text + ", " + step + ", GPU busy " + format_fraction_percent(busy) + " of the steps' time (" +
         format_duration_ns(static_cast<double>(inferred.gpu_busy_ns) / steps) + " of GPU work per step).";
}

}  // namespace llmprof::detail
