// One selection: the analysis reports the kernels the select stage chose (MAIN/nsys/selection.json), the kernels
// ncu profiled, instead of selecting again; the selection's JSON reads back to the selection it was written from;
// the stage run.on_empty_gate = discover chose is in run.json's capture record, and `analyze MAIN` selects from it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "analysis/kernel_selection_json.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/run_layout.hpp"
#include "test_support.hpp"
#include "rundir/run_records.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

// A run directory holding the recorded H100 decode run's nsys tables (ns1), as the nsys stage names them.
fs::path recorded_tables_run(const TempDir& temp) {
  const fs::path main = temp / "run";
  fs::create_directories(main / "nsys");
  for (const auto& report : nsys_stats_report_names()) {
    const fs::path fixture = data_path("h100-nsight-2025.3/nsys/ns1_st_" + report + ".csv");
    if (fs::exists(fixture)) fs::copy_file(fixture, nsys_stats_report_path(main / "nsys" / "summary", report));
  }
  return main;
}

KernelSelection select(const fs::path& main, std::size_t n) {
  auto stats = load_nsys_stats(main / "nsys" / "summary");
  REQUIRE(stats.has_value());
  TopKernelRequest request;
  request.stage = "decode";
  request.n = n;
  auto selection = select_top_kernels(stats.value(), request);
  REQUIRE(selection.has_value());
  return selection.value();
}

}  // namespace

TEST_CASE("a kernel selection reads back from its JSON as the selection it was written from", "[selection]") {
  TempDir temp;
  const fs::path main = recorded_tables_run(temp);
  for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{5}}) {
    const KernelSelection written = select(main, n);
    const auto read = detail::kernel_selection_from_json(detail::kernel_selection_json(written), "selection");
    REQUIRE(read.has_value());
    CHECK(read.value() == written);
  }
  boost::json::object broken = detail::kernel_selection_json(select(main, 2));
  broken.erase("kernel_regex");
  const auto refused = detail::kernel_selection_from_json(broken, "nsys/selection.json");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::parse_error);
  CHECK_THAT(refused.error().message, Catch::Contains("kernel_regex"));
}

TEST_CASE("the analysis reports the select stage's kernels, not a selection of its own", "[selection]") {
  TempDir temp;
  const fs::path main = recorded_tables_run(temp);
  AnalysisOptions options;
  options.selection_stage = "decode";
  options.top_n = 5;

  // No selection.json (an old run, or ncu off): the analysis selects, top 5 as asked.
  auto selected_again = analyze_run_directory(main, options);
  REQUIRE(selected_again.has_value());
  REQUIRE(selected_again->top_kernel_selection);
  CHECK(selected_again->top_kernel_selection->kernels.size() == 5);
  CHECK(selected_again->sources.count("top_kernel_selection") == 0);

  // The select stage chose 2 (another configuration, or discovery's stage): those are what ncu profiled.
  const KernelSelection recorded = select(main, 2);
  write_file(main / RunLayout::kernel_selection(), boost::json::serialize(detail::kernel_selection_json(recorded)));
  auto report = analyze_run_directory(main, options);
  REQUIRE(report.has_value());
  REQUIRE(report->top_kernel_selection);
  CHECK(report->top_kernel_selection.value() == recorded);
  CHECK(report->sources.at("top_kernel_selection") == (main / RunLayout::kernel_selection()).string());

  // Asked for another stage (analyze --stage prefill): selected again, and the report says ncu's were decode's.
  options.selection_stage = "prefill";
  auto other = analyze_run_directory(main, options);
  REQUIRE(other.has_value());
  REQUIRE(other->top_kernel_selection);
  CHECK(other->top_kernel_selection->stage == "prefill");
  CHECK(std::any_of(other->warnings.begin(), other->warnings.end(), [](const std::string& warning) {
    return warning.find("the kernels ncu profiled were selected from stage decode") != std::string::npos;
  }));

  // A selection.json that does not read is said, not silently replaced.
  write_file(main / RunLayout::kernel_selection(), "{\"stage\": \"decode\"}");
  options.selection_stage = "decode";
  auto unreadable = analyze_run_directory(main, options);
  REQUIRE(unreadable.has_value());
  CHECK(std::any_of(unreadable->warnings.begin(), unreadable->warnings.end(), [](const std::string& warning) {
    return warning.find("which may not be the kernels ncu profiled") != std::string::npos;
  }));
}

TEST_CASE("the stage discovery chose is in run.json's capture record and analyze MAIN selects from it",
          "[selection]") {
  TempDir temp;
  const fs::path main = temp / "run";
  fs::create_directories(main);
  DeepProfileConfig config;  // run.stage = decode, the gate that never opened
  write_file(main / RunLayout::resolved_config(), config_to_toml(config));
  RunManifest manifest;
  manifest.run_id = "run";
  CaptureRecord capture;
  capture.gate = CaptureGateKind::nvtx;
  capture.range = "decode";
  capture.discovered_stage = "decode_batch";
  manifest.capture = capture;
  write_file(main / RunLayout::manifest(), manifest_to_json(manifest));
  const auto reread = read_manifest(main);
  REQUIRE(reread.has_value());
  REQUIRE(reread->capture);
  CHECK(reread->capture->discovered_stage == std::optional<std::string>("decode_batch"));
  const auto options = analysis_options_of_run(main);
  REQUIRE(options.has_value());
  CHECK(options->selection_stage == "decode_batch");
  CHECK_FALSE(options->capture_gated_on_stage);  // the gate did not open: the timeline is the ungated discovery
}

TEST_CASE("selection.json files recorded before the coverage rule read as the top-N selections they were",
          "[selection]") {
  // The H100 1b sample run (a top-10 selection, no "rule" key yet) and a graph decode run (with one).
  const auto sample = detail::read_kernel_selection(example_path("sample-run-h100/nsys/selection.json"));
  INFO((sample ? std::string() : sample.error().describe()));
  REQUIRE(sample.has_value());
  CHECK(sample->stage == "decode");
  CHECK(sample->kernels.size() == 10);
  CHECK_FALSE(sample->coverage_target.has_value());
  CHECK(sample->kernel_regex.rfind("regex:", 0) == 0);
  const auto graphs = detail::read_kernel_selection(example_path("graphs-h100/cpp-graphs-auto/nsys/selection.json"));
  REQUIRE(graphs.has_value());
  CHECK(graphs->kernels.size() == 5);
}
