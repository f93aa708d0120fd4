// The one rule for what counts as a step, and where each range instance sits (analysis/step_rule.hpp).
#include "analysis/step_rule.hpp"

#include <algorithm>
#include <numeric>

namespace llmprof::detail {
namespace {

// Indices in thread, then start order, the enclosing span first when two start together.
template <typename Span>
std::vector<std::size_t> nesting_order(const std::vector<Span>& spans) {
  std::vector<std::size_t> order(spans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (spans[a].thread != spans[b].thread) return spans[a].thread < spans[b].thread;
    if (spans[a].start_ns != spans[b].start_ns) return spans[a].start_ns < spans[b].start_ns;
    return spans[a].end_ns > spans[b].end_ns;
  });
  return order;
}

}  // namespace

std::vector<bool> outermost_spans(const std::vector<RangeSpan>& spans) {
  std::vector<bool> outermost(spans.size(), true);
  const RangeSpan* outer = nullptr;
  for (const std::size_t index : nesting_order(spans)) {
    const RangeSpan& span = spans[index];
    if (outer != nullptr && outer->thread == span.thread && span.end_ns <= outer->end_ns) {
      outermost[index] = false;  // starts no earlier (the order) and ends no later: inside `outer`
      continue;
    }
    outer = &span;
  }
  return outermost;
}

StepInstances step_instances(const TimelineStage& stage) {
  std::vector<RangeSpan> spans;
  spans.reserve(stage.instances.size());
  for (const auto& instance : stage.instances)
    spans.push_back({instance.thread, instance.cpu_start_ns, instance.cpu_end_ns});
  const std::vector<bool> outermost = outermost_spans(spans);
  StepInstances steps;
  for (std::size_t i = 0; i < stage.instances.size(); ++i) {
    if (outermost[i])
      steps.counted.push_back(&stage.instances[i]);
    else
      ++steps.nested;
  }
  return steps;
}

std::string step_rule_note(std::int64_t nested, std::int64_t unclosed) {
  if (nested <= 0 && unclosed <= 0) return {};
  std::vector<std::string> parts;
  if (nested > 0)
    parts.push_back(std::to_string(nested) +
                    " range instance(s) nested inside another of the same name on the "
                    "same thread");
  if (unclosed > 0) parts.push_back(std::to_string(unclosed) + " range(s) left open at exit (no end in the export)");
  std::string text = "Steps count only closed, outermost range instances: set aside ";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : " and ") + parts[i];
  return text + ".";
}

EnclosingCounts enclosing_stages(const TimelineReport& timeline) {
  struct Placed {
    std::int64_t thread, start_ns, end_ns;
    std::size_t stage;
  };
  std::vector<Placed> placed;
  for (std::size_t stage = 0; stage < timeline.stages.size(); ++stage)
    for (const auto& instance : timeline.stages[stage].instances)
      placed.push_back({instance.thread, instance.cpu_start_ns, instance.cpu_end_ns, stage});
  EnclosingCounts counts;
  std::vector<std::size_t> open;  // enclosing instances of the current thread, outermost first
  for (const std::size_t index : nesting_order(placed)) {
    const Placed& at = placed[index];
    while (!open.empty() && (placed[open.back()].thread != at.thread || placed[open.back()].end_ns < at.start_ns))
      open.pop_back();
    // The innermost instance of another stage that contains this one whole (a start/end range that only
    // overlaps encloses nothing, as in the timeline's own nesting).
    for (auto it = open.rbegin(); it != open.rend(); ++it) {
      const Placed& up = placed[*it];
      if (up.stage == at.stage || up.end_ns < at.end_ns) continue;
      ++counts[timeline.stages[at.stage].qualified_name()][timeline.stages[up.stage].qualified_name()];
      break;
    }
    open.push_back(index);
  }
  return counts;
}

std::optional<std::string> main_enclosing_stage(const EnclosingCounts& counts, const std::string& stage) {
  const auto found = counts.find(stage);
  if (found == counts.end() || found->second.empty()) return std::nullopt;
  const auto most = std::max_element(found->second.begin(), found->second.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  return most->first;
}

}  // namespace llmprof::detail
