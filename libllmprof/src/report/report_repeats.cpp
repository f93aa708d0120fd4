// Repeats and GPU state in the report (see report_repeats.hpp). The statistics are recomputed from the
// samples with summarize_samples, so the report never shows a figure the samples do not support.
#include "report/report_repeats.hpp"

#include <fstream>

#include "core/file_text.hpp"
#include "core/format.hpp"
#include "core/json_fields.hpp"
#include "llmprof/run_layout.hpp"
#include "llmprof/sample_statistics.hpp"

namespace llmprof::detail {
namespace {

Error field_error(const std::filesystem::path& path, const std::string& field) {
  return make_error(ErrorCode::parse_error, path.string() + ": field '" + field + "' is missing or has the wrong type",
                    "re-run the stage that writes it, or remove the file", path.string());
}

std::vector<double> json_numbers(const boost::json::object& object, const std::string& field) {
  const auto* value = object.if_contains("samples");
  if (value == nullptr || !value->is_array()) throw JsonFieldError{field};
  std::vector<double> numbers;
  for (const auto& element : value->as_array()) {
    if (!element.is_number()) throw JsonFieldError{field};
    numbers.push_back(element.to_number<double>());
  }
  return numbers;
}

struct SummaryRow {
  std::string name;
  SampleSummary summary;
};

std::vector<SummaryRow> summaries(const RunReportModel& model) {
  std::vector<SummaryRow> rows;
  for (const auto& quantity : model.repeats) {
    auto summary = summarize_samples(quantity.samples);
    if (summary) rows.push_back({quantity.name, summary.value()});
  }
  return rows;
}

std::string seconds(double value) { return format_duration_ns(value * 1e9); }

std::string interval(const SampleSummary& summary) {
  if (!summary.confidence_low) return "n/a (1 run)";
  return seconds(*summary.confidence_low) + " – " + seconds(*summary.confidence_high);
}

std::string spread(const SampleSummary& summary) {
  if (!summary.relative_spread) return "n/a";
  return "±" + format_fraction_percent(*summary.relative_spread) + (summary.stable ? " (stable)" : " (not stable)");
}

}  // namespace

Result<void> read_repeats_and_gpu_state(const std::filesystem::path& main_directory, RunReportModel& model) {
  const auto repeats_path = RunLayout(main_directory).resolve(RunLayout::stage1_repeats());
  if (auto text = read_file_text(repeats_path)) {
    auto root = parse_json_object(*text, repeats_path);
    if (!root) return root.error();
    try {
      const auto* quantities = root->if_contains("quantities");
      if (quantities == nullptr || !quantities->is_object()) throw JsonFieldError{"quantities"};
      for (const auto& [name, value] : quantities->as_object()) {
        if (!value.is_object()) throw JsonFieldError{"quantities." + std::string(name)};
        model.repeats.push_back(
            {std::string(name), json_numbers(value.as_object(), "quantities." + std::string(name) + ".samples")});
      }
    } catch (const JsonFieldError& error) {
      return field_error(repeats_path, error.field);
    }
  }
  const auto gpu_path = RunLayout(main_directory).resolve(RunLayout::gpu_state());
  if (auto text = read_file_text(gpu_path)) {
    auto root = parse_json_object(*text, gpu_path);
    if (!root) return root.error();
    try {
      for (const auto& snapshot : json_objects(*root, "snapshots", "snapshots")) {
        for (auto& warning : json_strings(snapshot, "warnings", "snapshots.warnings"))
          model.gpu_state_warnings.push_back(warning);
        if (const auto* problem = snapshot.if_contains("problem");
            problem && problem->is_string() && model.gpu_state_problem.empty()) {
          model.gpu_state_problem = std::string(problem->as_string());
        }
      }
    } catch (const JsonFieldError& error) {
      return field_error(gpu_path, error.field);
    }
  }
  return {};
}

void write_repeats_markdown(const RunReportModel& model, std::ostringstream& out) {
  const auto rows = summaries(model);
  if (rows.empty() && model.gpu_state_warnings.empty() && model.gpu_state_problem.empty()) return;
  out << "## Repeats and noise\n\n";
  if (!rows.empty()) {
    out << "Stage 1 (the workload bare), " << rows.front().summary.count
        << (rows.front().summary.count == 1 ? " run" : " runs") << "; 95% confidence interval from Student's t.\n\n"
        << "| Quantity | Runs | Mean | Std dev | 95% CI | Spread |\n|---|--:|--:|--:|--:|--:|\n";
    for (const auto& row : rows) {
      out << "| " << markdown_cell(row.name) << " | " << row.summary.count << " | " << seconds(row.summary.mean)
          << " | " << seconds(row.summary.standard_deviation) << " | " << interval(row.summary) << " | "
          << spread(row.summary) << " |\n";
    }
    if (rows.front().summary.count < 2)
      out << "\nOne run cannot tell noise from change: set `run.repeats` to 5 or more.\n";
    out << "\n";
  }
  if (!model.gpu_state_problem.empty()) out << "GPU state: " << markdown_cell(model.gpu_state_problem) << ".\n\n";
  for (const auto& warning : model.gpu_state_warnings) out << "- **GPU:** " << markdown_cell(warning) << "\n";
  if (!model.gpu_state_warnings.empty()) out << "\n";
}

void write_repeats_html(const RunReportModel& model, std::ostringstream& out) {
  const auto rows = summaries(model);
  if (rows.empty() && model.gpu_state_warnings.empty() && model.gpu_state_problem.empty()) return;
  out << "<section class=\"card\" id=\"repeats\"><h2>Repeats and noise</h2>";
  if (!rows.empty()) {
    out << "<div class=\"table-wrap\"><table><thead><tr><th>Quantity</th><th class=\"num\">Runs</th><th "
           "class=\"num\">Mean</th>"
           "<th class=\"num\">Std dev</th><th class=\"num\">95% CI</th><th "
           "class=\"num\">Spread</th></tr></thead><tbody>";
    for (const auto& row : rows) {
      out << "<tr><td>" << html_escape(row.name) << "</td><td class=\"num\">" << row.summary.count
          << "</td><td class=\"num\">" << html_escape(seconds(row.summary.mean)) << "</td><td class=\"num\">"
          << html_escape(seconds(row.summary.standard_deviation)) << "</td><td class=\"num\">"
          << html_escape(interval(row.summary)) << "</td><td class=\"num\">" << html_escape(spread(row.summary))
          << "</td></tr>";
    }
    out << "</tbody></table></div>";
    if (rows.front().summary.count < 2)
      out << "<p>One run cannot tell noise from change: set <code>run.repeats</code> to 5 or more.</p>";
  }
  if (!model.gpu_state_problem.empty()) out << "<p>GPU state: " << html_escape(model.gpu_state_problem) << ".</p>";
  for (const auto& warning : model.gpu_state_warnings)
    out << "<p class=\"verdict warn\">" << html_escape(warning) << "</p>";
  out << "</section>\n";
}

}  // namespace llmprof::detail
