// Figures that cannot be true are withheld with a warning naming their inputs, never printed: in the
// analysis (busy <= span, percent of peak <= 100), for a unit ncu printed that is not a time, and when
// a report.json from elsewhere holds "700%".
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>

#include "llmprof/analysis.hpp"
#include "llmprof/report.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;
namespace fs = std::filesystem;

namespace {

fs::path copy_of_recorded_run(const TempDir& temp) {
  fs::copy(data_path("h100-1b-decode"), temp / "run", fs::copy_options::recursive);
  return temp / "run";
}

const StageAnalysis& stage_named(const AnalysisReport& report, const std::string& name) {
  for (const auto& stage : report.stages) {
    if (stage.name == name) return stage;
  }
  FAIL("no stage " << name);
  throw std::logic_error("unreachable");
}

bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

// A copy of a recorded run whose analysis/report.json a test edits, then writes back.
struct EditedReport {
  explicit EditedReport(const TempDir& temp) : run(temp / "run"), file(run / "analysis/report.json") {
    fs::copy(data_path("runs/h100-decode-b4"), run, fs::copy_options::recursive);
    root = boost::json::parse(read_file(file)).as_object();
  }
  boost::json::object& first_stage() { return root.at("stages").as_array().at(0).as_object(); }
  void write() const { write_file(file, boost::json::serialize(root)); }

  fs::path run, file;
  boost::json::object root;
};

}  // namespace

TEST_CASE("a GPU projection shorter than the kernel time withholds GPU busy instead of printing 10^7 %") {
  TempDir temp;
  const fs::path run = copy_of_recorded_run(temp);
  // The recorded decode projection is 2774445119 ns; 1 ns is a table from some other capture.
  const fs::path projection = run / "nsys/summary_nvtx_gpu_proj_sum.csv";
  std::string table = read_file(projection);
  table.replace(table.find(":decode,PushPop,2774445119,"), std::string(":decode,PushPop,2774445119,").size(),
                ":decode,PushPop,1,");
  write_file(projection, table);

  AnalysisOptions options;
  options.top_n = 10;
  options.capture_gated_on_stage = true;
  const auto report = analyze_run_directory(run, options);
  REQUIRE(report.has_value());
  const auto& decode = stage_named(*report, "decode");
  CHECK(decode.gpu_projection_ns == 1);
  CHECK_FALSE(decode.gpu_busy_fraction.has_value());  // before: kernel time / 1 ns, "GPU busy 31374356%"
  CHECK(decode.verdict.find("GPU-bound") == std::string::npos);
  CHECK(any_contains(report->warnings, "stage 'decode': gpu_busy_fraction = "));
  CHECK(any_contains(report->warnings, "nsys nvtx_gpu_proj_sum"));
  // Nothing in report.json or the rendered figures is above 100 %.
  const std::string json = analysis_report_json(*report);
  const auto root = boost::json::parse(json).as_object();
  for (const auto& stage : root.at("stages").as_array()) {
    const auto& busy = stage.as_object().at("gpu_busy_fraction");
    CHECK((busy.is_null() || busy.to_number<double>() <= 1.0));
  }
}

TEST_CASE("gpu__time_duration in a unit that is not a time is an input error, not taken as nanoseconds") {
  TempDir temp;
  const fs::path run = copy_of_recorded_run(temp);
  const fs::path raw = run / "ncu/raw.csv";
  std::string text = read_file(raw);
  // Find gpu__time_duration.sum's column in the header and give it an unknown unit in the units row.
  const auto header_end = text.find('\n');
  const std::string header = text.substr(0, header_end);
  std::size_t column = 0;
  for (std::size_t at = 0; at < header.find("\"gpu__time_duration.sum\""); ++at) column += header[at] == ',';
  const auto units_end = text.find('\n', header_end + 1);
  std::string units = text.substr(header_end + 1, units_end - header_end - 1);
  std::size_t at = 0;
  for (std::size_t commas = 0; commas < column; ++at) commas += units[at] == ',';
  const auto close = units.find('"', at + 1);
  units.replace(at, close - at + 1, "\"furlong\"");
  text.replace(header_end + 1, units_end - header_end - 1, units);
  write_file(raw, text);

  AnalysisOptions options;
  const auto report = analyze_run_directory(run, options);
  // Before: read as nanoseconds. Every launch's duration is unusable, so the input is refused, by name.
  REQUIRE_FALSE(report.has_value());
  CHECK(report.error().code == ErrorCode::parse_error);
  CHECK_THAT(report.error().message, Catch::Contains("gpu__time_duration.sum is in 'furlong'"));
  CHECK_THAT(report.error().message, Catch::Contains("ncu/raw.csv"));
}

TEST_CASE("a report.json holding impossible figures renders them as withheld, with the warning") {
  TempDir temp;
  EditedReport report(temp);
  auto& stage = report.first_stage();
  const std::string name(stage.at("name").as_string());
  stage["gpu_busy_fraction"] = 7.0;  // "700%"
  stage["mfu"] = -0.5;
  report.root.at("kernels").as_array().at(0).as_object()["pct_peak_dram"] = 1e300;
  report.write();

  const auto model = load_run_report(report.run);
  REQUIRE(model.has_value());
  const auto found =
      std::find_if(model->stages.begin(), model->stages.end(), [&](const ReportStage& s) { return s.name == name; });
  REQUIRE(found != model->stages.end());
  CHECK_FALSE(found->gpu_busy_fraction.has_value());
  CHECK_FALSE(found->mfu.has_value());
  CHECK_FALSE(model->kernels.front().pct_peak_dram.has_value());
  CHECK(any_contains(model->warnings, "gpu_busy_fraction = 7 cannot be true"));
  const std::string markdown = render_markdown(*model);
  CHECK(markdown.find("700%") == std::string::npos);  // before: "GPU busy 700%"
  CHECK(markdown.find("gpu_busy_fraction = 7 cannot be true") != std::string::npos);
}

// The report applies the bounds of the same table rows the analysis checks a stage with, so a figure the analysis
// would withhold is withheld when report.json is read back too (the report used to check only 13 of them: a
// hand-edited step_ns = -3, dram_coverage = 2.5 or top-kernel share of 4 was read as it stood).
TEST_CASE("report.json read back: every bounded figure of a stage is checked, by the analysis's own rows") {
  TempDir temp;
  EditedReport report(temp);
  auto& stage = report.first_stage();
  const std::string name(stage.at("name").as_string());
  stage["step_ns"] = -3.0;
  stage["dram_coverage"] = 2.5;
  stage["flop_per_s_while_busy"] = -1.0;
  stage["top_kernels"] = boost::json::array{boost::json::object{{"name", "gemm"}, {"time_ns", 5}, {"share", 4.0}}};
  report.write();

  const auto model = load_run_report(report.run);
  REQUIRE(model.has_value());
  const ReportStage& read = model->stages.at(0);
  REQUIRE(read.name == name);
  CHECK_FALSE(read.step_ns.has_value());
  CHECK_FALSE(read.flop_per_s_while_busy.has_value());
  CHECK(read.dram_coverage == 0);  // a coverage stays a number: 0 with the warning
  REQUIRE(read.top_kernels.size() == 1);
  CHECK(read.top_kernels.front().share == 0);
  const std::string from = "; withheld. It came from analysis/report.json stages[0]: check that input (a unit, a "
                           "table from another capture, a hand-edited file)";
  const std::string subject = "report.json stage '" + name + "': ";
  CHECK(std::count(model->warnings.begin(), model->warnings.end(),
                   subject + "step_ns = -3 cannot be true (it is a finite amount >= 0)" + from) == 1);
  CHECK(std::count(model->warnings.begin(), model->warnings.end(),
                   subject + "dram_coverage = 2.5 cannot be true (a fraction lies in [0, 1])" + from) == 1);
  CHECK(std::count(model->warnings.begin(), model->warnings.end(),
                   subject + "flop_per_s_while_busy = -1 cannot be true (it is a finite amount >= 0)" + from) == 1);
  CHECK(std::count(model->warnings.begin(), model->warnings.end(),
                   subject + "share of 'gemm' = 4 cannot be true (a fraction lies in [0, 1])" + from) == 1);
}

TEST_CASE("a stage outside the nsys capture has no kernel busy time or kernel count, in report.json and the reports") {
  // The recorded run is gated on decode: `generate` encloses the capture and is known only from ncu's
  // NVTX stacks, so nsys measured neither its kernels nor their time (printed before as "0 ns" and "0").
  TempDir temp;
  const fs::path run = copy_of_recorded_run(temp);
  AnalysisOptions options;
  options.top_n = 10;
  options.capture_gated_on_stage = true;
  const auto report = analyze_run_directory(run, options);
  REQUIRE(report.has_value());
  const auto& generate = stage_named(*report, "generate");
  CHECK_FALSE(generate.kernel_time_ns.has_value());  // outside the capture: unmeasured, not 0
  CHECK_FALSE(generate.wall_ns.has_value());
  CHECK(generate.verdict.rfind("outside the nsys capture", 0) == 0);
  CHECK(stage_named(*report, "decode").kernel_time_ns.has_value());
  const auto root = boost::json::parse(analysis_report_json(*report)).as_object();
  for (const auto& value : root.at("stages").as_array()) {
    const auto& stage = value.as_object();
    const bool is_generate = stage.at("name").as_string() == "generate";
    CHECK(stage.at("kernel_time_ns").is_null() == is_generate);
    CHECK(stage.at("kernel_instances").is_null() == is_generate);
  }
  REQUIRE(write_analysis(*report, run / "analysis"));
  const auto model = load_run_report(run);
  REQUIRE(model.has_value());
  const std::string markdown = render_markdown(*model);
  CHECK(markdown.find("| generate | — | — | — | — | — | — | — | — |") != std::string::npos);
  CHECK(markdown.find("generate: Kernel busy and Kernels not measured (outside the nsys capture") != std::string::npos);
  const std::string html = render_html(*model);
  const auto row = html.find("<tr><td>generate</td>");
  REQUIRE(row != std::string::npos);
  const std::string generate_row = html.substr(row, html.find("</tr>", row) - row);
  CHECK(generate_row.find(">0 ns<") == std::string::npos);
  CHECK(generate_row.find(">0<") == std::string::npos);
  CHECK(html.find("generate: Kernel busy and Kernels not measured (outside the nsys capture") != std::string::npos);
}
