// report.json's bare_run and nvtx_ranges[]: each one record (ReportBareRun, ReportRangeTiming) that the analysis
// fills and one field table writes and reads back. Expected figures: tests/tools/nvtx_ranges_expected.py (Python csv
// module, independent of libllmprof) over the nvtx_sum tables, and stage1/metrics.json read here with Boost.JSON.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <set>
#include <string>

#include "llmprof/analysis.hpp"
#include "llmprof/report.hpp"
#include "oracle.hpp"
#include "rundir/report_model_json.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::oracle_text;
using llmprof::testing::read_file;
using llmprof::testing::read_oracle_line;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

AnalysisReport analyze_main(const std::filesystem::path& main) {
  auto report = analyze_run_directory(main, {});
  if (!report) FAIL(report.error().describe());
  return std::move(report).value();
}

// The analysis's ranges against the oracle's line for each: order, names and every nvtx_sum figure.
void check_ranges_against_oracle(const AnalysisReport& report, const std::string& label) {
  const auto kept = static_cast<std::size_t>(oracle_figure("nvtx_ranges", label + ":", "kept"));
  REQUIRE(report.nvtx_ranges.size() == kept);
  for (std::size_t i = 0; i < kept; ++i) {
    const auto& range = report.nvtx_ranges[i];
    const std::string line = label + " range " + range.domain + ":" + range.name + " ";
    INFO(line);
    CHECK(oracle_figure("nvtx_ranges", line, "order") == static_cast<double>(i));
    CHECK(range.name == oracle_text("nvtx_ranges", line, "name"));
    CHECK(range.domain == (oracle_text("nvtx_ranges", line, "domain") == "-" ? ""
                                                                              : oracle_text("nvtx_ranges", line, "domain")));
    CHECK(range.style == oracle_text("nvtx_ranges", line, "style"));
    CHECK(range.instances == static_cast<std::int64_t>(oracle_figure("nvtx_ranges", line, "instances")));
    CHECK(range.total_ns == static_cast<std::int64_t>(oracle_figure("nvtx_ranges", line, "total_ns")));
    CHECK(range.mean_ns.value() == Approx(oracle_figure("nvtx_ranges", line, "mean_ns")));
    CHECK(range.p50_ns.value() == Approx(oracle_figure("nvtx_ranges", line, "p50_ns")));
    CHECK(range.min_ns == static_cast<std::int64_t>(oracle_figure("nvtx_ranges", line, "min_ns")));
    CHECK(range.max_ns == static_cast<std::int64_t>(oracle_figure("nvtx_ranges", line, "max_ns")));
    CHECK(range.stddev_ns.value() == Approx(oracle_figure("nvtx_ranges", line, "stddev_ns")));
    CHECK_FALSE(range.p99_ns.has_value());  // no SQLite export beside these tables
    CHECK(range.source == "nsys nvtx_sum");
  }
}

// MAIN holding only the contradicting nvtx_sum table.
void make_contradictions_main(const std::filesystem::path& main) {
  write_file(main / "nsys" / "summary_nvtx_sum.csv",
             read_file(data_path("analysis/nvtx-contradictions/summary_nvtx_sum.csv")));
}

// The section of docs/report-json.md that starts with `heading`.
std::string docs_section(const std::string& heading) {
  const std::string docs = read_file(std::filesystem::path(LLMPROF_SOURCE_DIR) / "docs" / "report-json.md");
  const auto start = docs.find(heading);
  if (start == std::string::npos) FAIL("docs/report-json.md has no section " << heading);
  return docs.substr(start, docs.find("\n## ", start + 1) - start);
}

}  // namespace

TEST_CASE("nvtx_ranges: the analysis keeps the nvtx_sum rows of a real H100 run, by total time, figures as printed") {
  check_ranges_against_oracle(analyze_main(data_path("h100-1b-decode")), "h100-1b-decode");
}

TEST_CASE("nvtx_ranges: a row whose statistics contradict each other is left out with a warning saying why") {
  TempDir dir;
  make_contradictions_main(dir.path());
  const auto report = analyze_main(dir.path());
  check_ranges_against_oracle(report, "contradictions");
  // nvtx_ranges_expected.py: "contradictions left out :never_ran: no instances", ...
  const auto left_out = static_cast<std::size_t>(oracle_figure("nvtx_ranges", "contradictions:", "left_out"));
  std::size_t warned = 0;
  for (const auto& warning : report.warnings) {
    const auto at = warning.find("nvtx_sum row for range '");
    if (at != 0) continue;
    ++warned;
    const auto name_end = warning.find("' left out: ");
    REQUIRE(name_end != std::string::npos);
    std::string range = warning.substr(24, name_end - 24);
    if (range.find(':') == std::string::npos) range = ":" + range;  // the default domain, as nvtx_sum spells it
    INFO(warning);
    CHECK(warning.substr(name_end + 12) == read_oracle_line("nvtx_ranges", "contradictions left out " + range + ": "));
  }
  CHECK(warned == left_out);
}

TEST_CASE("report.json's bare_run and nvtx_ranges are the analysis's records, read back through one table") {
  TempDir dir;
  const auto report = analyze_main(data_path("h100-1b-decode"));
  REQUIRE(report.workload.has_value());
  REQUIRE(write_analysis(report, dir / "analysis").has_value());
  const auto json = boost::json::parse(read_file(dir / "analysis" / "report.json")).as_object();

  // bare_run holds stage1/metrics.json's figures as the workload wrote them, read here without the library.
  const auto metrics = boost::json::parse(read_file(data_path("h100-1b-decode/stage1/metrics.json"))).as_object();
  const auto& bare_run = json.at("bare_run").as_object();
  CHECK(bare_run.size() == 13);
  for (const auto& [key, value] : bare_run) {
    INFO(std::string(key));
    REQUIRE(metrics.contains(key));
    if (value.is_double() || metrics.at(key).is_double())
      CHECK(value.to_number<double>() == Approx(metrics.at(key).to_number<double>()).epsilon(1e-12));
    else
      CHECK(value == metrics.at(key));
  }

  const auto model = load_run_report(dir.path());
  if (!model) FAIL(model.error().describe());
  REQUIRE(model->bare_run.has_value());
  CHECK(detail::report_json(*model->bare_run) == bare_run);
  CHECK(model->bare_run->tokens_per_s == report.workload->tokens_per_s);
  CHECK(model->bare_run->new_tokens == report.workload->new_tokens);
  const auto& ranges = json.at("nvtx_ranges").as_array();
  REQUIRE(model->nvtx_ranges.size() == report.nvtx_ranges.size());
  REQUIRE(ranges.size() == report.nvtx_ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    CHECK(detail::report_json(report.nvtx_ranges[i]) == ranges[i].as_object());
    CHECK(detail::report_json(model->nvtx_ranges[i]) == ranges[i].as_object());
  }
}

TEST_CASE("a report.json whose bare_run lacks a key, or holds null, is an error naming the key, never a 0") {
  TempDir dir;
  REQUIRE(write_analysis(analyze_main(data_path("h100-1b-decode")), dir / "analysis").has_value());
  const auto written = boost::json::parse(read_file(dir / "analysis" / "report.json")).as_object();
  for (const std::string key : {"tokens_per_s", "batch", "dtype"}) {
    for (const bool null : {false, true}) {
      INFO(key << (null ? " null" : " absent"));
      auto json = written;
      auto& bare_run = json.at("bare_run").as_object();
      if (null)
        bare_run[key] = nullptr;
      else
        bare_run.erase(key);
      write_file(dir / "analysis" / "report.json", boost::json::serialize(json));
      const auto model = load_run_report(dir.path());
      REQUIRE_FALSE(model.has_value());
      CHECK(model.error().code == ErrorCode::parse_error);
      CHECK_THAT(model.error().message, Catch::Contains("'bare_run." + key + "' is missing"));
    }
  }
  // A report.json without a bare run (no stage1/metrics.json) still reads: bare_run null is no bare run.
  auto json = written;
  json["bare_run"] = nullptr;
  write_file(dir / "analysis" / "report.json", boost::json::serialize(json));
  const auto model = load_run_report(dir.path());
  if (!model) FAIL(model.error().describe());
  CHECK_FALSE(model->bare_run.has_value());
}

TEST_CASE("every key of report.json's bare_run and nvtx_ranges is documented in docs/report-json.md") {
  const std::string section = docs_section("## `bare_run` and `nvtx_ranges[]`");
  std::set<std::string> keys;
  for (const auto& entry : detail::report_json(ReportBareRun{})) keys.insert("bare_run." + std::string(entry.key()));
  for (const auto& entry : detail::report_json(ReportRangeTiming{}))
    keys.insert("nvtx_ranges[]." + std::string(entry.key()));
  for (const auto& key : keys) {
    INFO(key);
    CHECK(section.find("`" + key + "`") != std::string::npos);
  }
  CHECK(keys.size() == 25);  // 13 bare-run figures, 12 per range
}
