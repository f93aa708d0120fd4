// Engine steps as the unit: per step kind (each distinct child range of the step range), from the timeline
// engine's per-instance figures. See llmprof/step_kinds.hpp for the rules that find the step range and kinds; the
// writers are in step_kinds_writer.cpp.
#include "llmprof/step_kinds.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include "analysis/step_rule.hpp"
#include "analysis/timeline_model.hpp"
#include "core/format.hpp"
#include "core/saturating.hpp"
#include "core/text.hpp"

namespace llmprof {
namespace {

constexpr std::size_t kTopKernels = 5;

bool is_batch_name(const std::string& name) { return name.size() > 6 && name.ends_with("_batch"); }

// SGLang's forward modes (ForwardMode: EXTEND, DECODE, MIXED, IDLE; "prefill" as other engines say it): an engine
// that names its step by its mode alone. Taken as kinds only where the shape says steps (see flat_kind_stages).
bool is_mode_name(const std::string& name) {
  static const std::set<std::string> modes = {"prefill", "decode", "extend", "mixed", "idle"};
  return modes.count(name) > 0;
}

bool is_kind_name(const std::string& name) { return is_batch_name(name) || is_mode_name(name); }

// The stages most of whose instances sit inside `parent`'s: a kind whose first instance lies outside every step
// (a window's edge cut its step off) is still a kind.
std::vector<const TimelineStage*> children_of(const TimelineReport& timeline, const detail::EnclosingCounts& nesting,
                                              const TimelineStage& parent) {
  std::vector<const TimelineStage*> children;
  for (const auto& stage : timeline.stages)
    if (detail::main_enclosing_stage(nesting, stage.qualified_name()) == parent.qualified_name())
      children.push_back(&stage);
  return children;
}

// The step range: the outermost stage with a kind among its children and at least as many steps as its busiest
// kind has instances. A range that holds many kinds per instance (`serve` x1 around 102 `decode_batch`) is no
// step: its kinds stand alone (flat_kind_stages).
const TimelineStage* find_step_range(const TimelineReport& timeline, const detail::EnclosingCounts& nesting,
                                     std::string_view step_range) {
  if (!step_range.empty()) return timeline.find_stage(step_range);
  for (const auto& stage : timeline.stages) {  // outermost first
    const auto steps = static_cast<std::int64_t>(detail::step_instances(stage).counted.size());
    bool has_kind = false, holds_steps = true;
    for (const auto* child : children_of(timeline, nesting, stage)) {
      if (!is_kind_name(child->name) || child->domain != stage.domain) continue;
      has_kind = true;
      holds_steps = holds_steps && static_cast<std::int64_t>(detail::step_instances(*child).counted.size()) <= steps;
    }
    if (has_kind && holds_steps) return &stage;
  }
  return nullptr;
}

// Kinds that stand alone, each instance one step (an engine that wraps each step only in its kind, at the top
// level of its thread or under a range that is no step): stages named like a kind whose enclosing stage is not
// itself a kind. A `*_batch` name is a kind by itself; a mode name alone (`decode`, `prefill`) also names whole
// phases of a plain decode loop (the bundled example: `prefill` x1, `decode` x1), so mode names count only when
// two of them, or one with four or more instances, repeat.
std::vector<const TimelineStage*> flat_kinds_of_domain(const TimelineReport& timeline,
                                                       const detail::EnclosingCounts& nesting, const std::string& domain);

// The kinds of one engine are in one NVTX domain: a kind-named range of another domain is another component's (a
// `decode` range of a tokenizer's domain is detokenisation, not a decode step). The domain whose kinds hold a
// `*_batch` name wins, then the one with the most kind instances; the default domain on a tie.
std::vector<const TimelineStage*> flat_kind_stages(const TimelineReport& timeline,
                                                   const detail::EnclosingCounts& nesting) {
  std::set<std::string> domains;
  for (const auto& stage : timeline.stages)
    if (is_kind_name(stage.name)) domains.insert(stage.domain);
  std::vector<const TimelineStage*> best;
  const auto rank = [](const std::vector<const TimelineStage*>& kinds) {
    std::size_t instances = 0;
    bool batch = false;
    for (const TimelineStage* kind : kinds) {
      instances += detail::step_instances(*kind).counted.size();
      batch = batch || is_batch_name(kind->name);
    }
    return std::pair{batch, instances};
  };
  for (const auto& domain : domains) {  // "" (the default domain) first
    auto kinds = flat_kinds_of_domain(timeline, nesting, domain);
    if (!kinds.empty() && (best.empty() || rank(kinds) > rank(best))) best = std::move(kinds);
  }
  return best;
}

std::vector<const TimelineStage*> flat_kinds_of_domain(const TimelineReport& timeline,
                                                       const detail::EnclosingCounts& nesting, const std::string& domain) {
  std::vector<const TimelineStage*> kinds;
  bool batch_named = false;
  std::int64_t instances = 0, repeated_modes = 0;
  for (const auto& stage : timeline.stages) {
    if (!is_kind_name(stage.name) || stage.domain != domain) continue;
    const auto parent = detail::main_enclosing_stage(nesting, stage.qualified_name());
    const TimelineStage* enclosing = parent ? timeline.find_stage(*parent) : nullptr;
    if (enclosing != nullptr && is_kind_name(enclosing->name)) continue;
    const auto count = static_cast<std::int64_t>(detail::step_instances(stage).counted.size());
    if (count == 0) continue;
    kinds.push_back(&stage);
    batch_named = batch_named || is_batch_name(stage.name);
    instances += count;
    if (is_mode_name(stage.name) && count >= 2) ++repeated_modes;
  }
  const bool modes_repeat =
      repeated_modes >= 2 || std::any_of(kinds.begin(), kinds.end(), [](const TimelineStage* kind) {
        return detail::step_instances(*kind).counted.size() >= 4;
      });
  if (instances < 2 || (!batch_named && !modes_repeat)) return {};
  return kinds;
}

// The CPU intervals [start, end] of the steps kept, per thread, in start order. Counted steps of one range do
// not nest, so the only step that can hold a moment is the last one to start at or before it.
class KeptSteps {
 public:
  void add(const TimelineInstance& step) { by_thread_[step.thread].emplace_back(step.cpu_start_ns, step.cpu_end_ns); }
  bool contains(const TimelineInstance& instance) const {
    const auto found = by_thread_.find(instance.thread);
    if (found == by_thread_.end()) return false;
    const auto& steps = found->second;
    const auto after = std::upper_bound(steps.begin(), steps.end(),
                                        std::pair{instance.cpu_start_ns, std::numeric_limits<std::int64_t>::max()});
    return after != steps.begin() && instance.cpu_start_ns <= std::prev(after)->second;
  }

 private:
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> by_thread_;
};

// A kind's instances that count (detail::step_instances) and start inside a kept step: a kind instance whose step
// lies outside the window, or was cut off by a capture window's edge, is no step of this window.
std::vector<const TimelineInstance*> kept_instances(const TimelineStage& stage, const KeptSteps& kept,
                                                    std::int64_t& nested) {
  const detail::StepInstances counted = detail::step_instances(stage);
  nested += counted.nested;
  std::vector<const TimelineInstance*> instances;
  for (const TimelineInstance* instance : counted.counted)
    if (kept.contains(*instance)) instances.push_back(instance);
  return instances;
}

StepKindFigures figures_of(const TimelineStage& stage, const std::vector<const TimelineInstance*>& instances) {
  StepKindFigures kind;
  kind.name = stage.name;
  kind.domain = stage.domain;
  kind.count = static_cast<std::int64_t>(instances.size());
  std::vector<std::int64_t> windows;
  std::set<std::int64_t> processes;
  for (const TimelineInstance* instance : instances) {
    detail::add_saturating(kind.gpu_time_ns, instance->gpu_time_ns);
    detail::add_saturating(kind.gpu_busy_ns, instance->gpu_busy_ns);
    windows.push_back(instance->window_ns());
    processes.insert(process_of_thread(instance->thread));
  }
  kind.step_time = detail::summarize_durations(std::move(windows));
  kind.gpu_busy_share = gpu_busy_share_of(kind);
  kind.processes.assign(processes.begin(), processes.end());
  for (std::size_t i = 0; i < stage.kernels.size() && i < kTopKernels; ++i)
    kind.top_kernels.push_back(stage.kernels[i]);
  return kind;
}

// The GPU time the kinds' window shares are of (StepKindReport::window_gpu_time_ns): the capture's, when every step
// of it is kept; the kept steps' own (`kept_steps_gpu_time_ns`), when nsys.capture_skip/capture_count left some out.
// Never less than the kinds' own: a capture read back without its total keeps the kinds' GPU time, and says so.
void set_window_gpu_time(StepKindReport& report, const TimelineReport& timeline, std::int64_t kinds_gpu_time_ns,
                         std::int64_t kept_steps_gpu_time_ns) {
  if (report.steps_left_out == 0 && timeline.gpu_time_ns >= kinds_gpu_time_ns && timeline.gpu_time_ns > 0) {
    report.window_gpu_time_ns = timeline.gpu_time_ns;
    report.window_basis = "the window's GPU time";
  } else if (report.steps_left_out > 0 && kept_steps_gpu_time_ns >= kinds_gpu_time_ns && kept_steps_gpu_time_ns > 0) {
    report.window_gpu_time_ns = kept_steps_gpu_time_ns;
    report.window_basis = "the kept steps' GPU time";
  } else {
    report.window_gpu_time_ns = kinds_gpu_time_ns;
    report.window_basis = "the step kinds' GPU time";
  }
  for (auto& kind : report.kinds)
    if (report.window_gpu_time_ns > 0)
      kind.window_share = static_cast<double>(kind.gpu_time_ns) / static_cast<double>(report.window_gpu_time_ns);
}

// Each kind's share of the kinds' GPU time and of the window's, and the process whose kept steps carried the most.
void attribute_gpu_time(StepKindReport& report, const std::vector<std::vector<const TimelineInstance*>>& kept,
                        const TimelineReport& timeline, std::int64_t kept_steps_gpu_time_ns) {
  std::int64_t gpu_time = 0;
  std::map<std::int64_t, std::int64_t> gpu_time_by_process;
  for (const auto& kind : report.kinds) detail::add_saturating(gpu_time, kind.gpu_time_ns);
  for (auto& kind : report.kinds) {
    if (gpu_time > 0) kind.gpu_time_share = static_cast<double>(kind.gpu_time_ns) / static_cast<double>(gpu_time);
  }
  set_window_gpu_time(report, timeline, gpu_time, kept_steps_gpu_time_ns);
  for (const auto& instances : kept) {
    for (const TimelineInstance* instance : instances)
      detail::add_saturating(gpu_time_by_process[process_of_thread(instance->thread)], instance->gpu_time_ns);
  }
  std::int64_t most = 0;
  for (const auto& [process, time] : gpu_time_by_process) {
    if (time > most) {
      most = time;
      report.gpu_process = process;
    }
  }
}

// "mixed" for "mixed_batch": how the verdict speaks of a kind; with its domain where it has one ("llm:mixed").
std::string short_name(const StepKindFigures& kind) {
  const std::string name = is_batch_name(kind.name) ? kind.name.substr(0, kind.name.size() - 6) : kind.name;
  return kind.domain.empty() ? name : kind.domain + ":" + name;
}

std::string verdict_of(const StepKindReport& report) {
  if (report.steps == 0 && !report.window_shortfall.empty()) return report.window_shortfall;
  if (report.kinds.empty()) return "no step kind found under `" + report.step_range + "`";
  const StepKindFigures& heaviest = report.kinds.front();
  const auto decode = std::find_if(report.kinds.begin(), report.kinds.end(), [](const StepKindFigures& kind) {
    return kind.name == "decode_batch" || kind.name == "decode";
  });
  std::string text;
  if (decode != report.kinds.end() && decode->name != heaviest.name && decode->step_time.p50_ns > 0) {
    text = short_name(heaviest) + " steps take " +
           detail::format_number(static_cast<double>(heaviest.step_time.p50_ns) /
                                 static_cast<double>(decode->step_time.p50_ns)) +
           "x a decode step (median)";
  } else {
    text = short_name(heaviest) + " steps: " + std::to_string(heaviest.count) + " of " +
           std::to_string(report.steps) + ", median " +
           detail::format_duration_ns(static_cast<double>(heaviest.step_time.p50_ns));
  }
  if (heaviest.window_share) {
    text += "; " + detail::format_fraction_percent(*heaviest.window_share) + " of " + report.window_basis;
  } else {
    text += "; no GPU work recorded in the steps";
  }
  if (report.zero_length_steps > 0)
    text += "; " + std::to_string(report.zero_length_steps) + " of the " + std::to_string(report.steps) +
            " steps lasted 0 ns (their range closed as it opened: no work is attributed to them, and they count as 0 "
            "ns in the step times)";
  return text;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> StepWindow::kept(std::int64_t total) const {
  const std::int64_t first = std::min(std::max<std::int64_t>(skip, 0), total);
  const std::int64_t last = count > 0 ? std::min(total, first + count) : total;
  return {first, last};
}

std::string StepWindow::shortfall(std::int64_t total) const {
  if (total <= 0) return {};
  const auto [first, last] = kept(total);
  const std::string held = "the capture holds " + std::to_string(total) + " steps";
  if (first == last)
    return "no step kept: nsys.capture_skip = " + std::to_string(skip) + " skips past every step (" + held +
           "); set it below " + std::to_string(total);
  if (count > 0 && last - first < count)
    return "nsys.capture_count = " + std::to_string(count) + " asked for " + std::to_string(count) +
           " steps after the " + std::to_string(first) + " skipped, but " + held + ": only " +
           std::to_string(last - first) + " are kept (steps " + std::to_string(first) + " to " +
           std::to_string(last - 1) + ")";
  return {};
}

std::int64_t process_of_thread(std::int64_t global_thread_id) { return (global_thread_id >> 24) & 0xFFFFFF; }

namespace {

// Kinds that stand alone (flat_kind_stages): every counted instance of every kind is one step, in CPU start order;
// the window keeps steps skip .. skip + count - 1 of them.
StepKindReport analyze_flat_kinds(const TimelineReport& timeline, const std::vector<const TimelineStage*>& stages,
                                  StepWindow window) {
  StepKindReport report;
  report.unclosed_ranges = timeline.unclosed_ranges;
  std::vector<const TimelineInstance*> steps;
  for (const TimelineStage* stage : stages) {
    const detail::StepInstances counted = detail::step_instances(*stage);
    report.nested_set_aside += counted.nested;
    steps.insert(steps.end(), counted.counted.begin(), counted.counted.end());
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const TimelineInstance* a, const TimelineInstance* b) { return a->cpu_start_ns < b->cpu_start_ns; });
  const auto total = static_cast<std::int64_t>(steps.size());
  const auto [first, last] = window.kept(total);
  report.window_shortfall = window.shortfall(total);
  const std::set<const TimelineInstance*> kept(steps.begin() + first, steps.begin() + last);
  std::int64_t kept_gpu_time = 0;
  for (const TimelineInstance* step : kept) {
    detail::add_saturating(kept_gpu_time, step->gpu_time_ns);
    if (step->cpu_duration_ns() == 0) ++report.zero_length_steps;
  }
  report.steps = last - first;
  report.steps_left_out = total - report.steps;
  std::vector<std::vector<const TimelineInstance*>> kept_of_kind;
  for (const TimelineStage* stage : stages) {
    std::vector<const TimelineInstance*> instances;
    for (const TimelineInstance* instance : detail::step_instances(*stage).counted)
      if (kept.count(instance)) instances.push_back(instance);
    report.kinds.push_back(figures_of(*stage, instances));
    kept_of_kind.push_back(std::move(instances));
  }
  attribute_gpu_time(report, kept_of_kind, timeline, kept_gpu_time);
  return report;
}

void order_kinds(StepKindReport& report) {
  if (report.steps == 0 && !report.window_shortfall.empty()) report.kinds.clear();  // kinds of no step
  std::stable_sort(report.kinds.begin(), report.kinds.end(), [](const auto& a, const auto& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    return a.count > b.count;
  });
  report.verdict = verdict_of(report);
}

}  // namespace

std::optional<double> gpu_busy_share_of(const StepKindFigures& kind) {
  if (kind.step_time.total_ns <= 0) return std::nullopt;
  return static_cast<double>(kind.gpu_busy_ns) / static_cast<double>(kind.step_time.total_ns);
}

std::string no_step_kinds_reason(const TimelineReport& timeline) {
  std::string seen;
  std::size_t listed = 0;
  for (const auto& stage : timeline.stages) {
    if (listed++ == 5) {
      seen += ", ...";
      break;
    }
    seen += (seen.empty() ? "" : ", ") + stage.qualified_name() + " x" + std::to_string(stage.instances.size()) +
            (stage.is_library() ? " (" + stage.library + "'s)" : "");
  }
  return "no step kind: no NVTX range named like one (`*_batch`, or an engine mode: prefill, decode, extend, "
         "mixed, idle) repeats in the capture" +
         (seen.empty() ? std::string(", which holds no closed NVTX range")
                       : "; its ranges: " + seen);
}

std::optional<StepKindReport> analyze_step_kinds(const TimelineReport& captured, std::string_view step_range,
                                                 StepWindow window) {
  // A library's ranges (TimelineStage::library: CCCL's scans inside a step) are never a step range, a kind or a phase.
  std::optional<TimelineReport> own;
  if (!std::all_of(captured.stages.begin(), captured.stages.end(), [](const auto& stage) { return !stage.is_library(); }))
    own = without_library_ranges(captured);
  const TimelineReport& timeline = own ? *own : captured;
  const detail::EnclosingCounts nesting = detail::enclosing_stages(timeline);
  const TimelineStage* step = find_step_range(timeline, nesting, step_range);
  if (step == nullptr) {
    if (!step_range.empty()) return std::nullopt;
    const auto flat = flat_kind_stages(timeline, nesting);
    if (flat.empty()) return std::nullopt;
    StepKindReport report = analyze_flat_kinds(timeline, flat, window);
    order_kinds(report);
    return report;
  }
  StepKindReport report;
  report.step_range = step->qualified_name();
  report.unclosed_ranges = timeline.unclosed_ranges;
  const detail::StepInstances steps = detail::step_instances(*step);
  report.nested_set_aside = steps.nested;
  const auto total = static_cast<std::int64_t>(steps.counted.size());
  const auto [first, last] = window.kept(total);
  report.window_shortfall = window.shortfall(total);
  KeptSteps kept;
  std::int64_t kept_gpu_time = 0;
  for (std::int64_t i = first; i < last; ++i) {
    const TimelineInstance& instance = *steps.counted[static_cast<std::size_t>(i)];
    kept.add(instance);
    detail::add_saturating(kept_gpu_time, instance.gpu_time_ns);
    if (instance.cpu_duration_ns() == 0) ++report.zero_length_steps;
  }
  report.steps = last - first;
  report.steps_left_out = total - report.steps;
  const auto children = children_of(timeline, nesting, *step);
  const bool named_batches = std::any_of(children.begin(), children.end(), [step](const TimelineStage* child) {
    return is_kind_name(child->name) && child->domain == step->domain;
  });
  std::vector<std::vector<const TimelineInstance*>> kept_of_child;
  for (const auto* child : children) {
    kept_of_child.push_back(kept_instances(*child, kept, report.nested_set_aside));
    const auto& instances = kept_of_child.back();
    // A kind-named child of another NVTX domain is another component's range (a tokenizer's `decode`), no kind.
    const bool kind = named_batches ? is_kind_name(child->name) && child->domain == step->domain
                                    : static_cast<std::int64_t>(instances.size()) < report.steps;
    if (kind)
      report.kinds.push_back(figures_of(*child, instances));
    else
      report.phases.push_back(child->qualified_name());
  }
  attribute_gpu_time(report, kept_of_child, timeline, kept_gpu_time);
  order_kinds(report);
  return report;
}

}  // namespace llmprof
