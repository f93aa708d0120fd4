// Engine steps as the unit: per step kind (each distinct child range of the step range), from the timeline
// engine's per-instance figures. See llmprof/step_kinds.hpp for the rules that find the step range and kinds.
#include "llmprof/step_kinds.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <set>

#include "analysis/timeline_model.hpp"
#include "core/format.hpp"
#include "core/text.hpp"

namespace llmprof {
namespace {

constexpr std::size_t kTopKernels = 5;

bool is_batch_name(const std::string& name) { return name.size() > 6 && name.ends_with("_batch"); }

std::vector<const TimelineStage*> children_of(const TimelineReport& timeline, const TimelineStage& parent) {
  std::vector<const TimelineStage*> children;
  for (const auto& stage : timeline.stages)
    if (stage.parent && *stage.parent == parent.qualified_name()) children.push_back(&stage);
  return children;
}

const TimelineStage* find_step_range(const TimelineReport& timeline, std::string_view step_range) {
  if (!step_range.empty()) return timeline.find_stage(step_range);
  for (const auto& stage : timeline.stages) {  // outermost first
    for (const auto* child : children_of(timeline, stage))
      if (is_batch_name(child->name)) return &stage;
  }
  return nullptr;
}

// The CPU intervals [start, end] of the steps kept, per thread.
struct KeptSteps {
  std::vector<const TimelineInstance*> steps;
  bool contains(const TimelineInstance& instance) const {
    return std::any_of(steps.begin(), steps.end(), [&](const TimelineInstance* step) {
      return step->thread == instance.thread && step->cpu_start_ns <= instance.cpu_start_ns &&
             instance.cpu_start_ns <= step->cpu_end_ns;
    });
  }
};

std::vector<const TimelineInstance*> kept_instances(const TimelineStage& stage, const KeptSteps& kept, bool all) {
  std::vector<const TimelineInstance*> instances;
  for (const auto& instance : stage.instances)
    if (all || kept.contains(instance)) instances.push_back(&instance);
  return instances;
}

StepKindFigures figures_of(const TimelineStage& stage, const std::vector<const TimelineInstance*>& instances,
                           bool all) {
  StepKindFigures kind;
  kind.name = stage.name;
  kind.count = static_cast<std::int64_t>(instances.size());
  std::vector<std::int64_t> windows;
  std::set<std::int64_t> processes;
  for (const TimelineInstance* kept : instances) {
    const TimelineInstance& instance = *kept;
    if (!all) kind.gpu_time_ns += instance.gpu_time_ns;
    windows.push_back(instance.window_ns());
    kind.gpu_busy_ns += instance.gpu_busy_ns;
    processes.insert(process_of_thread(instance.thread));
  }
  kind.step_time = detail::summarize_durations(std::move(windows));
  if (all) kind.gpu_time_ns = stage.gpu_time_ns;
  kind.processes.assign(processes.begin(), processes.end());
  for (std::size_t i = 0; i < stage.kernels.size() && i < kTopKernels; ++i)
    kind.top_kernels.push_back(stage.kernels[i]);
  return kind;
}

// "mixed" for "mixed_batch": how the verdict speaks of a kind.
std::string short_name(const std::string& name) { return is_batch_name(name) ? name.substr(0, name.size() - 6) : name; }

std::string verdict_of(const StepKindReport& report) {
  if (report.kinds.empty()) return "no step kind found under `" + report.step_range + "`";
  const StepKindFigures& heaviest = report.kinds.front();
  const auto decode = std::find_if(report.kinds.begin(), report.kinds.end(),
                                   [](const StepKindFigures& kind) { return kind.name == "decode_batch"; });
  std::string text;
  if (decode != report.kinds.end() && decode->name != heaviest.name && decode->step_time.p50_ns > 0) {
    text = short_name(heaviest.name) + " steps take " +
           detail::format_number(static_cast<double>(heaviest.step_time.p50_ns) /
                                 static_cast<double>(decode->step_time.p50_ns)) +
           "x a decode step (median)";
  } else {
    text = short_name(heaviest.name) + " steps: " + std::to_string(heaviest.count) + " of " +
           std::to_string(report.steps) + ", median " +
           detail::format_duration_ns(static_cast<double>(heaviest.step_time.p50_ns));
  }
  if (heaviest.gpu_time_share) {
    text += "; " + detail::format_fraction_percent(*heaviest.gpu_time_share) + " of the window's GPU time";
  } else {
    text += "; no GPU work recorded in the steps";
  }
  return text;
}

}  // namespace

std::int64_t process_of_thread(std::int64_t global_thread_id) { return (global_thread_id >> 24) & 0xFFFFFF; }

std::optional<StepKindReport> analyze_step_kinds(const TimelineReport& timeline, std::string_view step_range,
                                                 StepWindow window) {
  const TimelineStage* step = find_step_range(timeline, step_range);
  if (step == nullptr) return std::nullopt;
  StepKindReport report;
  report.step_range = step->qualified_name();
  const bool all = window.skip <= 0 && window.count <= 0;
  KeptSteps kept;
  const auto total = static_cast<std::int64_t>(step->instances.size());
  const std::int64_t first = std::min(std::max<std::int64_t>(window.skip, 0), total);
  const std::int64_t last = window.count > 0 ? std::min(total, first + window.count) : total;
  for (std::int64_t i = first; i < last; ++i) kept.steps.push_back(&step->instances[static_cast<std::size_t>(i)]);
  report.steps = last - first;
  report.steps_left_out = total - report.steps;
  const auto children = children_of(timeline, *step);
  const bool named_batches = std::any_of(children.begin(), children.end(),
                                         [](const TimelineStage* child) { return is_batch_name(child->name); });
  for (const auto* child : children) {
    const auto instances = kept_instances(*child, kept, all);
    const bool kind =
        named_batches ? is_batch_name(child->name) : static_cast<std::int64_t>(instances.size()) < report.steps;
    if (kind)
      report.kinds.push_back(figures_of(*child, instances, all));
    else
      report.phases.push_back(child->name);
  }
  std::int64_t gpu_time = 0;
  std::map<std::int64_t, std::int64_t> gpu_time_by_process;
  for (const auto& kind : report.kinds) gpu_time += kind.gpu_time_ns;
  for (auto& kind : report.kinds) {
    if (gpu_time > 0) kind.gpu_time_share = static_cast<double>(kind.gpu_time_ns) / static_cast<double>(gpu_time);
  }
  for (const auto* child : children) {
    for (const TimelineInstance* instance : kept_instances(*child, kept, all))
      gpu_time_by_process[process_of_thread(instance->thread)] += instance->gpu_time_ns;
  }
  std::int64_t most = 0;
  for (const auto& [process, time] : gpu_time_by_process) {
    if (time > most) {
      most = time;
      report.gpu_process = process;
    }
  }
  std::stable_sort(report.kinds.begin(), report.kinds.end(), [](const auto& a, const auto& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    return a.count > b.count;
  });
  report.verdict = verdict_of(report);
  return report;
}

namespace {

StepKindTokens tokens_of(const StepKindFigures& kind, const KindTokens& counted, int window) {
  StepKindTokens tokens;
  tokens.workload_steps = counted.steps;
  tokens.prompt_tokens = counted.prompt_tokens;
  tokens.decode_tokens = counted.decode_tokens;
  const std::int64_t carried = counted.prompt_tokens + counted.decode_tokens;
  if (counted.steps != kind.count) {
    // Tokens of other steps than the ones timed would give a wrong time per token: withheld.
    tokens.withheld = "the workload counted " + std::to_string(counted.steps) + " `" + kind.name +
                      "` steps in window " + std::to_string(window) + ", the timeline " + std::to_string(kind.count);
  } else if (carried == 0) {
    tokens.withheld = "its steps carried no tokens";
  } else {
    tokens.time_per_token_ns = static_cast<double>(kind.step_time.total_ns) / static_cast<double>(carried);
    tokens.tokens_per_step = static_cast<double>(carried) / static_cast<double>(kind.count);
  }
  return tokens;
}

}  // namespace

void attach_step_tokens(std::vector<StepKindReport>& windows, const StepTokens& tokens) {
  for (std::size_t w = 0; w < windows.size(); ++w) {
    StepKindReport& report = windows[w];
    const int number = static_cast<int>(w) + 1;
    if (w >= tokens.windows.size()) {
      report.token_notes.push_back("the workload's step tokens have " + std::to_string(tokens.windows.size()) +
                                   " window(s); none for window " + std::to_string(number));
      continue;
    }
    const auto& counted = tokens.windows[w].kinds;
    for (auto& kind : report.kinds) {
      const auto found = counted.find(kind.name);
      if (found == counted.end()) {
        report.token_notes.push_back("the workload's step tokens name no `" + kind.name + "` in window " +
                                     std::to_string(number));
        continue;
      }
      kind.tokens = tokens_of(kind, found->second, number);
    }
    for (const auto& entry : counted) {  // not a structured binding: clang before 16 cannot capture one
      const std::string& name = entry.first;
      const bool timed = std::any_of(report.kinds.begin(), report.kinds.end(),
                                     [&name](const StepKindFigures& kind) { return kind.name == name; });
      if (!timed && entry.second.steps > 0)
        report.token_notes.push_back("the workload counted " + std::to_string(entry.second.steps) + " `" + name +
                                     "` steps in window " + std::to_string(number) + "; the timeline has none");
    }
  }
  for (std::size_t w = windows.size(); w < tokens.windows.size(); ++w) {
    if (!windows.empty())
      windows.back().token_notes.push_back("the workload's step tokens have a window " + std::to_string(w + 1) +
                                           " that the capture does not");
  }
}

namespace {

// The "Tokens per step kind" table of a window whose kinds have the workload's tokens; "" when none has.
std::string tokens_markdown(const StepKindReport& report) {
  const bool any = std::any_of(report.kinds.begin(), report.kinds.end(),
                               [](const StepKindFigures& kind) { return kind.tokens.has_value(); });
  std::string text;
  if (any) {
    text += "Tokens per step kind (the workload's own count, `nsys/step_tokens.json`):\n\n";
    text += "| kind | steps (workload) | prompt tokens | decode tokens | tokens per step | time per token |\n";
    text += "|---|---:|---:|---:|---:|---:|\n";
    for (const auto& kind : report.kinds) {
      if (!kind.tokens) continue;
      const StepKindTokens& tokens = *kind.tokens;
      text += "| `" + kind.name + "` | " + std::to_string(tokens.workload_steps) + " | " +
              std::to_string(tokens.prompt_tokens) + " | " + std::to_string(tokens.decode_tokens) + " | " +
              (tokens.tokens_per_step ? detail::format_number(*tokens.tokens_per_step) : std::string("—")) + " | " +
              (tokens.time_per_token_ns ? detail::format_duration_ns(*tokens.time_per_token_ns)
                                        : "withheld: " + tokens.withheld) +
              " |\n";
    }
    text += "\n";
  }
  for (const auto& note : report.token_notes) text += "- " + note + "\n";
  if (!report.token_notes.empty()) text += "\n";
  return text;
}

}  // namespace

std::string step_kinds_markdown(const std::vector<StepKindReport>& windows) {
  if (windows.empty()) return {};
  std::string text = "## Engine steps\n\n";
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const StepKindReport& report = windows[w];
    if (windows.size() > 1) text += "### Window " + std::to_string(w + 1) + "\n\n";
    text += "Step range `" + report.step_range + "`: " + std::to_string(report.steps) + " steps" +
            (report.steps_left_out > 0
                 ? " (" + std::to_string(report.steps_left_out) + " more left out by nsys.capture_skip/capture_count)"
                 : std::string()) +
            ". **" + report.verdict + ".**";
    if (report.gpu_process) text += " The GPU work ran in process " + std::to_string(*report.gpu_process) + ".";
    if (!report.phases.empty()) text += " In every step: `" + detail::join(report.phases, "`, `") + "`.";
    text += "\n\n| kind | steps | p50 | p90 | p99 | GPU busy | GPU time | share | processes | top kernel |\n";
    text += "|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
    for (const auto& kind : report.kinds) {
      std::vector<std::string> pids;
      for (auto pid : kind.processes) pids.push_back(std::to_string(pid));
      text += "| `" + kind.name + "` | " + std::to_string(kind.count) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.step_time.p50_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.step_time.p90_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.step_time.p99_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.gpu_busy_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.gpu_time_ns)) + " | " +
              detail::format_fraction_percent(kind.gpu_time_share) + " | " + detail::join(pids, ", ") + " | " +
              (kind.top_kernels.empty() ? std::string("-") : "`" + kind.top_kernels.front().name + "`") + " |\n";
    }
    text += "\n" + tokens_markdown(report);
  }
  if (windows.size() > 1) {
    text += "Side by side (steps per kind, median step time):\n\n";
    std::set<std::string> names;
    for (const auto& report : windows)
      for (const auto& kind : report.kinds) names.insert(kind.name);
    for (const auto& name : names) {
      std::string line = "- `" + name + "`:";
      for (std::size_t w = 0; w < windows.size(); ++w) {
        const auto& kinds = windows[w].kinds;
        const auto found =
            std::find_if(kinds.begin(), kinds.end(), [&](const auto& kind) { return kind.name == name; });
        line += (w == 0 ? " " : " | ") + ("window " + std::to_string(w + 1) + " ");
        line += found == kinds.end() ? std::string("none")
                                     : std::to_string(found->count) + " steps, " +
                                           detail::format_duration_ns(static_cast<double>(found->step_time.p50_ns));
      }
      text += line + "\n";
    }
    text += "\n";
  }
  return text;
}

std::string step_kinds_json(const std::vector<StepKindReport>& windows) {
  boost::json::array listed;
  for (const auto& report : windows) {
    boost::json::array kinds;
    for (const auto& kind : report.kinds) {
      boost::json::array kernels, processes;
      for (const auto& kernel : kind.top_kernels)
        kernels.push_back({{"name", kernel.name}, {"count", kernel.count}, {"total_ns", kernel.total_ns}});
      for (auto pid : kind.processes) processes.push_back(pid);
      boost::json::object entry{{"name", kind.name},
                                {"count", kind.count},
                                {"p50_ns", kind.step_time.p50_ns},
                                {"p90_ns", kind.step_time.p90_ns},
                                {"p99_ns", kind.step_time.p99_ns},
                                {"gpu_busy_ns", kind.gpu_busy_ns},
                                {"gpu_time_ns", kind.gpu_time_ns},
                                {"top_kernels", std::move(kernels)},
                                {"processes", std::move(processes)}};
      entry["gpu_time_share"] =
          kind.gpu_time_share ? boost::json::value(*kind.gpu_time_share) : boost::json::value(nullptr);
      if (kind.tokens) {
        const auto optional = [](const std::optional<double>& value) {
          return value ? boost::json::value(*value) : boost::json::value(nullptr);
        };
        entry["tokens"] = {{"workload_steps", kind.tokens->workload_steps},
                           {"prompt_tokens", kind.tokens->prompt_tokens},
                           {"decode_tokens", kind.tokens->decode_tokens},
                           {"tokens_per_step", optional(kind.tokens->tokens_per_step)},
                           {"time_per_token_ns", optional(kind.tokens->time_per_token_ns)},
                           {"withheld", kind.tokens->withheld}};
      }
      kinds.push_back(std::move(entry));
    }
    boost::json::array phases;
    for (const auto& phase : report.phases) phases.push_back(boost::json::value(phase));
    boost::json::object window{
        {"step_range", report.step_range}, {"steps", report.steps},       {"steps_left_out", report.steps_left_out},
        {"kinds", std::move(kinds)},       {"phases", std::move(phases)}, {"verdict", report.verdict}};
    window["gpu_process"] = report.gpu_process ? boost::json::value(*report.gpu_process) : boost::json::value(nullptr);
    if (!report.token_notes.empty()) {
      boost::json::array notes;
      for (const auto& note : report.token_notes) notes.push_back(boost::json::value(note));
      window["token_notes"] = std::move(notes);
    }
    listed.push_back(std::move(window));
  }
  return boost::json::serialize(
      boost::json::object{{"schema", "llmprof.step_kinds/1"}, {"windows", std::move(listed)}});
}

}  // namespace llmprof
