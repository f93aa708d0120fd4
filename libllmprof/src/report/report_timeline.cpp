// Timeline sections of report.md / report.html; see report_timeline.hpp.
#include "report/report_timeline.hpp"

#include <algorithm>
#include <cmath>

#include "core/format.hpp"
#include "core/json_fields.hpp"
#include "rundir/timeline_record_json.hpp"
#include "report/svg_chart.hpp"

namespace llmprof::detail {
namespace {

// Per instance: its CPU time and the GPU busy time inside it, in ns.
std::vector<std::pair<double, double>> instance_cpu_and_busy_ns(const TimelineStage& stage) {
  std::vector<std::pair<double, double>> figures;
  figures.reserve(stage.instances.size());
  for (const auto& instance : stage.instances)
    figures.emplace_back(static_cast<double>(instance.cpu_duration_ns()), static_cast<double>(instance.gpu_busy_ns));
  return figures;
}

std::string busy_text(const TimelineStage& stage) {
  if (stage.gpu_busy_fraction) return format_fraction_percent(stage.gpu_busy_fraction);
  return stage.partial() ? "partial" : kNotComputed;
}

std::string headroom_text(const TimelineStage& stage) {
  if (!stage.headroom) return kNotComputed;
  return format_duration_ns(stage.headroom->predicted_step_ns) + " per instance instead of " +
         format_duration_ns(stage.headroom->current_step_ns) + " (" +
         format_number(stage.headroom->predicted_steps_per_s) + "/s)";
}

std::vector<std::string> validity_lines(const TimelineReport& timeline) {
  const auto& validity = timeline.validity;
  std::vector<std::string> lines = validity.capture_losses;
  if (validity.graph_hidden) lines.push_back(*validity.graph_hidden);
  lines.insert(lines.end(), validity.notes.begin(), validity.notes.end());
  if (lines.empty()) lines.push_back("every launch inside the ranges has a GPU record; no graph-hidden kernels");
  return lines;
}

// The stage whose instances are steps: among the stages with GPU work and two or more instances, the one
// with the most instances directly inside `loop_stage` (the selection stage, e.g. decode_step inside
// decode), else the one with the most instances anywhere. Without the first rule a tensor-parallel run
// charted its 4,096 all_reduce ranges instead of its 128 decode steps (two H200s).
const TimelineStage* step_stage(const TimelineReport& timeline, const std::string& loop_stage) {
  const auto most_instances = [&](bool inside_loop) {
    const TimelineStage* best = nullptr;
    for (const auto& stage : timeline.stages) {
      if (inside_loop && (loop_stage.empty() || stage.parent.value_or("") != loop_stage)) continue;
      const bool has_gpu = std::any_of(stage.instances.begin(), stage.instances.end(),
                                       [](const auto& instance) { return instance.gpu_busy_ns > 0; });
      const auto count = stage.cpu_duration.count;
      if (has_gpu && count >= 2 && (best == nullptr || count > best->cpu_duration.count)) best = &stage;
    }
    return best;
  };
  const TimelineStage* inside = most_instances(true);
  return inside != nullptr ? inside : most_instances(false);
}

}  // namespace

void read_timeline(const boost::json::object& root, RunReportModel& model) {
  const auto* found = root.if_contains("timeline");
  if (found == nullptr || found->is_null()) return;
  if (!found->is_object()) throw JsonFieldError{"timeline"};
  model.timeline = read_timeline_record(found->get_object(), "timeline.");
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
  const auto duration = [](auto value) { return format_duration_ns(static_cast<double>(value)); };
  for (const auto& stage : timeline.stages) {
    const auto& cpu = stage.cpu_duration;
    out << "| " << markdown_code(stage.qualified_name())
        << (stage.is_library() ? " [library range: " + markdown_cell(stage.library) + "]" : std::string()) << " | "
        << cpu.count << " | " << duration(cpu.mean_ns)
        << " | " << duration(cpu.p50_ns) << " | " << duration(cpu.p90_ns) << " | " << duration(cpu.p99_ns) << " | "
        << duration(cpu.max_ns) << " | " << busy_text(stage) << " | " << markdown_cell(stage.steady_state_note) << " | "
        << markdown_cell(headroom_text(stage)) << " | " << markdown_cell(normalise_percentages(stage.verdict)) << " |\n";
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

InstanceChart step_chart(const TimelineStage& stage) {
  const auto figures = instance_cpu_and_busy_ns(stage);
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
std::string step_histogram(const TimelineStage& stage) {
  double low = INFINITY, high = 0;
  const auto figures = instance_cpu_and_busy_ns(stage);
  for (const auto& [cpu_ns, busy_ns] : figures) {
    low = std::min(low, cpu_ns);
    high = std::max(high, cpu_ns);
  }
  constexpr int kBins = 10;
  const double width = std::max((high - low) / kBins, 1.0);
  std::vector<double> counts(kBins, 0);
  for (const auto& [cpu_ns, busy_ns] : figures)
    counts[std::min(kBins - 1, static_cast<int>((cpu_ns - low) / width))] += 1;
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
  const auto duration = [](auto value) { return format_duration_ns(static_cast<double>(value)); };
  for (const auto& stage : timeline.stages) {
    const auto& cpu = stage.cpu_duration;
    out << "<tr><td><code>" << html_escape(stage.qualified_name()) << "</code>"
        << (stage.is_library() ? " [library range: " + html_escape(stage.library) + "]" : std::string())
        << "</td><td class=\"num\">" << cpu.count
        << "</td><td class=\"num\">" << duration(cpu.mean_ns) << "</td><td class=\"num\">" << duration(cpu.p50_ns)
        << "</td><td class=\"num\">" << duration(cpu.p90_ns) << "</td><td class=\"num\">" << duration(cpu.p99_ns)
        << "</td><td class=\"num\">" << duration(cpu.max_ns) << "</td><td class=\"num\">" << busy_text(stage)
        << "</td><td>" << html_escape(stage.steady_state_note) << "</td><td>" << html_escape(headroom_text(stage))
        << "</td><td>" << html_escape(normalise_percentages(stage.verdict)) << "</td></tr>";
  }
  out << "</tbody></table></div>";
  const std::string loop_stage = model.top_kernel_selection ? model.top_kernel_selection->stage : std::string();
  if (const auto* steps = step_stage(timeline, loop_stage)) {
    const auto chart = step_chart(*steps);
    // A stage outside the selection's loop keeps only its first instances in report.json.
    const std::string omitted =
        steps->instances_omitted > 0
            ? " These are its first " + std::to_string(steps->instances.size()) + " of " +
                  std::to_string(static_cast<std::int64_t>(steps->instances.size()) + steps->instances_omitted) +
                  " instances; analysis/instances.csv has every one."
            : std::string();
    out << "<h3>Per instance of <code>" << html_escape(steps->qualified_name()) << "</code>: CPU range and GPU busy</h3><figure>"
        << chart.svg << "<figcaption>" << html_escape(chart.caption + omitted) << "</figcaption></figure>"
        << "<h3>Instance time histogram of <code>" << html_escape(steps->qualified_name()) << "</code></h3><figure>"
        << step_histogram(*steps) << "<figcaption>Instances counted by their CPU time, in 10 equal bins from the "
        << "shortest to the longest." << html_escape(omitted) << "</figcaption></figure>";
  }
  out << "</section>\n<section class=\"card\" id=\"measurement-validity\"><h2>Measurement validity</h2><ul>";
  for (const auto& line : validity_lines(timeline)) out << "<li>" << html_escape(line) << "</li>";
  out << "</ul></section>\n";
}

}  // namespace llmprof::detail
