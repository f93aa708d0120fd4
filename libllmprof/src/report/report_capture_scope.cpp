// Which capture each figure comes from; see report_capture_scope.hpp.
#include "report/report_capture_scope.hpp"

#include <algorithm>
#include <cstdio>

#include "core/format.hpp"
#include "report/report_view.hpp"

namespace llmprof::detail {
namespace {

std::string qualified(const ReportStage& stage) {
  return stage.domain.empty() ? stage.name : stage.domain + ":" + stage.name;
}

bool measured(const TimelineStage& stage) { return stage.gpu_time_ns > 0 || stage.partial(); }

// The stage's recorded GPU time outside CUDA graphs, 0..1; nullopt without GPU time.
std::optional<double> outside_graphs_share(const TimelineStage& stage) {
  const auto total = static_cast<double>(stage.gpu_time_ns);
  if (total <= 0) return std::nullopt;
  return std::max(0.0, total - static_cast<double>(stage.graph_time_ns)) / total;
}

// The nsys option that lists graph kernels, as this tool's configuration spells it.
constexpr const char* kNodeTraceSetting = "--set 'nsys.extra_args=[\"--cuda-graph-trace=node\"]'";

const ReportStage* report_stage_named(const RunReportModel& model, const std::string& name) {
  for (const auto& stage : model.stages)
    if (qualified(stage) == name) return &stage;
  return nullptr;
}

// The kernel table read from the node-traced second capture: which capture each figure comes from, whether its
// kernel time agrees with the GPU time the first capture recorded, and what node tracing cost the host.
std::string node_capture_scope(const RunReportModel& model, const TimelineStage* stage) {
  std::string text =
      "Kernel figures (this table, the kernel selection and ncu's) come from a second capture traced per CUDA graph "
      "node (--cuda-graph-trace=node, " +
      model.node_capture->kernel_tables +
      "), taken because the first one recorded CUDA graph launches whole; stage times, GPU busy and the step chart "
      "come from the first capture.";
  if (stage == nullptr) return text;
  const std::string name = "`" + stage->qualified_name() + "`";
  const ReportStage* tabled = report_stage_named(model, stage->qualified_name());
  if (tabled != nullptr && tabled->kernel_time_ns && stage->gpu_time_ns > 0) {
    const double kernels = static_cast<double>(*tabled->kernel_time_ns);
    text += " In " + name + " the node-traced capture lists " + format_duration_ns(kernels) +
            " of kernel time against the " + format_duration_ns(static_cast<double>(stage->gpu_time_ns)) +
            " of GPU work the first capture recorded there, graph executions included (" +
            format_fraction_percent(kernels / static_cast<double>(stage->gpu_time_ns)) + ")";
    // The two captures see the same work only when neither lost any: a loss explains a ratio far from 100%.
    if (kernels < static_cast<double>(stage->gpu_time_ns) && stage->graph_time_ns > 0) {
      text += "; a graph execution's time includes the gaps between its kernels";
    }
    if (stage->loss.graph_launches_without_record > 0) {
      text += "; the first capture has no GPU record of " + std::to_string(stage->loss.graph_launches_without_record) +
              " of its " + std::to_string(stage->loss.graph_launches) + " graph launches (see Measurement validity)";
    }
    text += ".";
  }
  for (const auto& wall : model.node_capture->range_walls) {
    if (wall.range != stage->qualified_name() || wall.first_capture_ns <= 0) continue;
    text += " Node tracing slowed the host side: " + name + " took " + format_duration_ns(wall.node_capture_ns) +
            " of CPU time instead of " + format_duration_ns(wall.first_capture_ns) + ".";
  }
  return text;
}

}  // namespace

std::string share_text(double fraction) { return format_fraction_percent(fraction, PercentDigits::short_of_whole); }

const TimelineStage* kernel_table_stage(const RunReportModel& model) {
  if (!model.timeline) return nullptr;
  if (model.top_kernel_selection) {
    for (const auto& timed : model.timeline->stages)
      if (timed.qualified_name() == model.top_kernel_selection->stage && measured(timed)) return &timed;
  }
  const TimelineStage* best = nullptr;
  for (const auto& timed : model.timeline->stages) {
    if (!measured(timed) || timed.is_library()) continue;
    if (best == nullptr || timed.level < best->level ||
        (timed.level == best->level && timed.gpu_time_ns > best->gpu_time_ns))
      best = &timed;
  }
  return best;
}

bool kernel_table_misses_graph_kernels(const RunReportModel& model) {
  const auto* stage = kernel_table_stage(model);
  return stage != nullptr && !model.node_capture && model.timeline->graph_trace == "graph" &&
         (stage->graph_time_ns > 0 || stage->loss.graph_launches > 0);
}

std::string kernel_table_scope(const RunReportModel& model) {
  const auto* stage = kernel_table_stage(model);
  if (model.node_capture) return node_capture_scope(model, stage);
  if (stage == nullptr) return {};
  const std::string name = "`" + stage->qualified_name() + "`";
  const auto outside = outside_graphs_share(*stage);
  if (kernel_table_misses_graph_kernels(model)) {
    std::string text =
        "Kernel figures come from the nsys stats of a graph-traced capture (--cuda-graph-trace=graph, nsys's default), "
        "which list only kernels launched outside CUDA graphs";
    if (outside) {
      const std::string share = share_text(*outside);  // "< 0.1%" reads "less than 0.1%" in the sentence
      text += ": these kernels, with any copies launched beside them, are " +
              (share.rfind("< ", 0) == 0 ? "less than " + share.substr(2) : "the " + share) + " of " + name +
              "'s recorded GPU time that ran outside CUDA graphs; " + share_text(1 - *outside) + " ran inside " +
              std::to_string(stage->graph_executions) + " CUDA graph execution" +
              (stage->graph_executions == 1 ? "" : "s") + " whose kernels this capture does not list";
    }
    if (stage->loss.graph_launches_without_record > 0) {
      text += "; " + std::to_string(stage->loss.graph_launches_without_record) + " more of its " +
              std::to_string(stage->loss.graph_launches) +
              " graph launches have no GPU record at all (see Measurement validity)";
    }
    return text + ". Re-run with " + kNodeTraceSetting +
           " to list the graph kernels (node tracing slows the host side, so keep this capture for CPU times).";
  }
  if (model.timeline->graph_trace == "node" && stage->graph_time_ns > 0 && outside) {
    return "Kernel figures come from a node-traced capture (--cuda-graph-trace=node): kernels inside CUDA graphs are "
           "listed, and " +
           share_text(1 - *outside) + " of " + name +
           "'s recorded GPU time ran as graph nodes. Node tracing slows the host side: CPU times of this capture "
           "are longer than under the default graph trace.";
  }
  return {};
}

std::string stage_busy_cell(const RunReportModel& model, const ReportStage& stage) {
  if (!stage.gpu_busy_fraction) return format_fraction_percent(stage.gpu_busy_fraction);
  return format_fraction_percent(stage.gpu_busy_fraction) +
         (timeline_stage_of(model, stage) != nullptr ? " (timeline)" : " (stats)");
}

std::string stage_kernels_cell(const RunReportModel& model, const ReportStage& stage) {
  std::string text = format_count(stage.kernel_instances);
  const auto* timed = timeline_stage_of(model, stage);
  // Beside kernels that exclude the graphs' own; the node-traced capture's kernel counts include them.
  if (timed != nullptr && model.timeline->graph_trace == "graph" && timed->graph_executions > 0 && !model.node_capture)
    text += " + " + format_count(timed->graph_executions) + " graph executions";
  return text;
}

namespace {

// Which ncu set fed the profiled FLOP and DRAM bytes (config.toml's ncu.set), once a stage has either.
std::string ncu_set_sentence(const RunReportModel& model) {
  const bool profiled = std::any_of(model.stages.begin(), model.stages.end(),
                                    [](const auto& stage) { return stage.flop || stage.dram_bytes; });
  const auto entry = std::find_if(model.config.begin(), model.config.end(),
                                  [](const auto& key_value) { return key_value.first == "ncu.set"; });
  if (!profiled || entry == model.config.end()) return {};
  std::string set = entry->second;
  // config.toml's TOML text of the value: 'llmprof' or "llmprof".
  if (set.size() >= 2 && (set.front() == '"' || set.front() == '\'') && set.back() == set.front())
    set = set.substr(1, set.size() - 2);
  if (set == "llmprof")
    return " The profiled FLOP and DRAM bytes come from ncu.set = \"llmprof\": only the metrics this analysis reads "
           "(section LlmprofRoofline).";
  return " The profiled FLOP and DRAM bytes come from ncu's --set " + set + ".";
}

}  // namespace

std::string stages_caption(const RunReportModel& model) {
  bool from_timeline = false, from_stats = false;
  for (const auto& stage : model.stages) {
    if (!stage.gpu_busy_fraction) continue;
    (timeline_stage_of(model, stage) != nullptr ? from_timeline : from_stats) = true;
  }
  std::string text = "Wall, GPU projection, Kernel busy and Kernels come from the nsys stats tables";
  if (model.node_capture)
    text += " (Kernel busy and Kernels from the node-traced capture's, which list the kernels inside CUDA graphs)";
  else if (model.timeline && model.timeline->graph_trace == "graph")
    text += ", which do not see kernels inside CUDA graphs traced whole (the graph executions are counted beside them)";
  text += ".";
  if (from_timeline)
    text +=
        " GPU busy (timeline) = union of the GPU work the stage launched, graph executions included, over the time "
        "it was active, from the nsys SQLite export (the Stage instances section); the verdicts use it.";
  if (from_stats)
    text +=
        " GPU busy (stats) = kernel busy time / the time the stage took (the larger of its wall time and GPU "
        "projection).";
  // A null kernel time is a stage nsys never saw (analysis: outside the capture); its verdict says why.
  for (const auto& stage : model.stages) {
    if (stage.kernel_time_ns) continue;
    text += " " + stage_label(stage) + ": Kernel busy and Kernels not measured" +
            (stage.verdict.empty() ? std::string(".") : " (" + stage.verdict + ").");
  }
  return text + ncu_set_sentence(model);
}

void annotate_selection_scope(RunReportModel& model) {
  if (!model.top_kernel_selection || !kernel_table_misses_graph_kernels(model)) return;
  const auto* stage = kernel_table_stage(model);
  if (stage->qualified_name() != model.top_kernel_selection->stage) return;
  model.top_kernel_selection_notes.listed_share_of_gpu_time = outside_graphs_share(*stage);
}

}  // namespace llmprof::detail
