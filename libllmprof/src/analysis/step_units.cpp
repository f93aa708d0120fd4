// What one step of each stage is (StepBasis in llmprof/report_model.hpp), so that every "per step" figure divides
// by steps and not by range instances: the recorded CUDA-graph decode whose one `decode` range holds 48
// `decode_step` ranges was reported at 32.2 ms and 25.3 GB "per step" where a step took 0.67 ms and 528 MB.
// Run after the timeline is applied and before the per-step figures (stage_limits.cpp) divide by the steps.
#include <algorithm>
#include <cmath>

#include "analysis/analysis_model.hpp"
#include "analysis/step_rule.hpp"
#include "core/format.hpp"
#include "llmprof/choice.hpp"
#include "llmprof/step_kinds.hpp"

namespace llmprof::detail {
namespace {

// A child range is the step of the range around it only when its instances launched nearly all of that range's GPU
// work: a layer range repeats inside a step too, but holds only part of it (on the recorded 1b decode, `attention`
// launched 57% of `decode_step`'s kernel time and `mlp` 39%; `decode_step` 100% of `decode`'s).
constexpr double kStepWorkShare = 0.9;

struct StepUnit {
  StepBasis basis = StepBasis::range_instances;
  double steps = 0;
  std::string source;
};

std::string in_backticks(const std::string& name) { return "`" + name + "`"; }

std::string count_text(double count) { return format_count(static_cast<std::int64_t>(std::llround(count))); }

std::string share_text(double part, double whole) { return format_fraction_percent(whole > 0 ? part / whole : 0.0); }

bool named(const ReportStage& stage, const std::string& name) {
  return stage.qualified_name() == name || stage.name == name;
}

// The engine's step kinds and step range in the captured timeline: each of their instances is one step.
std::optional<StepUnit> step_kind_unit(const ReportStage& stage, const std::optional<StepKindReport>& kinds,
                                       double instances) {
  if (!kinds) return std::nullopt;
  if (!kinds->step_range.empty() && named(stage, kinds->step_range))
    return StepUnit{
        StepBasis::own_range, instances,
        "each " + in_backticks(stage.name) + " range is one engine step (the step range of the step kinds)"};
  for (const auto& kind : kinds->kinds)
    if (named(stage, kind.name))
      return StepUnit{
          StepBasis::own_range, instances,
          "each " + in_backticks(stage.name) + " range is one engine step (a step kind" +
              (kinds->step_range.empty() ? std::string(")") : " of " + in_backticks(kinds->step_range) + ")")};
  return std::nullopt;
}

// The child range whose instances, all inside this stage and more than one per instance of it, launched nearly all
// of its GPU work; the one with the fewest instances (the loop body, not a layer inside it). Needs traced GPU work:
// without it nothing says which range the work belongs to.
const TimelineStage* step_child(const TimelineReport& timeline, const EnclosingCounts& enclosing,
                                const TimelineStage& parent, std::int64_t& inside) {
  if (timeline.cuda_untraced || parent.gpu_time_ns <= 0) return nullptr;
  const TimelineStage* best = nullptr;
  for (const auto& child : timeline.stages) {
    const auto found = enclosing.find(child.qualified_name());
    if (found == enclosing.end() || found->second.size() != 1) continue;
    const auto& [encloser, count] = *found->second.begin();
    if (encloser != parent.qualified_name() || count != static_cast<std::int64_t>(child.instances.size())) continue;
    if (count < 2 || count <= static_cast<std::int64_t>(parent.instances.size())) continue;
    if (static_cast<double>(child.gpu_time_ns) < kStepWorkShare * static_cast<double>(parent.gpu_time_ns)) continue;
    if (best == nullptr || count < inside) {
      best = &child;
      inside = count;
    }
  }
  return best;
}

// A range whose GPU work is mostly CUDA graph replays and that launches more graphs than it has instances: each
// launch is a step. The export's graph launch calls carry no graph identity (nsys 2025.3 names the graph only on
// executions traced whole), so a step that replays several graphs would count each of them.
std::optional<StepUnit> graph_launch_unit(const TimelineStage& timed) {
  const std::int64_t launches = timed.loss.graph_launches;
  const auto instances = static_cast<std::int64_t>(timed.instances.size());
  if (!timed.mostly_graphs() || launches < 2 || launches <= instances) return std::nullopt;
  const bool every_instance = std::all_of(timed.instances.begin(), timed.instances.end(),
                                          [](const TimelineInstance& one) { return one.loss.graph_launches > 0; });
  if (!every_instance) return std::nullopt;
  return StepUnit{StepBasis::graph_launches, static_cast<double>(launches),
                  count_text(static_cast<double>(launches)) + " CUDA graph launches, one per step (graph replays are " +
                      share_text(static_cast<double>(timed.graph_time_ns), static_cast<double>(timed.gpu_time_ns)) +
                      " of its GPU time)"};
}

std::optional<StepUnit> bare_run_unit(const AnalysisReport& report, const ReportStage& stage, double instances) {
  if (!report.workload || stage.domain != report.workload->nvtx_domain || stage.name != "decode" ||
      report.workload->new_tokens <= 0)
    return std::nullopt;
  const double tokens = static_cast<double>(report.workload->new_tokens);
  return StepUnit{StepBasis::bare_run_tokens, instances * tokens,
                  "the workload's decode steps: " + count_text(tokens) +
                      " new tokens per range in its bare run (stage1/metrics.json new_tokens)"};
}

// The inferred steps that start inside the stage's instances (on the instance's thread), when more than one per
// instance: a capture's steps before or after the range (a prefill range beside `decode`) are not its steps.
std::optional<StepUnit> inferred_unit(const std::optional<StepKindReport>& inferred, const TimelineStage& timed) {
  if (!inferred || timed.gpu_time_ns <= 0) return std::nullopt;
  std::int64_t inside = 0;
  for (const auto& span : inferred->inferred_spans)
    inside += std::any_of(timed.instances.begin(), timed.instances.end(), [&](const TimelineInstance& instance) {
      return instance.thread == span.thread && instance.cpu_start_ns <= span.start_ns &&
             span.start_ns <= instance.cpu_end_ns;
    });
  if (inside < 2 || inside <= static_cast<std::int64_t>(timed.instances.size())) return std::nullopt;
  return StepUnit{StepBasis::inferred_steps, static_cast<double>(inside),
                  count_text(static_cast<double>(inside)) + " of the " +
                      count_text(static_cast<double>(inferred->inferred_spans.size())) +
                      " steps inferred without NVTX start inside it (" + inferred->inferred + ")"};
}

StepUnit range_unit(const ReportStage& stage, double instances) {
  return {StepBasis::range_instances, instances,
          "no step is known inside it: per " + in_backticks(stage.name) + " range (its instances)"};
}

void apply(const StepUnit& unit, ReportStage& stage) {
  stage.steps = unit.steps;
  stage.steps_source = unit.source;
  stage.step_basis = std::string(choice_name(unit.basis));
}

// A step counted in ranges or graph launches that differs from the bare run's decode steps: the per-step figures
// count the former, and the report says both.
void check_against_tokens(const AnalysisReport& report, const ReportStage& stage, const StepUnit& unit,
                          double instances, std::vector<std::string>& warnings) {
  const auto tokens = bare_run_unit(report, stage, instances);
  if (!tokens || std::fabs(tokens->steps - unit.steps) < 0.5) return;
  warnings.push_back(
      "stage '" + stage.qualified_name() + "': " + unit.source + ", against " + count_text(tokens->steps) +
      " decode steps in its bare run (stage1/metrics.json new_tokens): per-step figures count the former");
}

}  // namespace

void assign_step_units(const std::optional<StepKindReport>& inferred, AnalysisReport& report) {
  const TimelineReport* timeline = report.timeline ? &*report.timeline : nullptr;
  const EnclosingCounts enclosing = timeline ? enclosing_stages(*timeline) : EnclosingCounts{};
  const std::optional<StepKindReport> kinds =
      timeline ? analyze_step_kinds(*timeline) : std::optional<StepKindReport>{};
  const auto timed_of = [&](const ReportStage& stage) {
    return timeline ? timeline->find_stage(stage.qualified_name()) : nullptr;
  };
  const auto instances_of = [&](const ReportStage& stage) {
    const TimelineStage* timed = timed_of(stage);
    return stage.steps ? *stage.steps : timed ? static_cast<double>(timed->instances.size()) : 0.0;
  };
  // First the ranges that hold their steps as child ranges, so that each child knows it is one step.
  std::vector<std::optional<StepUnit>> holds(report.stages.size());
  std::map<std::string, std::pair<std::string, std::int64_t>> step_of;  // child -> (its stage, how many)
  for (std::size_t i = 0; i < report.stages.size(); ++i) {
    const ReportStage& stage = report.stages[i];
    const TimelineStage* timed = timed_of(stage);
    std::int64_t inside = 0;
    const TimelineStage* child = timed ? step_child(*timeline, enclosing, *timed, inside) : nullptr;
    if (child == nullptr) continue;
    holds[i] =
        StepUnit{StepBasis::step_range, static_cast<double>(inside),
                 count_text(static_cast<double>(inside)) + " " + in_backticks(child->name) +
                     " ranges, one per step (they launched " +
                     share_text(static_cast<double>(child->gpu_time_ns), static_cast<double>(timed->gpu_time_ns)) +
                     " of its GPU time)"};
    step_of[child->qualified_name()] = {stage.name, inside};
  }
  for (std::size_t i = 0; i < report.stages.size(); ++i) {
    ReportStage& stage = report.stages[i];
    const TimelineStage* timed = timed_of(stage);
    const double instances = instances_of(stage);
    if (instances <= 0) continue;
    std::optional<StepUnit> unit = step_kind_unit(stage, kinds, instances);
    if (!unit) unit = holds[i];
    if (!unit && timed) unit = graph_launch_unit(*timed);
    if (unit) check_against_tokens(report, stage, *unit, instances, report.warnings);
    if (const auto parent = step_of.find(stage.qualified_name()); !unit && parent != step_of.end())
      unit = StepUnit{StepBasis::own_range, instances,
                      "each " + in_backticks(stage.name) + " range is one step (" + in_backticks(parent->second.first) +
                          " holds " + count_text(static_cast<double>(parent->second.second)) +
                          " of them, which launched nearly all its GPU work)"};
    if (!unit) unit = bare_run_unit(report, stage, instances);
    if (!unit && timed) unit = inferred_unit(inferred, *timed);
    apply(unit.value_or(range_unit(stage, instances)), stage);
  }
}

bool wants_inferred_steps(const AnalysisReport& report, const std::string& selection_stage) {
  if (!report.timeline || report.timeline->cuda_untraced) return false;
  for (const auto& stage : report.stages) {
    if (stage.step_basis != choice_name(StepBasis::range_instances)) continue;
    if (stage.level != 0 && !named(stage, selection_stage)) continue;
    const TimelineStage* timed = report.timeline->find_stage(stage.qualified_name());
    if (timed && timed->gpu_time_ns > 0) return true;
  }
  return false;
}

}  // namespace llmprof::detail
