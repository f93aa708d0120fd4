// The words for a stage's step (see report_step_unit.hpp).
#include "report/report_step_unit.hpp"

#include <algorithm>
#include <cmath>

#include "core/format.hpp"
#include "llmprof/choice.hpp"
#include "report/report_capture_scope.hpp"
#include "rundir/report_model_views.hpp"

namespace llmprof::detail {

std::string steps_cell(const ReportStage& stage) {
  const auto basis = step_basis_of(stage);
  if (!basis || !stage.steps) return kNotComputed;
  const std::string count = step_count_text(stage.steps);
  switch (*basis) {
    case StepBasis::step_range:
      return count + " " + step_child_range(stage.steps_source);
    case StepBasis::graph_launches:
      return count + " graph launches";
    case StepBasis::bare_run_tokens:
      return count + " tokens (bare run)";
    case StepBasis::inferred_steps:
      return count + " inferred";
    case StepBasis::own_range:
      return count + ", one each";
    case StepBasis::range_instances:
      return count + (*stage.steps == 1 ? " range (no step)" : " ranges (no step)");
  }
  return kNotComputed;
}

std::string steps_caption(const RunReportModel& model) {
  std::string text =
      "Steps = what each stage's per-step figures divide by: a step is a child range that repeats once per step, a "
      "CUDA graph launch, the bare run's decode steps or steps inferred without NVTX; \"one each\" = each instance "
      "of the range is one step; \"ranges (no step)\" = no step is known inside the range, so its figures are per "
      "instance of it.";
  for (const auto& stage : model.stages) {
    const auto basis = step_basis_of(stage);
    if (!basis || *basis == StepBasis::own_range || *basis == StepBasis::range_instances) continue;
    text += " " + stage.name + ": " + stage.steps_source + ".";
  }
  return text;
}

void complete_step_units(RunReportModel& model) {
  const auto set = [](ReportStage& stage, StepBasis basis, double steps, std::string source) {
    stage.step_basis = std::string(choice_name(basis));
    stage.steps = steps;
    if (stage.steps_source.empty() || basis != StepBasis::bare_run_tokens) stage.steps_source = std::move(source);
  };
  std::vector<std::string> steps_of_parent;  // children counted as their parent's steps
  for (auto& stage : model.stages) {
    if (!stage.step_basis.empty()) continue;
    const TimelineStage* timed = timeline_stage_of(model, stage);
    const double instances = stage.steps ? *stage.steps : timed ? static_cast<double>(timed->cpu_duration.count) : 0.0;
    if (stage.steps_source.find("new_tokens") != std::string::npos) {
      set(stage, StepBasis::bare_run_tokens, instances, stage.steps_source);
      continue;
    }
    const bool kind =
        std::find(model.step_kinds.begin(), model.step_kinds.end(), stage.name) != model.step_kinds.end() ||
        std::find(model.step_kinds.begin(), model.step_kinds.end(), stage.qualified_name()) != model.step_kinds.end();
    if (kind) {
      set(stage, StepBasis::own_range, instances,
          "each " + in_backticks(stage.name) + " range is one engine step (a step kind)");
      continue;
    }
    // Before `steps` existed the report counted a single instance's steps in the range that repeats inside it.
    const TimelineStage* inner = nullptr;
    if (!stage.steps && timed && timed->cpu_duration.count == 1) {
      for (const auto& child : model.timeline->stages)
        if (child.parent == timed->qualified_name() && child.cpu_duration.count > 1 &&
            (!inner || child.cpu_duration.count < inner->cpu_duration.count))
          inner = &child;
    }
    if (inner) {
      set(stage, StepBasis::step_range, static_cast<double>(inner->cpu_duration.count),
          step_count_text(static_cast<double>(inner->cpu_duration.count)) + " " + in_backticks(inner->name) +
              " ranges, taken as its steps (the range that repeats inside it; report.json predates step units)");
      steps_of_parent.push_back(inner->qualified_name());
      continue;
    }
    if (instances > 0)
      set(stage, StepBasis::range_instances, instances,
          "no step is known inside it: per " + in_backticks(stage.name) + " range (report.json predates step units)");
  }
  // A range directly inside one whose steps that analysis counted, with as many instances as it has steps: each
  // instance is one of them (the 1b example's 128 `decode_step` in `decode`, 128 new tokens).
  const auto counted_steps_of = [&](const std::optional<std::string>& parent) -> std::optional<double> {
    for (const auto& up : model.stages)
      if (parent && (up.qualified_name() == *parent || up.name == *parent) &&
          (up.step_basis == choice_name(StepBasis::bare_run_tokens) ||
           up.step_basis == choice_name(StepBasis::step_range)))
        return up.steps;
    return std::nullopt;
  };
  for (auto& stage : model.stages) {
    if (stage.step_basis != choice_name(StepBasis::range_instances) || !stage.steps) continue;
    const bool counted =
        std::find(steps_of_parent.begin(), steps_of_parent.end(), stage.qualified_name()) != steps_of_parent.end();
    const auto parent_steps = counted_steps_of(stage.parent);
    if (counted || (parent_steps && std::fabs(*parent_steps - *stage.steps) < 0.5))
      set(stage, StepBasis::own_range, *stage.steps,
          "each " + in_backticks(stage.name) + " range is one step (as many as the steps of the range around it)");
  }
}

}  // namespace llmprof::detail
