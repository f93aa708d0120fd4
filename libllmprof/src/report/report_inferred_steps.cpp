// The inferred steps' headline (see report_inferred_steps.hpp).
#include "report/report_inferred_steps.hpp"

#include "core/file_text.hpp"
#include "core/format.hpp"
#include "core/json_fields.hpp"

namespace llmprof::detail {

Result<void> read_inferred_steps(const RunLayout& layout, RunReportModel& model) {
  const auto path = layout.resolve(RunLayout::analysis_step_kinds());
  const auto text = read_file_text(path);
  if (!text) return {};
  auto root = parse_json_object(*text, path);
  if (!root) return root.error();
  try {
    const auto windows = json_objects(*root, "windows", "windows");
    if (windows.empty() || json_string(windows.front(), "inferred", "windows[].inferred").value_or("").empty())
      return {};
    ReportInferredSteps steps;
    steps.steps = json_integer(windows.front(), "steps", "windows[].steps").value_or(0);
    for (const auto& kind : json_objects(windows.front(), "kinds", "windows[].kinds")) {
      const auto count = json_integer(kind, "count", "windows[].kinds[].count").value_or(0);
      steps.kinds.emplace_back(json_string(kind, "name", "windows[].kinds[].name").value_or(""), count);
      steps.gpu_busy_ns += json_integer(kind, "gpu_busy_ns", "windows[].kinds[].gpu_busy_ns").value_or(0);
      const auto total = json_integer(kind, "total_ns", "windows[].kinds[].total_ns");
      if (!total) steps.step_time_recorded = false;
      steps.step_time_ns += total.value_or(0);
    }
    if (steps.steps > 0) model.inferred_steps = steps;
  } catch (const JsonFieldError& field) {
    return make_error(ErrorCode::parse_error, path.string() + ": field " + field.field + " has the wrong type",
                      "re-run `deep-profile analyze` on this run", path.string());
  }
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
  // A step's time and GPU work are sums over the steps, so their ratio is the window's GPU busy over its steps.
  if (!inferred.step_time_recorded || inferred.step_time_ns <= 0)
    return text + ", " + format_duration_ns(static_cast<double>(inferred.gpu_busy_ns) / steps) +
           " of GPU work per step (the step times predate this report: re-run `deep-profile analyze`).";
  const double busy = static_cast<double>(inferred.gpu_busy_ns) / static_cast<double>(inferred.step_time_ns);
  // A step lasts until its GPU work ends, so it holds that work: more GPU work than step time is a broken input.
  if (busy > 1.0 + 1e-9)
    return text + ", " + format_duration_ns(static_cast<double>(inferred.step_time_ns) / steps) +
           " per step under the profiler (GPU busy withheld: the steps' GPU work, " +
           format_duration_ns(static_cast<double>(inferred.gpu_busy_ns)) + ", exceeds their time).";
  return text + ", " + format_duration_ns(static_cast<double>(inferred.step_time_ns) / steps) +
         " per step under the profiler, GPU busy " + format_fraction_percent(busy) + " (" +
         format_duration_ns(static_cast<double>(inferred.gpu_busy_ns) / steps) + " of GPU work per step).";
}

}  // namespace llmprof::detail
