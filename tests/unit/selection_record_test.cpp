// One selection: the analysis reports the kernels the select stage chose (MAIN/nsys/selection.json), the kernels
// ncu profiled, instead of selecting again; the selection's JSON reads back to the selection it was written from;
// the stage run.on_empty_gate = discover chose is in run.json's capture record, and `analyze MAIN` selects from it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <set>

#include "json_key_paths.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/run_layout.hpp"
#include "rundir/kernel_selection_json.hpp"
#include "rundir/run_records.hpp"
#include "test_support.hpp"

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

// A coverage selection of the stage the NCCL kernels share with computation (kernel_coverage_test's synthetic
// stage, 1000 ns of decode with 360 in two collectives): every part of the record is filled, the rule's coverage
// variant and the collectives' figures included.
KernelSelection coverage_selection_with_collectives() {
  auto row = [](const std::string& name, std::int64_t time_ns, std::int64_t instances) {
    NvtxKernelRow kernel;
    kernel.range = NvtxRangeName{"", "decode"};
    kernel.kernel_name = name;
    kernel.kernel_instances = instances;
    kernel.time.total_time_ns = time_ns;
    kernel.time.count = instances;
    return kernel;
  };
  NsysStats stats;
  stats.range_kernels = std::vector<NvtxKernelRow>{
      row("gemm_a", 500, 10), row("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096>)", 300, 10),
      row("layer_norm", 100, 20), row("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", 60, 5),
      row("copy", 40, 8)};
  TopKernelRequest request;
  request.stage = "decode";
  request.coverage = 0.9;
  auto selection = select_top_kernels(stats, request);
  REQUIRE(selection.has_value());
  REQUIRE(selection->collectives_left_out.size() == 2);  // the record's every part is filled
  REQUIRE(selection->coverage_target.has_value());
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

TEST_CASE("the stage discovery chose is in run.json's capture record and analyze MAIN selects from it", "[selection]") {
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

TEST_CASE("a report.json written before the collectives' kernels were recorded keeps its collectives by name",
          "[selection]") {
  // examples/tp-run-h200x2/analysis/report.json: collectives_left_out {count 1, total_time_ns 510955871,
  // share 0.6730894407794136, names [the NCCL all-reduce]} and no "kernels" list.
  const auto model = load_run_report(example_path("tp-run-h200x2"));
  INFO((model ? std::string() : model.error().describe()));
  REQUIRE(model.has_value());
  REQUIRE(model->top_kernel_selection.has_value());
  const auto& selection = *model->top_kernel_selection;
  CHECK(selection.n == 5);
  REQUIRE(selection.collective_count() == 1);
  CHECK(selection.collectives_left_out[0].name ==
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)");
  CHECK(selection.collective_time_ns == 510955871);
  CHECK(selection.collective_share == Approx(0.6730894407794136));
  CHECK_THAT(describe_kernel_selection(selection, model->top_kernel_selection_notes),
             Catch::Contains("1 collective kernel (67% of the stage's kernel time) left out"));
}

TEST_CASE("a selection round-trips through nsys/selection.json, the coverage rule and the collectives included",
          "[selection]") {
  TempDir temp;
  const KernelSelection written = coverage_selection_with_collectives();
  write_file(temp / "selection.json", detail::kernel_selection_file(written));
  const auto read = detail::read_kernel_selection(temp / "selection.json");
  INFO((read ? std::string() : read.error().describe()));
  REQUIRE(read.has_value());
  CHECK(read.value() == written);
  // The layout scripts read: the rule's coverage variant, the collectives' count and names beside their kernels.
  const auto json = boost::json::parse(read_file(temp / "selection.json")).as_object();
  CHECK(json.at("schema").as_string() == "llmprof.kernel_selection/1");
  CHECK(json.at("n").as_int64() == 3);
  CHECK(json.at("rule").as_object().at("kind").as_string() == "coverage");
  CHECK(json.at("rule").as_object().at("target").as_double() == 0.9);
  CHECK_FALSE(json.at("rule").as_object().contains("n"));
  CHECK(json.at("collectives_left_out").as_object().at("count").as_int64() == 2);
  CHECK(json.at("collectives_left_out").as_object().at("names").as_array().size() == 2);
  const auto top_n = detail::kernel_selection_json(select(recorded_tables_run(temp), 4));
  CHECK(top_n.at("rule").as_object() == boost::json::object{{"kind", "top_n"}, {"n", 4}});
}

TEST_CASE("a selection round-trips through report.json's top_kernel_selection into the report model", "[selection]") {
  TempDir temp;
  const fs::path main = recorded_tables_run(temp);
  const KernelSelection recorded = coverage_selection_with_collectives();
  write_file(main / RunLayout::kernel_selection(), detail::kernel_selection_file(recorded));
  AnalysisOptions options;
  options.selection_stage = "decode";
  auto analysis = analyze_run_directory(main, options);
  REQUIRE(analysis.has_value());
  REQUIRE(analysis->top_kernel_selection == recorded);  // the select stage's record, as the analysis reports it
  write_file(main / RunLayout::analysis_report(), analysis_report_json(analysis.value()));
  const auto model = load_run_report(main);
  INFO((model ? std::string() : model.error().describe()));
  REQUIRE(model.has_value());
  REQUIRE(model->top_kernel_selection.has_value());
  CHECK(model->top_kernel_selection.value() == recorded);
  CHECK_FALSE(model->top_kernel_selection_notes.figures_withheld);
  // selection_expected.py: synthetic target=0.9: selected=3 coverage=0.640000 collective_share=0.360000
  CHECK_THAT(describe_kernel_selection(*model->top_kernel_selection, model->top_kernel_selection_notes),
             Catch::Contains("3 of stage decode (target 90%), covering 64% of its kernel time") &&
                 Catch::Contains("2 collective kernels (36% of the stage's kernel time) left out"));
}

TEST_CASE("a selection.json with a value outside its bound or of the wrong type is refused, naming file and key",
          "[selection]") {
  TempDir temp;
  const fs::path file = temp / "selection.json";
  const auto refused = [&](boost::json::object document) {
    write_file(file, boost::json::serialize(document));
    auto read = detail::read_kernel_selection(file);
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().code == ErrorCode::parse_error);
    CHECK_THAT(read.error().message, Catch::Contains(file.string()));
    return read.error().message;
  };
  const auto good = detail::kernel_selection_json(coverage_selection_with_collectives());

  auto coverage = good;
  coverage["coverage"] = 1.7;
  CHECK_THAT(refused(coverage), Catch::Contains("coverage = 1.7") && Catch::Contains("a fraction lies in [0, 1]"));
  auto count = good;
  count["stage_kernel_count"] = "five";
  CHECK_THAT(refused(count), Catch::Contains("the field stage_kernel_count is missing or of the wrong type"));
  auto share = good;
  share["kernels"].as_array()[1].as_object()["share"] = -0.2;
  CHECK_THAT(refused(share), Catch::Contains("share of 'layer_norm' = -0.2"));
  auto collective_share = good;
  collective_share["collectives_left_out"].as_object()["share"] = 3.6;
  CHECK_THAT(refused(collective_share), Catch::Contains("collectives_left_out.share = 3.6"));
  auto rule = good;
  rule["rule"].as_object().erase("target");
  CHECK_THAT(refused(rule), Catch::Contains("the field rule.target is missing"));
  auto kind = good;
  kind["rule"].as_object()["kind"] = "bottom_n";
  CHECK_THAT(refused(kind), Catch::Contains("the field rule.kind"));
  auto name = good;
  name["kernels"].as_array()[0].as_object().erase("name");
  CHECK_THAT(refused(name), Catch::Contains("the field kernels[0].name"));
  auto n = good;
  n["n"] = 7;
  CHECK_THAT(refused(n), Catch::Contains("n = 7 does not count the 3 kernels listed"));
}

TEST_CASE("a report.json selection figure outside its bound is withheld with a warning, and not stated",
          "[selection]") {
  TempDir temp;
  const fs::path main = recorded_tables_run(temp);
  AnalysisOptions options;
  options.selection_stage = "decode";
  options.top_n = 5;
  auto analysis = analyze_run_directory(main, options);
  REQUIRE(analysis.has_value());
  auto report = boost::json::parse(analysis_report_json(analysis.value())).as_object();
  report["top_kernel_selection"].as_object()["coverage"] = 1.7;
  write_file(main / RunLayout::analysis_report(), boost::json::serialize(report));
  const auto model = load_run_report(main);
  REQUIRE(model.has_value());
  REQUIRE(model->top_kernel_selection.has_value());
  CHECK(model->top_kernel_selection_notes.figures_withheld);
  CHECK(std::any_of(model->warnings.begin(), model->warnings.end(), [](const std::string& warning) {
    return warning.find("report.json top_kernel_selection: coverage = 1.7 cannot be true") != std::string::npos &&
           warning.find("analysis/report.json top_kernel_selection") != std::string::npos;
  }));
  const std::string sentence =
      describe_kernel_selection(*model->top_kernel_selection, model->top_kernel_selection_notes);
  CHECK_THAT(sentence,
             Catch::Contains("5 of stage decode") && Catch::Contains("withheld") && !Catch::Contains("covering"));

  // A count that is no number is no figure to withhold: the file does not read, naming the key.
  report["top_kernel_selection"].as_object()["stage_kernel_count"] = "five";
  write_file(main / RunLayout::analysis_report(), boost::json::serialize(report));
  const auto broken = load_run_report(main);
  REQUIRE_FALSE(broken.has_value());
  CHECK_THAT(broken.error().message, Catch::Contains("top_kernel_selection.stage_kernel_count"));
}

TEST_CASE("every key the selection's tables write is documented in docs/report-json.md", "[selection]") {
  TempDir temp;
  std::set<std::string> keys;
  collect_keys(detail::kernel_selection_json(coverage_selection_with_collectives()), "", keys);
  collect_keys(detail::kernel_selection_json(select(recorded_tables_run(temp), 3)), "", keys);  // rule.n
  const std::string docs = read_file(fs::path(LLMPROF_SOURCE_DIR) / "docs" / "report-json.md");
  for (const auto& key : keys) {
    INFO(key);
    CHECK(docs.find("`" + key + "`") != std::string::npos);
  }
  CHECK(keys.size() == 40);
}
