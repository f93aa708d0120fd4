// Issue 33: every derived figure passes its invariant checks before any writer sees it, or is withheld
// everywhere. Each case corrupts one input of the recorded H100 1b decode (tests/data/h100-1b-decode) the way
// the adversarial round did, runs the analysis and the report writers, and checks that report.json,
// analysis/stages.csv and the report (the model report.md and report.html render from) agree: a figure null
// in one is empty in all, the report finds nothing left to withhold on its own, and the reason is said.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/text.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/csv.hpp"
#include "llmprof/report.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;
namespace fs = std::filesystem;

namespace {

// ncu/raw.csv with `column` of every launch row replaced by change(its value); the units row is kept.
void corrupt_ncu_column(const fs::path& csv, const std::string& column, const std::function<double(double)>& change) {
  auto reader = CsvReader::open(csv);
  REQUIRE(reader);
  REQUIRE(reader->read_header());
  const auto index = reader->column(column);
  REQUIRE(index);
  const auto line_of = [](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) line += (i == 0 ? "" : ",") + llmprof::detail::csv_cell(cells[i]);
    return line + "\n";
  };
  std::string text = line_of(reader->header());
  bool units = true;
  while (*reader->next()) {
    std::vector<std::string> cells(reader->fields().begin(), reader->fields().end());
    if (!units) {
      const auto value = parse_csv_number(cells[*index]);
      REQUIRE(value);
      if (*value) cells[*index] = std::to_string(change(**value));
    }
    units = false;
    text += line_of(cells);
  }
  write_file(csv, text);
}

struct Outputs {
  boost::json::object report;                  // analysis/report.json
  std::vector<std::vector<std::string>> stages;  // analysis/stages.csv, header first
  RunReportModel model;                        // what report.md and report.html render
  std::string markdown;
};

Outputs analyze_and_render(const fs::path& main) {
  auto analysis = analyze_run_directory(main, {});
  if (!analysis) FAIL(analysis.error().describe());
  REQUIRE(write_analysis(*analysis, main / "analysis"));
  REQUIRE(write_reports(main));
  Outputs outputs;
  outputs.report = boost::json::parse(read_file(main / "analysis" / "report.json")).as_object();
  auto reader = CsvReader::open(main / "analysis" / "stages.csv");
  REQUIRE(reader);
  REQUIRE(reader->read_header());
  outputs.stages.push_back(reader->header());
  while (*reader->next()) outputs.stages.emplace_back(reader->fields().begin(), reader->fields().end());
  auto model = load_run_report(main);
  if (!model) FAIL(model.error().describe());
  outputs.model = std::move(*model);
  outputs.markdown = read_file(main / "report.md");
  return outputs;
}

// The optional figure `key` of every stage: null in report.json exactly when its stages.csv cell is empty and
// the report's model has none; and, when `withheld`, null everywhere.
void check_figure_agrees(const Outputs& outputs, const std::string& key, std::optional<double> ReportStage::*member,
                         bool withheld) {
  const auto& header = outputs.stages.front();
  const auto column = std::find(header.begin(), header.end(), key) - header.begin();
  REQUIRE(column < static_cast<std::ptrdiff_t>(header.size()));
  const auto& stages = outputs.report.at("stages").as_array();
  REQUIRE(stages.size() + 1 == outputs.stages.size());
  REQUIRE(outputs.model.stages.size() == stages.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    INFO(key << " of stage " << stages[i].at("name").as_string());
    const bool in_json = !stages[i].at(key).is_null();
    CHECK(in_json == !outputs.stages[i + 1][column].empty());
    CHECK(in_json == (outputs.model.stages[i].*member).has_value());
    if (withheld) CHECK_FALSE(in_json);
    if (in_json) CHECK(stages[i].at(key).to_number<double>() >= 0);
  }
}

std::vector<std::string> json_warnings(const Outputs& outputs) {
  std::vector<std::string> warnings;
  for (const auto& warning : outputs.report.at("warnings").as_array()) warnings.emplace_back(warning.as_string());
  return warnings;
}

// The report withheld nothing the analysis let through: its warnings are report.json's, no more.
void check_report_withholds_nothing_more(const Outputs& outputs) {
  const auto written = json_warnings(outputs);
  for (const auto& warning : outputs.model.warnings) {
    INFO(warning);
    CHECK(std::find(written.begin(), written.end(), warning) != written.end());
  }
}

bool any_warning_contains(const Outputs& outputs, const std::string& text) {
  const auto warnings = json_warnings(outputs);
  return std::any_of(warnings.begin(), warnings.end(), [&](const auto& w) { return w.find(text) != std::string::npos; });
}

// The bytes and what comes from them, withheld together.
void check_bytes_withheld(const Outputs& outputs) {
  check_figure_agrees(outputs, "dram_bytes", &ReportStage::dram_bytes, true);
  check_figure_agrees(outputs, "dram_bytes_per_s", &ReportStage::dram_bytes_per_s, true);
  check_figure_agrees(outputs, "dram_bytes_per_s_while_busy", &ReportStage::dram_bytes_per_s_while_busy, true);
  check_figure_agrees(outputs, "dram_bytes_per_step", &ReportStage::dram_bytes_per_step, true);
  check_figure_agrees(outputs, "mbu", &ReportStage::mbu, true);
}

fs::path copy_recorded(const TempDir& temp) {
  const fs::path main = temp.path() / "run";
  fs::copy(data_path("h100-1b-decode"), main, fs::copy_options::recursive);
  return main;
}

}  // namespace

TEST_CASE("figures: the recorded run as it is has DRAM bytes, bandwidth and MBU in all four outputs", "[figures]") {
  TempDir temp;
  const auto outputs = analyze_and_render(copy_recorded(temp));
  const auto& stages = outputs.report.at("stages").as_array();
  CHECK(std::any_of(stages.begin(), stages.end(), [](const auto& s) { return !s.at("mbu").is_null(); }));
  check_figure_agrees(outputs, "dram_bytes", &ReportStage::dram_bytes, false);
  check_figure_agrees(outputs, "dram_bytes_per_s", &ReportStage::dram_bytes_per_s, false);
  check_figure_agrees(outputs, "dram_bytes_per_step", &ReportStage::dram_bytes_per_step, false);
  check_figure_agrees(outputs, "mbu", &ReportStage::mbu, false);
  check_report_withholds_nothing_more(outputs);
}

TEST_CASE("figures: ncu DRAM bytes x1000 withhold the bytes, the bandwidth, bytes per step and MBU everywhere",
          "[figures]") {
  TempDir temp;
  const auto main = copy_recorded(temp);
  corrupt_ncu_column(main / "ncu" / "raw.csv", "dram__bytes.sum.per_second", [](double v) { return v * 1000; });
  const auto outputs = analyze_and_render(main);
  check_bytes_withheld(outputs);
  CHECK(any_warning_contains(outputs, "the bytes cannot be right"));
  // No bandwidth in the report past the device's peak (3.36 TB/s, which its Peaks line prints), but in the
  // warnings that say why the bytes are withheld.
  std::istringstream lines(outputs.markdown);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| **Peaks", 0) == 0 || line.find("the bytes cannot be right") != std::string::npos) continue;
    INFO(line);
    CHECK(line.find("TB/s") == std::string::npos);
    CHECK(line.find("PB/s") == std::string::npos);
  }
  check_report_withholds_nothing_more(outputs);
}

TEST_CASE("figures: negative ncu DRAM bytes leave no negative bytes per step in report.json", "[figures]") {
  TempDir temp;
  const auto main = copy_recorded(temp);
  corrupt_ncu_column(main / "ncu" / "raw.csv", "dram__bytes.sum.per_second", [](double v) { return -v; });
  const auto outputs = analyze_and_render(main);
  check_bytes_withheld(outputs);
  check_report_withholds_nothing_more(outputs);
}

TEST_CASE("figures: a negative optional model_bytes_per_step is left out with a warning, and the run has its report",
          "[figures]") {
  TempDir temp;
  const auto main = copy_recorded(temp);
  std::string metrics = read_file(main / "stage1" / "metrics.json");
  metrics.insert(metrics.rfind('}'), ", \"model_bytes_per_step\": -1\n");
  write_file(main / "stage1" / "metrics.json", metrics);
  const auto outputs = analyze_and_render(main);
  check_figure_agrees(outputs, "mbu_workload", &ReportStage::mbu_workload, true);
  check_figure_agrees(outputs, "mbu", &ReportStage::mbu, false);  // the measured MBU does not need the model's bytes
  CHECK(any_warning_contains(outputs, "key \"model_bytes_per_step\" must be a finite number >= 0, not the integer -1"));
  check_report_withholds_nothing_more(outputs);
}
