// report.json's ncu_coverage, mfu_workload, ncu_launches and node_capture as records: each key the tables write has
// its docs row, and a report.json whose keys are of the wrong type, missing or out of bounds reads as an error naming
// the key, or with the figure withheld and said so. The round trip on the recorded H100 run, against
// tests/tools/analysis_expected.py, is in analysis_test.cpp.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <set>
#include <string>

#include "json_key_paths.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_layout.hpp"
#include "rundir/report_model_json.hpp"
#include "rundir/report_ncu_records.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::collect_keys;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

// A report.json with one of each record, as the analysis writes them.
boost::json::object report_with_records() {
  boost::json::object root;
  root["schema"] = "llmprof.report/2";
  root["stages"] = boost::json::array();
  root["kernels"] = boost::json::array();
  root["ncu_coverage"] = detail::report_json(std::optional<ReportNcuCoverage>(ReportNcuCoverage{"decode", 0.9, 0.05}));
  ReportWorkloadMfu mfu;
  mfu.dtype = "fp16";
  mfu.peak_flop_per_s = 8.569867e14;
  mfu.stages.push_back({"decode", 2.999034e10, 3.499511e-5, 1.007230e-4});
  root["mfu_workload"] = detail::report_json(std::optional<ReportWorkloadMfu>(mfu));
  ReportNcuLaunch launch;
  launch.id = 2;
  launch.kernel_name = "gemm";
  launch.nvtx_stack = {"generate", "decode"};
  launch.flop = 5.035622e7;
  launch.flop_by_precision = {{"fp16", 50331648}, {"fp32", 24576}};
  launch.bound = "latency";
  root["ncu_launches"] = detail::report_json(std::vector<ReportNcuLaunch>{launch, launch});
  ReportNodeCapture capture;
  capture.kernel_tables = "nsys/node/summary_*.csv";
  capture.range_walls.push_back({"decode", 100, 120});
  root["node_capture"] = detail::report_json(capture);
  return root;
}

Result<RunReportModel> load_with(const TempDir& temp, const boost::json::object& root) {
  write_file(temp.path() / RunLayout::analysis_report(), boost::json::serialize(root));
  return load_run_report(temp.path());
}

bool any_warning(const RunReportModel& model, const std::string& text) {
  for (const auto& warning : model.warnings)
    if (warning.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("every key of ncu_coverage, mfu_workload, ncu_launches and node_capture is documented", "[report]") {
  std::set<std::string> keys;
  const auto root = report_with_records();
  for (const char* record : {"ncu_coverage", "mfu_workload", "ncu_launches", "node_capture"}) {
    boost::json::object only;
    only[record] = root.at(record);
    collect_keys(only, "", keys);
  }
  // flop_by_precision's keys are data (the precisions a launch used), not keys of the record.
  std::erase_if(keys, [](const std::string& key) { return key.starts_with("ncu_launches[].flop_by_precision."); });
  const std::string docs = read_file(std::filesystem::path(LLMPROF_SOURCE_DIR) / "docs" / "report-json.md");
  const auto section = docs.find("## `ncu_coverage`, `mfu_workload`");
  REQUIRE(section != std::string::npos);
  const std::string records_docs = docs.substr(section, docs.find("\n## ", section + 1) - section);
  for (const auto& key : keys) {
    INFO(key);
    CHECK(records_docs.find("`" + key + "`") != std::string::npos);
  }
  // 4 records; coverage 4 keys, mfu 3 + 4 per stage, a launch 15, node capture 2 + 3 per range.
  CHECK(keys.size() == 35);
}

TEST_CASE("report.json's ncu records read back as written, each figure in its member", "[report]") {
  TempDir temp;
  const auto root = report_with_records();
  const auto model = load_with(temp, root);
  INFO((model ? std::string() : model.error().describe()));
  REQUIRE(model.has_value());
  REQUIRE(model->ncu_coverage.has_value());
  CHECK(model->ncu_coverage->measured == 0.9);
  CHECK(model->ncu_coverage->extrapolated == 0.05);
  CHECK(root.at("ncu_coverage").at("reached").as_double() == Approx(0.95));
  REQUIRE(model->mfu_workload.has_value());
  REQUIRE(model->mfu_workload->stages.size() == 1);
  CHECK(model->mfu_workload->stages[0].mfu_ncu == 1.007230e-4);
  REQUIRE(model->ncu_launches.size() == 2);
  CHECK(model->ncu_launches[1].nvtx_stack == std::vector<std::string>{"generate", "decode"});
  CHECK(model->ncu_launches[1].flop_by_precision ==
        std::vector<std::pair<std::string, double>>{{"fp16", 50331648}, {"fp32", 24576}});
  CHECK_FALSE(model->ncu_launches[1].duration_ns.has_value());  // null stays null
  REQUIRE(model->node_capture.has_value());
  CHECK(model->node_capture->range_walls.at(0).node_capture_ns == 120);
  CHECK(model->warnings.empty());
  // Written again from the model: the same keys and values.
  CHECK(detail::report_json(model->ncu_coverage) == root.at("ncu_coverage"));
  CHECK(detail::report_json(model->mfu_workload) == root.at("mfu_workload"));
  CHECK(boost::json::value(detail::report_json(model->ncu_launches)) == root.at("ncu_launches"));

  // A report.json written before any of them: none, and nothing made up.
  auto older = root;
  for (const char* record : {"ncu_coverage", "mfu_workload", "ncu_launches", "node_capture"}) older.erase(record);
  const auto without = load_with(temp, older);
  REQUIRE(without.has_value());
  CHECK_FALSE(without->ncu_coverage.has_value());
  CHECK_FALSE(without->mfu_workload.has_value());
  CHECK(without->ncu_launches.empty());
  CHECK_FALSE(without->top_kernel_selection_notes.ncu_measured.has_value());
}

TEST_CASE("a bad ncu record in report.json is refused naming the key, or its figure withheld and said so", "[report]") {
  TempDir temp;
  const auto refused = [&](const boost::json::object& root) {
    const auto model = load_with(temp, root);
    REQUIRE_FALSE(model.has_value());
    CHECK(model.error().code == ErrorCode::parse_error);
    return model.error().message;
  };
  SECTION("a coverage without its measured share") {
    auto root = report_with_records();
    root["ncu_coverage"].as_object().erase("measured");
    CHECK_THAT(refused(root), Catch::Contains("'ncu_coverage.measured' is missing or has the wrong type"));
  }
  SECTION("a launch's FLOP that is no number, and a precision's FLOP that is no number") {
    auto root = report_with_records();
    root["ncu_launches"].as_array()[1].as_object()["flop"] = "many";
    CHECK_THAT(refused(root), Catch::Contains("'ncu_launches[1].flop'"));
    root = report_with_records();
    root["ncu_launches"].as_array()[0].as_object()["flop_by_precision"].as_object()["fp16"] = "x";
    CHECK_THAT(refused(root), Catch::Contains("'ncu_launches[0].flop_by_precision.fp16'"));
  }
  SECTION("a coverage share of 1.7: the coverage is dropped, with a warning naming it") {
    auto root = report_with_records();
    root["ncu_coverage"].as_object()["measured"] = 1.7;
    const auto model = load_with(temp, root);
    REQUIRE(model.has_value());
    CHECK_FALSE(model->ncu_coverage.has_value());
    CHECK(any_warning(*model, "report.json ncu_coverage: measured = 1.7 cannot be true"));
  }
  SECTION("an MFU of 2.5: withheld, with a warning naming the stage") {
    auto root = report_with_records();
    root["mfu_workload"].as_object()["stages"].as_array()[0].as_object()["mfu"] = 2.5;
    const auto model = load_with(temp, root);
    REQUIRE(model.has_value());
    REQUIRE(model->mfu_workload.has_value());
    CHECK_FALSE(model->mfu_workload->stages[0].mfu.has_value());
    CHECK(model->mfu_workload->stages[0].mfu_ncu == 1.007230e-4);
    CHECK(any_warning(*model, "mfu of 'decode' = 2.5 cannot be true"));
  }
}
