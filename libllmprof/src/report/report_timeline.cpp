// Timeline sections of report.md / report.html; see report_timeline.hpp.
#include "report/report_timeline.hpp"

#include <algorithm>
#include <cmath>

#include "core/format.hpp"
#include "core/json_fields.hpp"
#include "report/svg_chart.hpp"

namespace llmprof::detail {
namespace {

ReportTimelineStage stage_from(const boost::json::object& object, const std::string& where) {
  ReportTimelineStage stage;
  const auto domain = json_string(object, "domain", where + "domain").value_or("");
  stage.name = json_string(object, "name", where + "name").value_or("");
  if (!domain.empty()) stage.name = domain + ":" + stage.name;
  stage.level = static_cast<int>(json_integer(object, "level", where + "level").value_or(0));
  stage.parent = json_string(object, "parent", where + "parent").value_or("");
  if (const auto* duration = object.if_contains("cpu_duration"); duration != nullptr && duration->is_object()) {
    const auto& summary = duration->get_object();
    stage.instances = json_integer(summary, "count", where + "cpu_duration.count").value_or(0);
    stage.mean_ns = json_number(summary, "mean_ns", where + "cpu_duration.mean_ns");
    stage.p50_ns = json_number(summary, "p50_ns", where + "cpu_duration.p50_ns");
    stage.p90_ns = json_number(summary, "p90_ns", where + "cpu_duration.p90_ns");
    stage.p99_ns = json_number(summary, "p99_ns", where + "cpu_duration.p99_ns");
    stage.max_ns = json_number(summary, "max_ns", where + "cpu_duration.max_ns");
  }
  stage.gpu_busy_fraction = json_number(object, "gpu_busy_fraction", where + "gpu_busy_fraction");
  stage.graph_executions = json_integer(object, "graph_executions", where + "graph_executions").value_or(0);
  stage.active_ns = json_number(object, "active_ns", where + "active_ns");
  stage.gpu_busy_ns = json_number(object, "gpu_busy_ns", where + "gpu_busy_ns");
  stage.gpu_time_ns = json_number(object, "gpu_time_ns", where + "gpu_time_ns");
  stage.graph_time_ns = json_number(object, "graph_time_ns", where + "graph_time_ns");
  if (const auto* loss = object.if_contains("capture_loss"); loss != nullptr && loss->is_object()) {
    const auto& figures = loss->get_object();
    stage.graph_launches = json_integer(figures, "graph_launches", where + "capture_loss.graph_launches").value_or(0);
    stage.graph_launches_without_record =
        json_integer(figures, "graph_launches_without_record", where + "capture_loss.graph_launches_without_record")
            .value_or(0);
  }
  if (const auto* partial = object.if_contains("partial"); partial != nullptr && partial->is_bool())
    stage.partial = partial->get_bool();
  stage.steady_state = json_string(object, "steady_state", where + "steady_state").value_or("");
  stage.verdict = json_string(object, "verdict", where + "verdict").value_or("");
  if (const auto* headroom = object.if_contains("headroom"); headroom != nullptr && headroom->is_object()) {
    const auto& figures = headroom->get_object();
    stage.predicted_step_ns = json_number(figures, "predicted_step_ns", where + "headroom.predicted_step_ns");
    stage.current_step_ns = json_number(figures, "current_step_ns", where + "headroom.current_step_ns");
    stage.predicted_steps_per_s =
        json_number(figures, "predicted_steps_per_s", where + "headroom.predicted_steps_per_s");
  }
  stage.instances_omitted = json_integer(object, "instances_omitted", where + "instances_omitted").value_or(0);
  for (const auto& instance : json_objects(object, "instances", where + "instances")) {
    const double start = json_number(instance, "cpu_start_ns", where + "instances.cpu_start_ns").value_or(0);
    const double end = json_number(instance, "cpu_end_ns", where + "instances.cpu_end_ns").value_or(0);
    stage.instance_cpu_and_busy_ns.emplace_back(
        end - start, json_number(instance, "gpu_busy_ns", where + "instances.gpu_busy_ns").value_or(0));
  }
  return stage;
}

std::string busy_text(const ReportTimelineStage& stage) {
  if (stage.gpu_busy_fraction) return format_fraction_percent(stage.gpu_busy_fraction);
  return stage.partial ? "partial" : kNotComputed;
}

std::string headroom_text(const ReportTimelineStage& stage) {
  if (!stage.predicted_step_ns || !stage.current_step_ns) return kNotComputed;
  return format_duration_ns(*stage.predicted_step_ns) + " per instance instead of " +
         format_duration_ns(*stage.current_step_ns) + " (" + format_number(stage.predicted_steps_per_s.value_or(0)) +
         "/s)";
}

std::vector<std::string> validity_lines(const ReportTimeline& timeline) {
  std::vector<std::string> lines = timeline.capture_losses;
  if (timeline.graph_hidden) lines.push_back(*timeline.graph_hidden);
  lines.insert(lines.end(), timeline.notes.begin(), timeline.notes.end());
  if (lines.empty()) lines.push_back("every launch inside the ranges has a GPU record; no graph-hidden kernels");
  return lines;
}

// The stage whose instances are steps: among the stages with GPU work and two or more instances, the one
// with the most instances directly inside `loop_stage` (the selection stage, e.g. decode_step inside
// decode), else the one with the most instances anywhere. Without the first rule a tensor-parallel run
// charted its 4,096 all_reduce ranges instead of its 128 decode steps (two H200s, 2026-11-23).
const ReportTimelineStage* step_stage(const ReportTimeline& timeline, const std::string& loop_stage) {
  const auto most_instances = [&](bool inside_loop) {
    const ReportTimelineStage* best = nullptr;
    for (const auto& stage : timeline.stages) {
      if (inside_loop && (loop_stage.empty() || stage.parent != loop_stage)) continue;
      const bool has_gpu = std::any_of(stage.instance_cpu_and_busy_ns.begin(), stage.instance_cpu_and_busy_ns.end(),
                                       [](const auto& figures) { return figures.second > 0; });
      if (has_gpu && stage.instances >= 2 && (best == nullptr || stage.instances > best->instances)) best = &stage;
    }
    return best;
  };
  const ReportTimelineStage* inside = most_instances(true);
  return inside != nullptr ? inside : most_instances(false);
}

}  // namespace

void read_timeline(const boost::json::object& root, RunReportModel& model) {
  const auto* found = root.if_contains("timeline");
  if (found == nullptr || found->is_null()) return;
  if (!found->is_object()) throw JsonFieldError{"timeline"};
  const auto& object = found->get_object();
  ReportTimeline timeline;
  timeline.source = json_string(object, "source", "timeline.source").value_or("");
  timeline.graph_trace = json_string(object, "graph_trace", "timeline.graph_trace").value_or("");
  if (const auto* validity = object.if_contains("validity"); validity != nullptr && validity->is_object()) {
    const auto& figures = validity->get_object();
    timeline.capture_losses = json_strings(figures, "capture_losses", "timeline.validity.capture_losses");
    timeline.graph_hidden = json_string(figures, "graph_hidden", "timeline.validity.graph_hidden");
    timeline.notes = json_strings(figures, "notes", "timeline.validity.notes");
    if (const auto* value = figures.if_contains("empty_capture"); value != nullptr && value->is_bool())
      timeline.empty_capture = value->get_bool();
    if (const auto* value = figures.if_contains("partial_capture"); value != nullptr && value->is_bool())
      timeline.partial_capture = value->get_bool();
  }
  std::size_t index = 0;
  for (const auto& stage : json_objects(object, "stages", "timeline.stages"))
    timeline.stages.push_back(stage_from(stage, "timeline.stages[" + std::to_string(index++) + "]."));
  model.timeline = std::move(timeline);
}

void write_timeline_markdown(const RunReportModel& model, std::ostringstream& out) {
  if (!model.timeline) return;
  const auto& timeline = *model.timeline;
  out << "## Stage instances (nsys SQLite timeline)\n\n";
  out << "CPU time per instance; GPU busy = union of the GPU work the stage launched over the time it was active "
         "(graph executions included). Graph trace: "
      << markdown_cell(timeline.graph_trace) << ".\n\n";
  out << "| Stage | Instances | Mean | p50 | p90 | p99 | Max | GPU busy | Steady state | Without launch overhead | "
         "Verdict |\n";
  out << "|---|--:|--:|--:|--:|--:|--:|--:|---|---|---|\n";
  const auto duration = [](const std::optional<double>& value) {
    return value ? format_duration_ns(*value) : std::string(kNotComputed);
  };
  for (const auto& stage : timeline.stages) {
    out << "| " << markdown_code(stage.name) << " | " << stage.instances << " | " << duration(stage.mean_ns) << " | "
        << duration(stage.p50_ns) << " | " << duration(stage.p90_ns) << " | " << duration(stage.p99_ns) << " | "
        << duration(stage.max_ns) << " | " << busy_text(stage) << " | " << markdown_cell(stage.steady_state) << " | "
        << markdown_cell(headroom_text(stage)) << " | " << markdown_cell(stage.verdict) << " |\n";
  }
  out << "\n## Measurement validity\n\n";
  for (const auto& line : validity_lines(timeline)) out << "- " << markdown_cell(line) << "\n";
  out << "\n";
}

namespace {

// The per-instance chart stays readable and the page small on long runs (2048 instances of
// `attention` in a 128-step decode): the first instances one bar each, where warm-up shows, then the
// rest as means of consecutive groups.
constexpr std::size_t kInstancesAlone = 16;
constexpr std::size_t kInstanceGroups = 24;

struct InstanceChart {
  std::string svg;
  std::string caption;
};

InstanceChart step_chart(const ReportTimelineStage& stage) {
  const auto& figures = stage.instance_cpu_and_busy_ns;
  const std::size_t count = figures.size();
  const bool grouped = count > kInstancesAlone + kInstanceGroups;
  const std::size_t alone = grouped ? kInstancesAlone : count;
  const std::size_t group_size = grouped ? (count - alone + kInstanceGroups - 1) / kInstanceGroups : 1;
  std::vector<StackedBar> bars;
  const auto add_bar = [&](std::size_t first, std::size_t last) {  // 0-based, inclusive
    double cpu_ns = 0, busy_ns = 0;
    for (std::size_t i = first; i <= last; ++i) {
      cpu_ns += figures[i].first;
      busy_ns += figures[i].second;
    }
    const double n = static_cast<double>(last - first + 1);
    cpu_ns /= n;
    busy_ns /= n;
    StackedBar bar;
    bar.label = first == last ? "#" + std::to_string(first + 1)
                              : "#" + std::to_string(first + 1) + "–" + std::to_string(last + 1) + " mean";
    bar.segments.push_back({"GPU busy", busy_ns, format_duration_ns(busy_ns) + " GPU busy", palette_color(0)});
    bar.segments.push_back({"CPU range without GPU work", std::max(cpu_ns - busy_ns, 0.0),
                            format_duration_ns(cpu_ns) + " CPU range", palette_color(1)});
    bars.push_back(std::move(bar));
  };
  for (std::size_t i = 0; i < alone; ++i) add_bar(i, i);
  for (std::size_t first = alone; first < count; first += group_size)
    add_bar(first, std::min(first + group_size, count) - 1);
  InstanceChart chart;
  chart.svg = render_stacked_bars_svg(bars, "time per instance (CPU range; GPU busy inside it)");
  chart.caption = grouped ? "Instances 1–" + std::to_string(alone) + " one bar each; instances " +
                                std::to_string(alone + 1) + "–" + std::to_string(count) + " as the mean of " +
                                std::to_string(bars.size() - alone) + " groups of up to " + std::to_string(group_size) +
                                " consecutive instances."
                          : "One bar per instance (" + std::to_string(count) + ").";
  return chart;
}

// Instances of the step stage by CPU time, in 10 equal-width bins from the shortest to the longest.
std::string step_histogram(const ReportTimelineStage& stage) {
  double low = INFINITY, high = 0;
  for (const auto& figures : stage.instance_cpu_and_busy_ns) {
    low = std::min(low, figures.first);
    high = std::max(high, figures.first);
  }
  constexpr int kBins = 10;
  const double width = std::max((high - low) / kBins, 1.0);
  std::vector<double> counts(kBins, 0);
  for (const auto& figures : stage.instance_cpu_and_busy_ns)
    counts[std::min(kBins - 1, static_cast<int>((figures.first - low) / width))] += 1;
  std::vector<StackedBar> bars;
  for (int bin = 0; bin < kBins; ++bin) {
    const std::string range = format_duration_ns(low + bin * width) + "–" + format_duration_ns(low + (bin + 1) * width);
    bars.push_back(
        {range, {{"instances", counts[bin], format_number(counts[bin]) + " instances in " + range, palette_color(0)}}});
  }
  // Bars are counts of instances (labels are the CPU-time bins), so totals are counts, not durations.
  return render_stacked_bars_svg(bars, "number of instances per CPU-time bin", [](double count) {
    return format_number(count) + (count == 1 ? " instance" : " instances");
  });
}

}  // namespace

void write_timeline_html(const RunReportModel& model, std::ostringstream& out) {
  if (!model.timeline) return;
  const auto& timeline = *model.timeline;
  out << "<section class=\"card\" id=\"stage-instances\"><h2>Stage instances</h2><p class=\"lead\">From the nsys "
         "SQLite "
         "export: CPU time per instance, GPU busy as the union of the GPU work each stage launched (graph executions "
         "included) over the time it was active. Graph trace: "
      << html_escape(timeline.graph_trace) << ".</p>";
  out << "<div class=\"table-wrap\"><table class=\"sortable\"><thead><tr><th>Stage</th><th class=\"num\">Instances</th>"
         "<th class=\"num\">Mean</th><th class=\"num\">p50</th><th class=\"num\">p90</th><th class=\"num\">p99</th>"
         "<th class=\"num\">Max</th><th class=\"num\">GPU busy</th><th>Steady state</th><th>Without launch "
         "overhead</th>"
         "<th>Verdict</th></tr></thead><tbody>";
  const auto duration = [](const std::optional<double>& value) {
    return value ? format_duration_ns(*value) : std::string(kNotComputed);
  };
  for (const auto& stage : timeline.stages) {
    out << "<tr><td><code>" << html_escape(stage.name) << "</code></td><td class=\"num\">" << stage.instances
        << "</td><td class=\"num\">" << duration(stage.mean_ns) << "</td><td class=\"num\">" << duration(stage.p50_ns)
        << "</td><td class=\"num\">" << duration(stage.p90_ns) << "</td><td class=\"num\">" << duration(stage.p99_ns)
        << "</td><td class=\"num\">" << duration(stage.max_ns) << "</td><td class=\"num\">" << busy_text(stage)
        << "</td><td>" << html_escape(stage.steady_state) << "</td><td>" << html_escape(headroom_text(stage))
        << "</td><td>" << html_escape(stage.verdict) << "</td></tr>";
  }
  out << "</tbody></table></div>";
  const std::string loop_stage = model.top_kernel_selection ? model.top_kernel_selection->stage : std::string();
  if (const auto* steps = step_stage(timeline, loop_stage)) {
    const auto chart = step_chart(*steps);
    // A stage outside the selection's loop keeps only its first instances in report.json.
    const std::string omitted =
        steps->instances_omitted > 0
            ? " These are its first " + std::to_string(steps->instance_cpu_and_busy_ns.size()) + " of " +
                  std::to_string(steps->instance_cpu_and_busy_ns.size() + steps->instances_omitted) +
                  " instances; analysis/instances.csv has every one."
            : std::string();
    out << "<h3>Per instance of <code>" << html_escape(steps->name) << "</code>: CPU range and GPU busy</h3><figure>"
        << chart.svg << "<figcaption>" << html_escape(chart.caption + omitted) << "</figcaption></figure>"
        << "<h3>Instance time histogram of <code>" << html_escape(steps->name) << "</code></h3><figure>"
        << step_histogram(*steps) << "<figcaption>Instances counted by their CPU time, in 10 equal bins from the "
        << "shortest to the longest." << html_escape(omitted) << "</figcaption></figure>";
  }
  out << "</section>\n<section class=\"card\" id=\"measurement-validity\"><h2>Measurement validity</h2><ul>";
  for (const auto& line : validity_lines(timeline)) out << "<li>" << html_escape(line) << "</li>";
  out << "</ul></section>\n";
}

}  // namespace llmprof::detail
