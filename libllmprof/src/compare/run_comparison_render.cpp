// Renderers for RunComparison: JSON ("llmprof.compare/2"), Markdown and self-contained HTML.
#include <boost/json.hpp>
#include <cmath>
#include <sstream>

#include "core/format.hpp"
#include "core/json_pretty.hpp"
#include "core/json_values.hpp"
#include "llmprof/run_comparison.hpp"
#include "report/report_html_page.hpp"

namespace llmprof {
namespace json = boost::json;
namespace {

using detail::format_fraction_percent;
using detail::html_escape;
using detail::markdown_cell;
using detail::markdown_code;

// Six decimals: enough for every figure we show, and stable text in golden files.
json::value rounded(const std::optional<double>& value) {
  if (!value) return nullptr;
  const double rounded_value = std::round(*value * 1e6) / 1e6;
  // Integral values (nanoseconds, counts) as JSON integers: "177371307", not "1.77371307E8".
  if (rounded_value == std::floor(rounded_value) && std::fabs(rounded_value) < 9e15) {
    return static_cast<std::int64_t>(rounded_value);
  }
  return rounded_value;
}

json::value noise_gate_json(const std::optional<NoiseGate>& gate) {
  if (!gate) return nullptr;
  json::array quantities;
  for (const auto& quantity : gate->quantities) {
    quantities.push_back(json::object{{"quantity", quantity.quantity},
                                      {"runs_a", quantity.runs_a},
                                      {"runs_b", quantity.runs_b},
                                      {"mean_a", quantity.mean_a},
                                      {"mean_b", quantity.mean_b},
                                      {"slowdown_pct", quantity.slowdown_pct},
                                      {"noise_pct", detail::json_or_null(quantity.noise_pct)},
                                      {"p_slower", quantity.p_slower},
                                      {"p_not_slower", quantity.p_not_slower},
                                      {"verdict", to_string(quantity.verdict)},
                                      {"problem", detail::json_or_null(quantity.problem)}});
  }
  return json::object{{"verdict", to_string(gate->verdict)},
                      {"level", gate->level},
                      {"summary", gate->summary},
                      {"quantities", std::move(quantities)}};
}

json::object delta_json(const ValueDelta& delta) {
  return {{"a", rounded(delta.a)},
          {"b", rounded(delta.b)},
          {"ratio", rounded(delta.ratio)},
          {"delta_pct", rounded(delta.delta_pct)}};
}

// The figures a stage's and a kernel's comparison hold as deltas, under their keys in the file, in the file's order.
template <class Comparison>
struct DeltaKey {
  const char* key;
  ValueDelta Comparison::*delta;
};
constexpr DeltaKey<StageComparison> kStageDeltas[] = {{"wall_ns", &StageComparison::wall_ns},
                                                      {"gpu_projection_ns", &StageComparison::gpu_projection_ns},
                                                      {"kernel_time_ns", &StageComparison::kernel_time_ns},
                                                      {"gpu_busy_fraction", &StageComparison::gpu_busy_fraction},
                                                      {"mfu", &StageComparison::mfu},
                                                      {"mfu_workload", &StageComparison::mfu_workload}};
constexpr DeltaKey<KernelComparison> kKernelDeltas[] = {{"avg_time_ns", &KernelComparison::avg_time_ns},
                                                        {"total_time_ns", &KernelComparison::total_time_ns},
                                                        {"instances", &KernelComparison::instances},
                                                        {"share_of_total", &KernelComparison::share_of_total}};

// `object` (the comparison's name and other fields) with the comparison's deltas after them.
template <class Comparison, std::size_t N>
json::object with_deltas(json::object object, const Comparison& comparison, const DeltaKey<Comparison> (&deltas)[N]) {
  for (const auto& [key, delta] : deltas) object[key] = delta_json(comparison.*delta);
  return object;
}

json::array differences_json(const std::vector<SettingDifference>& differences) {
  json::array out;
  for (const auto& difference : differences)
    out.push_back(json::object{{"key", difference.key}, {"a", difference.a}, {"b", difference.b}});
  return out;
}

std::string delta_text(const ValueDelta& delta) {
  return delta.delta_pct ? detail::format_signed_percent(*delta.delta_pct) : detail::kNotComputed;
}

std::string ratio_text(const ValueDelta& delta) {
  return delta.ratio ? "×" + detail::format_number(*delta.ratio, 3) : detail::kNotComputed;
}

std::string duration_text(const std::optional<double>& value) {
  return value ? detail::format_duration_ns(*value) : detail::kNotComputed;
}

std::string summary_line(const RunComparison& comparison) {
  std::size_t counts[5] = {};
  for (const auto& kernel : comparison.kernels) ++counts[static_cast<int>(kernel.change)];
  return std::to_string(counts[static_cast<int>(KernelChange::slower)]) + " slower, " +
         std::to_string(counts[static_cast<int>(KernelChange::faster)]) + " faster, " +
         std::to_string(counts[static_cast<int>(KernelChange::added)]) + " new, " +
         std::to_string(counts[static_cast<int>(KernelChange::removed)]) + " gone, " +
         std::to_string(counts[static_cast<int>(KernelChange::unchanged)]) + " within ±" +
         detail::format_number(comparison.options.kernel_threshold_pct) + "%";
}

}  // namespace

std::string comparison_to_json(const RunComparison& comparison) {
  json::array stages;
  for (const auto& stage : comparison.stages) {
    stages.push_back(with_deltas(json::object{{"name", stage.name}, {"in_a", stage.in_a}, {"in_b", stage.in_b}}, stage,
                                 kStageDeltas));
  }
  json::array kernels;
  for (const auto& kernel : comparison.kernels) {
    kernels.push_back(
        with_deltas(json::object{{"name", kernel.name}, {"change", to_string(kernel.change)}}, kernel, kKernelDeltas));
  }
  const json::object root{
      {"schema", "llmprof.compare/2"},
      {"run_a", comparison.run_a},
      {"run_b", comparison.run_b},
      {"options", json::object{{"kernel_threshold_pct", rounded(comparison.options.kernel_threshold_pct)},
                               {"fail_if_slower_pct", rounded(comparison.options.fail_if_slower_pct)}}},
      {"stages", std::move(stages)},
      {"kernels", std::move(kernels)},
      {"environment", differences_json(comparison.environment)},
      {"config", differences_json(comparison.config)},
      {"regression", comparison.regression},
      {"regression_reasons", detail::json_array(comparison.regression_reasons)},
      {"inconclusive", comparison.inconclusive},
      {"inconclusive_reasons", detail::json_array(comparison.inconclusive_reasons)},
      {"noise_gate", noise_gate_json(comparison.noise_gate)},
      {"unlike_runs", detail::json_array(comparison.unlike_runs)}};
  return detail::pretty_json(root);
}

std::string render_comparison_markdown(const RunComparison& comparison) {
  std::ostringstream out;
  out << "# deep-profile comparison\n\n**A:** " << markdown_cell(comparison.run_a) << "  \n**B:** "
      << markdown_cell(comparison.run_b) << "\n\n";
  if (!comparison.unlike_runs.empty()) {
    out << "**WARNING: unlike runs.** These deltas compare two different things, not a change of one:\n\n";
    for (const auto& warning : comparison.unlike_runs) out << "- " << markdown_cell(warning) << "\n";
    out << "\n";
  }
  out << "Changes are B relative to A.";
  if (comparison.options.fail_if_slower_pct) {
    out << " Regression gate: a stage's wall or kernel time more than +"
        << detail::format_number(*comparison.options.fail_if_slower_pct) << "% slower.\n\n";
    if (comparison.noise_gate) out << "Noise gate: " << markdown_cell(comparison.noise_gate->summary) << "\n\n";
    if (comparison.regression) {
      out << "**REGRESSION**:\n\n";
      for (const auto& reason : comparison.regression_reasons) out << "- " << markdown_cell(reason) << "\n";
    } else if (comparison.noise_gate && comparison.noise_gate->verdict == NoiseVerdict::inconclusive) {
      out << "**Inconclusive**: the change cannot be told from the noise.\n";
    } else if (!comparison.inconclusive) {
      out << "**No regression.**\n";
    }
    if (comparison.inconclusive) {
      out << "\n**INCONCLUSIVE**: the gate could not compare:\n\n";
      for (const auto& reason : comparison.inconclusive_reasons) out << "- " << markdown_cell(reason) << "\n";
    }
  }
  out << "\n## Stages\n\n| Stage | Wall A | Wall B | Δ wall | Kernel time A | Kernel time B | Δ kernel | GPU busy A → "
         "B | MFU A → B |\n"
         "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& stage : comparison.stages) {
    out << "| " << markdown_cell(stage.name) << (stage.in_a ? "" : " (only B)") << (stage.in_b ? "" : " (only A)")
        << " | " << duration_text(stage.wall_ns.a) << " | " << duration_text(stage.wall_ns.b) << " | "
        << delta_text(stage.wall_ns) << " | " << duration_text(stage.kernel_time_ns.a) << " | "
        << duration_text(stage.kernel_time_ns.b) << " | " << delta_text(stage.kernel_time_ns) << " | "
        << format_fraction_percent(stage.gpu_busy_fraction.a) << " → "
        << format_fraction_percent(stage.gpu_busy_fraction.b) << " | " << format_fraction_percent(stage.mfu.a) << " → "
        << format_fraction_percent(stage.mfu.b) << " |\n";
  }
  out << "\n## Kernels\n\n"
      << summary_line(comparison) << " (judged on average time per launch).\n\n"
      << "| Change | Kernel | Avg A | Avg B | Δ avg | Ratio | Total A | Total B |\n|---|---|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& kernel : comparison.kernels) {
    if (kernel.change == KernelChange::unchanged) continue;
    out << "| " << to_string(kernel.change) << " | " << markdown_code(detail::kernel_display_name(kernel.name, 60))
        << " | " << duration_text(kernel.avg_time_ns.a) << " | " << duration_text(kernel.avg_time_ns.b) << " | "
        << delta_text(kernel.avg_time_ns) << " | " << ratio_text(kernel.avg_time_ns) << " | "
        << duration_text(kernel.total_time_ns.a) << " | " << duration_text(kernel.total_time_ns.b) << " |\n";
  }
  auto write_differences = [&](const char* title, const std::vector<SettingDifference>& differences) {
    out << "\n## " << title << "\n\n";
    if (differences.empty()) {
      out << "No differences.\n";
      return;
    }
    out << "| Key | A | B |\n|---|---|---|\n";
    for (const auto& difference : differences) {
      out << "| " << markdown_code(difference.key) << " | " << markdown_code(difference.a) << " | "
          << markdown_code(difference.b) << " |\n";
    }
  };
  write_differences("Environment differences", comparison.environment);
  write_differences("Configuration differences", comparison.config);
  return out.str();
}

namespace {

std::string delta_cell(const ValueDelta& delta) {
  const std::string css = !delta.delta_pct           ? ""
                          : *delta.delta_pct > 0.05  ? " delta-bad"
                          : *delta.delta_pct < -0.05 ? " delta-good"
                                                     : "";
  return "<td class=\"num" + css + "\"" + detail::sort_key(delta.delta_pct) + ">" + html_escape(delta_text(delta)) +
         "</td>";
}

void write_verdict_html(std::ostringstream& body, const RunComparison& comparison) {
  body << "<section class=\"card\" id=\"verdict\"><h2>Verdict</h2>";
  if (!comparison.unlike_runs.empty()) {
    body << "<ul class=\"verdicts\">";
    for (const auto& warning : comparison.unlike_runs)
      body << "<li class=\"verdict warn\"><strong>unlike runs</strong> " << html_escape(warning) << "</li>";
    body << "</ul>";
  }
  if (comparison.options.fail_if_slower_pct) {
    body << "<ul class=\"verdicts\">";
    for (const auto& reason : comparison.inconclusive_reasons) {
      body << "<li class=\"verdict warn\"><strong>cannot compare</strong> " << html_escape(reason) << "</li>";
    }
    if (comparison.noise_gate)
      body << "<li class=\"verdict\">Noise gate: " << html_escape(comparison.noise_gate->summary) << "</li>";
    if (comparison.regression) {
      for (const auto& reason : comparison.regression_reasons)
        body << "<li class=\"verdict warn\"><strong>regression</strong> " << html_escape(reason) << "</li>";
    } else if (comparison.noise_gate && comparison.noise_gate->verdict == NoiseVerdict::inconclusive) {
      body
          << "<li class=\"verdict warn\"><strong>inconclusive</strong>: the change cannot be told from the noise.</li>";
    } else if (comparison.noise_gate && comparison.noise_gate->verdict == NoiseVerdict::no_regression) {
      body << "<li class=\"verdict\">No regression beyond the noise.</li>";
    } else if (!comparison.inconclusive) {
      body << "<li class=\"verdict\">No stage is more than +"
           << detail::format_number(*comparison.options.fail_if_slower_pct) << "% slower.</li>";
    }
    body << "</ul>";
  }
  body << "<p class=\"lead\">Kernels: " << html_escape(summary_line(comparison)) << ".</p></section>\n";
}

void write_stages_html(std::ostringstream& body, const RunComparison& comparison) {
  body << "<section class=\"card\" id=\"stages\"><h2>Stages</h2><div class=\"table-wrap\"><table "
          "class=\"sortable\"><thead><tr>"
          "<th>Stage</th><th class=\"num\">Wall A</th><th class=\"num\">Wall B</th><th class=\"num\">Δ wall</th>"
          "<th class=\"num\">Kernel A</th><th class=\"num\">Kernel B</th><th class=\"num\">Δ kernel</th>"
          "<th class=\"num\">Busy A</th><th class=\"num\">Busy B</th><th class=\"num\">MFU A</th><th class=\"num\">MFU "
          "B</th></tr></thead><tbody>";
  for (const auto& stage : comparison.stages) {
    body << "<tr><td>" << html_escape(stage.name) << "</td><td class=\"num\">" << duration_text(stage.wall_ns.a)
         << "</td><td class=\"num\">" << duration_text(stage.wall_ns.b) << "</td>" << delta_cell(stage.wall_ns)
         << "<td class=\"num\">" << duration_text(stage.kernel_time_ns.a) << "</td><td class=\"num\">"
         << duration_text(stage.kernel_time_ns.b) << "</td>" << delta_cell(stage.kernel_time_ns) << "<td class=\"num\">"
         << format_fraction_percent(stage.gpu_busy_fraction.a) << "</td><td class=\"num\">"
         << format_fraction_percent(stage.gpu_busy_fraction.b) << "</td><td class=\"num\">"
         << format_fraction_percent(stage.mfu.a) << "</td><td class=\"num\">" << format_fraction_percent(stage.mfu.b)
         << "</td></tr>";
  }
  body << "</tbody></table></div></section>\n";
}

void write_kernels_html(std::ostringstream& body, const RunComparison& comparison) {
  body
      << "<section class=\"card\" id=\"kernels\"><h2>Kernels</h2><div "
         "class=\"table-wrap\">"
         "<table class=\"sortable\"><thead><tr><th>Change</th><th>Kernel</th><th class=\"num\">Avg A</th><th "
         "class=\"num\">Avg B</th>"
         "<th class=\"num\">Δ avg</th><th class=\"num\">Total A</th><th class=\"num\">Total B</th></tr></thead><tbody>";
  for (const auto& kernel : comparison.kernels) {
    const char* change = to_string(kernel.change);
    body << "<tr><td><span class=\"badge " << change << "\">" << change << "</span></td><td class=\"kernel\" title=\""
         << html_escape(kernel.name) << "\">" << html_escape(detail::kernel_display_name(kernel.name, 80))
         << "</td><td class=\"num\">" << duration_text(kernel.avg_time_ns.a) << "</td><td class=\"num\">"
         << duration_text(kernel.avg_time_ns.b) << "</td>" << delta_cell(kernel.avg_time_ns) << "<td class=\"num\">"
         << duration_text(kernel.total_time_ns.a) << "</td><td class=\"num\">" << duration_text(kernel.total_time_ns.b)
         << "</td></tr>";
  }
  body << "</tbody></table></div></section>\n";
}

void write_differences_html(std::ostringstream& body, const char* id, const char* title,
                            const std::vector<SettingDifference>& list) {
  body << "<section class=\"card\" id=\"" << id << "\"><h2>" << title << "</h2>";
  if (list.empty()) {
    body << "<p class=\"lead\">No differences.</p></section>\n";
    return;
  }
  body << "<table><thead><tr><th>Key</th><th>A</th><th>B</th></tr></thead><tbody>";
  for (const auto& difference : list) {
    body << "<tr><td><code>" << html_escape(difference.key) << "</code></td><td><code>" << html_escape(difference.a)
         << "</code></td><td><code>" << html_escape(difference.b) << "</code></td></tr>";
  }
  body << "</tbody></table></section>\n";
}

}  // namespace

std::string render_comparison_html(const RunComparison& comparison) {
  std::ostringstream body;
  write_verdict_html(body, comparison);
  write_stages_html(body, comparison);
  write_kernels_html(body, comparison);
  write_differences_html(body, "environment", "Environment differences", comparison.environment);
  write_differences_html(body, "config", "Configuration differences", comparison.config);
  return detail::html_page("Comparison: " + comparison.run_a + " → " + comparison.run_b, "B relative to A", body.str());
}

}  // namespace llmprof
