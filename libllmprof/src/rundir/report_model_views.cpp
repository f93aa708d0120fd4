// Views of the report model shared by the analysis and the report (see report_model_views.hpp).
#include "rundir/report_model_views.hpp"

#include <cmath>
#include <cstdint>

#include "core/format.hpp"
#include "llmprof/choice.hpp"

namespace llmprof::detail {
namespace {

bool measured(const TimelineStage& stage) { return stage.gpu_time_ns > 0 || stage.partial(); }

// The GPU launches one instance of the stage holds, from the timeline: "2,016 GPU launches" (of which graphs).
std::string launches_per_instance(const RunReportModel& model, const ReportStage& stage) {
  const TimelineStage* timed = timeline_stage_of(model, stage);
  if (!timed || timed->cpu_duration.count <= 0 || timed->loss.launches <= 0) return "";
  const auto per = [&](std::int64_t total) {
    return format_count(static_cast<std::int64_t>(
        std::llround(static_cast<double>(total) / static_cast<double>(timed->cpu_duration.count))));
  };
  std::string text = per(timed->loss.launches) + " GPU launches";
  if (timed->loss.graph_launches > 0) text += " (" + per(timed->loss.graph_launches) + " of them CUDA graph launches)";
  return text;
}

}  // namespace

const TimelineStage* timeline_stage_of(const RunReportModel& model, const ReportStage& stage) {
  if (!model.timeline) return nullptr;
  const std::string name = stage.qualified_name();
  for (const auto& timed : model.timeline->stages)
    if (timed.qualified_name() == name) return measured(timed) ? &timed : nullptr;
  return nullptr;
}

const ReportStage* stage_named(const RunReportModel& model, const std::string& qualified_or_plain) {
  for (const auto& stage : model.stages)
    if (stage.qualified_name() == qualified_or_plain) return &stage;
  for (const auto& stage : model.stages)
    if (stage.name == qualified_or_plain) return &stage;
  return nullptr;
}

bool measured_stage(const ReportStage& stage) { return stage.kernel_time_ns.has_value() && !stage.verdict.empty(); }

const ReportStage* main_stage(const RunReportModel& model) {
  const auto own = [](const ReportStage* stage) { return stage && measured_stage(*stage) && stage->library.empty(); };
  if (model.top_kernel_selection) {
    if (const auto* stage = stage_named(model, model.top_kernel_selection->stage); own(stage)) return stage;
  }
  if (const auto* stage = stage_named(model, "decode"); own(stage)) return stage;
  const ReportStage* best = nullptr;
  for (const auto& stage : model.stages) {
    if (!own(&stage)) continue;
    if (!best || stage.level < best->level ||
        (stage.level == best->level && stage.kernel_time_ns.value_or(0) > best->kernel_time_ns.value_or(0)))
      best = &stage;
  }
  return best;
}

std::string verdict_class(const std::string& verdict) {
  const auto colon = verdict.find(':');
  return colon == std::string::npos ? verdict : verdict.substr(0, colon);
}

std::optional<StepBasis> step_basis_of(const ReportStage& stage) { return parse_choice<StepBasis>(stage.step_basis); }

std::string step_count_text(const std::optional<double>& count) {
  return count ? format_count(static_cast<std::int64_t>(std::llround(*count))) : std::string("?");
}

std::string step_child_range(const std::string& steps_source) {
  const auto open = steps_source.find('`');
  const auto close = open == std::string::npos ? open : steps_source.find('`', open + 1);
  return close == std::string::npos ? std::string("its step") : steps_source.substr(open, close - open + 1);
}

std::string in_backticks(const std::string& name) { return "`" + name + "`"; }

std::string step_definition(const RunReportModel& model, const ReportStage& stage) {
  const auto basis = step_basis_of(stage);
  if (!basis || !stage.steps) return "";
  const std::string count = step_count_text(stage.steps);
  switch (*basis) {
    case StepBasis::step_range:
      return "A step is one of its " + count + " " + step_child_range(stage.steps_source) + " ranges.";
    case StepBasis::graph_launches:
      return "A step is one of its " + count + " CUDA graph launches.";
    case StepBasis::bare_run_tokens:
      return "A step is one of its " + count + " decode steps (the bare run's new tokens).";
    case StepBasis::inferred_steps:
      return "A step is one of " + count + " steps inferred without NVTX.";
    case StepBasis::own_range:
      return "A step is one " + in_backticks(stage.name) + " range (" + count + " of them).";
    case StepBasis::range_instances: {
      const std::string launches = launches_per_instance(model, stage);
      return "No step is known inside " + in_backticks(stage.name) + ": its figures are per range" +
             (launches.empty() ? "" : ", which holds " + launches) + ".";
    }
  }
  return "";
}

}  // namespace llmprof::detail
