// Sweep index: one row per point, read from each point's MAIN directory; and run_sweep.
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/file_text.hpp"
#include "core/format.hpp"
#include "core/json_pretty.hpp"
#include "llmprof/report.hpp"
#include "llmprof/sweep.hpp"
#include "llmprof/workload_metrics.hpp"
#include "report/report_html_page.hpp"

namespace llmprof {
namespace json = boost::json;
namespace {

using detail::format_duration_ns;
using detail::format_fraction_percent;
using detail::html_escape;
using detail::markdown_cell;
using detail::markdown_code;

void read_metrics(const std::filesystem::path& main, SweepIndexRow& row) {
  const auto path = RunLayout(main).resolve(RunLayout::stage1_metrics());
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    row.notes.push_back(RunLayout::stage1_metrics().string() + " is absent: tokens/s unknown");
    return;
  }
  auto metrics = load_workload_metrics(path);
  if (!metrics) {
    row.notes.push_back(metrics.error().message);
    return;
  }
  row.batch = static_cast<int>(metrics->batch);
  row.tokens_per_s = metrics->tokens_per_s;
  row.time_per_output_token_s = metrics->time_per_output_token_s;
}

void read_report(const std::filesystem::path& main, const std::string& stage_name, SweepIndexRow& row) {
  auto model = load_run_report(main);
  if (!model) {
    row.notes.push_back(model.error().message);
    if (auto manifest = read_manifest(main)) row.status = to_string(manifest->status);
    return;
  }
  if (!model->run_status.empty()) row.status = model->run_status;
  for (const auto& stage : model->stages) {
    if (stage.name != stage_name) continue;
    if (stage.wall_ns) row.stage_wall_ns = static_cast<double>(*stage.wall_ns);
    row.stage_busy_fraction = stage.gpu_busy_fraction;
    row.stage_mfu = stage.mfu;
    row.stage_mfu_workload = stage.mfu_workload;
    return;
  }
  row.notes.push_back("report.json has no stage '" + stage_name + "'");
}

json::value optional_number(const std::optional<double>& value) {
  return value ? json::value(*value) : json::value(nullptr);
}

std::string tokens_text(const std::optional<double>& value) {
  if (!value) return detail::kNotComputed;
  return detail::format_number(*value, 4);
}

}  // namespace

SweepIndex build_sweep_index(const std::vector<SweepPointOutcome>& outcomes, const std::string& stage) {
  SweepIndex index;
  index.stage = stage;
  for (const auto& outcome : outcomes) {
    SweepIndexRow row;
    row.label = outcome.point.label;
    row.overrides = outcome.point.override_strings();
    row.main_directory = outcome.main_directory;
    row.status = outcome.error ? "failed" : "unknown";
    if (outcome.error) row.error = outcome.error->describe();
    if (outcome.main_directory) {
      read_metrics(*outcome.main_directory, row);
      read_report(*outcome.main_directory, stage, row);
      if (outcome.error) row.status = "failed";
    } else if (!outcome.error) {
      row.status = "not run";
    }
    index.rows.push_back(std::move(row));
  }
  return index;
}

std::string render_sweep_index_markdown(const SweepIndex& index) {
  std::ostringstream out;
  out << "# deep-profile sweep\n\n"
      << index.rows.size() << " configurations, one run directory each. Stage compared: **"
      << markdown_cell(index.stage) << "**.\n\n"
      << "| Point | Overrides | Status | Batch | Tokens/s | Time/token | " << markdown_cell(index.stage)
      << " wall | GPU busy | MFU (profiled) | MFU (workload) | Run directory |\n"
      << "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n";
  for (const auto& row : index.rows) {
    std::string overrides;
    for (const auto& entry : row.overrides) overrides += (overrides.empty() ? "" : " ") + markdown_code(entry);
    out << "| " << markdown_cell(row.label) << " | " << overrides << " | " << markdown_cell(row.status) << " | "
        << (row.batch ? std::to_string(*row.batch) : detail::kNotComputed) << " | " << tokens_text(row.tokens_per_s)
        << " | "
        << (row.time_per_output_token_s ? format_duration_ns(*row.time_per_output_token_s * 1e9) : detail::kNotComputed)
        << " | " << (row.stage_wall_ns ? format_duration_ns(*row.stage_wall_ns) : detail::kNotComputed) << " | "
        << format_fraction_percent(row.stage_busy_fraction) << " | " << format_fraction_percent(row.stage_mfu) << " | "
        << format_fraction_percent(row.stage_mfu_workload) << " | "
        << (row.main_directory ? markdown_code(row.main_directory->string()) : detail::kNotComputed) << " |\n";
  }
  bool any_problem = false;
  for (const auto& row : index.rows) {
    if (row.error.empty() && row.notes.empty()) continue;
    if (!any_problem) out << "\n## Problems\n\n";
    any_problem = true;
    if (!row.error.empty())
      out << "- **" << markdown_cell(row.label) << "** failed: " << markdown_cell(row.error) << "\n";
    for (const auto& note : row.notes)
      out << "- **" << markdown_cell(row.label) << "**: " << markdown_cell(note) << "\n";
  }
  out << "\n"
      << detail::kNotComputed << " = not computed. Compare two points in depth with `deep-profile compare A B`.\n";
  return out.str();
}

std::string render_sweep_index_html(const SweepIndex& index) {
  double best = 0;
  for (const auto& row : index.rows) best = std::max(best, row.tokens_per_s.value_or(0));
  std::ostringstream body;
  body << "<section class=\"card\" id=\"points\"><h2>Configurations</h2><div class=\"table-wrap\"><table "
          "class=\"sortable\">"
          "<thead><tr><th>Point</th><th>Overrides</th><th>Status</th><th class=\"num\">Batch</th><th "
          "class=\"num\">Tokens/s</th>"
          "<th class=\"num\">Time/token</th><th class=\"num\">"
       << html_escape(index.stage)
       << " wall</th><th class=\"num\">GPU busy</th>"
          "<th class=\"num\">MFU (profiled)</th><th class=\"num\">MFU (workload)</th><th>Run "
          "directory</th></tr></thead><tbody>";
  for (const auto& row : index.rows) {
    std::string overrides;
    for (const auto& entry : row.overrides) overrides += "<code>" + html_escape(entry) + "</code> ";
    char bar[16];
    std::snprintf(bar, sizeof bar, "%.0f", best > 0 ? row.tokens_per_s.value_or(0) / best * 60 : 0.0);
    body << "<tr><td>" << html_escape(row.label) << "</td><td>" << overrides << "</td><td><span class=\"badge\">"
         << html_escape(row.status) << "</span></td><td class=\"num\">"
         << (row.batch ? std::to_string(*row.batch) : detail::kNotComputed) << "</td><td class=\"num\""
         << detail::sort_key(row.tokens_per_s) << "><span class=\"share\" style=\"width:" << bar << "px\"></span>"
         << tokens_text(row.tokens_per_s) << "</td><td class=\"num\">"
         << (row.time_per_output_token_s ? format_duration_ns(*row.time_per_output_token_s * 1e9)
                                         : detail::kNotComputed)
         << "</td><td class=\"num\">"
         << (row.stage_wall_ns ? format_duration_ns(*row.stage_wall_ns) : detail::kNotComputed)
         << "</td><td class=\"num\"" << detail::sort_key(row.stage_busy_fraction) << ">"
         << format_fraction_percent(row.stage_busy_fraction) << "</td><td class=\"num\""
         << detail::sort_key(row.stage_mfu) << ">" << format_fraction_percent(row.stage_mfu) << "</td><td class=\"num\""
         << detail::sort_key(row.stage_mfu_workload) << ">" << format_fraction_percent(row.stage_mfu_workload)
         << "</td><td><code>" << (row.main_directory ? html_escape(row.main_directory->string()) : detail::kNotComputed)
         << "</code></td></tr>";
  }
  body << "</tbody></table></div></section>\n";
  std::string problems;
  for (const auto& row : index.rows) {
    if (!row.error.empty())
      problems += "<li><strong>" + html_escape(row.label) + "</strong> failed: " + html_escape(row.error) + "</li>";
    for (const auto& note : row.notes)
      problems += "<li><strong>" + html_escape(row.label) + "</strong>: " + html_escape(note) + "</li>";
  }
  if (!problems.empty())
    body << "<section class=\"card\" id=\"problems\"><h2>Problems</h2><ul>" << problems << "</ul></section>\n";
  return detail::html_page("Sweep: " + std::to_string(index.rows.size()) + " configurations",
                           "one run directory per configuration; stage compared: " + index.stage, body.str());
}

std::string sweep_index_to_json(const SweepIndex& index) {
  json::array rows;
  for (const auto& row : index.rows) {
    json::array overrides, notes;
    for (const auto& entry : row.overrides) overrides.emplace_back(entry);
    for (const auto& note : row.notes) notes.emplace_back(note);
    rows.push_back(
        json::object{{"label", row.label},
                     {"overrides", std::move(overrides)},
                     {"main", row.main_directory ? json::value(row.main_directory->string()) : json::value(nullptr)},
                     {"status", row.status},
                     {"error", row.error.empty() ? json::value(nullptr) : json::value(row.error)},
                     {"batch", row.batch ? json::value(*row.batch) : json::value(nullptr)},
                     {"tokens_per_s", optional_number(row.tokens_per_s)},
                     {"time_per_output_token_s", optional_number(row.time_per_output_token_s)},
                     {"stage_wall_ns", optional_number(row.stage_wall_ns)},
                     {"gpu_busy_fraction", optional_number(row.stage_busy_fraction)},
                     {"mfu", optional_number(row.stage_mfu)},
                     {"mfu_workload", optional_number(row.stage_mfu_workload)},
                     {"notes", std::move(notes)}});
  }
  return detail::pretty_json(
      json::object{{"schema", "llmprof.sweep_index/2"}, {"stage", index.stage}, {"points", std::move(rows)}});
}

Result<void> write_sweep_index(const SweepIndex& index, const std::filesystem::path& sweep_directory) {
  if (auto created = detail::ensure_directory(sweep_directory, "the sweep directory"); !created) return created;
  if (auto written = detail::write_file_atomically(sweep_directory / "index.md", render_sweep_index_markdown(index));
      !written)
    return written;
  if (auto written = detail::write_file_atomically(sweep_directory / "index.html", render_sweep_index_html(index));
      !written)
    return written;
  return detail::write_file_atomically(sweep_directory / "index.json", sweep_index_to_json(index));
}

Result<SweepIndex> run_sweep(const SweepPlan& plan, const SweepPointRunner& run_point, const SweepRunOptions& options) {
  std::vector<SweepPointOutcome> outcomes;
  bool stopped = false;
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    SweepPointOutcome outcome{plan.points[i], std::nullopt, std::nullopt};
    if (!stopped) {
      auto main = run_point(plan.points[i], i);
      if (main) {
        outcome.main_directory = *main;
      } else {
        outcome.error = main.error();
        stopped = options.stop_on_failure || main.error().code == ErrorCode::interrupted;
      }
    }
    outcomes.push_back(std::move(outcome));
  }
  SweepIndex index = build_sweep_index(outcomes, options.stage);
  if (auto written = write_sweep_index(index, options.sweep_directory); !written) return written.error();
  return index;
}

}  // namespace llmprof
