// The analysis model on the real H100 fixtures and the synthetic nesting fixture.
// Expected figures: tests/tools/analysis_expected.py (Python csv module, independent of
// libllmprof), run once with `python3 tests/tools/analysis_expected.py`; its output lines are
// quoted above the assertions that use them.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "llmprof/analysis.hpp"
#include "llmprof/csv.hpp"
#include "llmprof/report.hpp"
#include "oracle.hpp"
#include "rundir/report_model_json.hpp"
#include "rundir/report_ncu_records.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

const std::string h100 = "h100-nsight-2025.3/";

// Builds MAIN with the nsys tables of `nsys_prefix` ("h100-nsight-2025.3/nsys/ns1_st"), the ncu CSV
// `ncu_file` and the workload metrics `metrics_file`, each optional ("" = absent).
void make_main(const std::filesystem::path& main, const std::string& nsys_prefix, const std::string& ncu_file,
               const std::string& metrics_file = "") {
  std::filesystem::create_directories(main);
  if (!nsys_prefix.empty()) {
    std::filesystem::create_directories(main / "nsys");
    for (const auto& report : nsys_stats_report_names()) {
      const auto source = nsys_stats_report_path(data_path(nsys_prefix), report);
      if (std::filesystem::exists(source)) {
        std::filesystem::copy_file(source, nsys_stats_report_path(main / "nsys" / "summary", report));
      }
    }
  }
  if (!ncu_file.empty()) write_file(main / "ncu" / "raw.csv", read_file(data_path(ncu_file)));
  if (!metrics_file.empty()) write_file(main / "stage1" / "metrics.json", read_file(data_path(metrics_file)));
}

AnalysisReport analyze_main(const std::filesystem::path& main, const AnalysisOptions& options = {}) {
  auto report = analyze_run_directory(main, options);
  if (!report) FAIL(report.error().describe());
  return std::move(report).value();
}

LaunchRoofline single_launch(const std::string& file) {
  auto report = parse_ncu_csv(data_path(h100 + "ncu/" + file));
  REQUIRE(report.has_value());
  REQUIRE(report->launches.size() == 1);
  return analyze_launch(report->launches.front());
}

const StageAnalysis& stage_named(const AnalysisReport& report, const std::string& name) {
  auto it = std::find_if(report.stages.begin(), report.stages.end(), [&](const auto& s) { return s.name == name; });
  if (it == report.stages.end()) FAIL("no stage " << name);
  return *it;
}

const KernelAnalysis& kernel_starting(const AnalysisReport& report, const std::string& prefix) {
  auto it = std::find_if(report.kernels.begin(), report.kernels.end(),
                         [&](const auto& k) { return k.name.rfind(prefix, 0) == 0; });
  if (it == report.kernels.end()) FAIL("no kernel " << prefix);
  return *it;
}

}  // namespace

TEST_CASE("GEMM known answer: exactly 2*4096^3 bf16 FLOP in 208.192 us and compute-bound") {
  // analysis_expected.py: gemm: flop=137438953472 by={'bf16': 137438953472.0} duration_ns=208192.000
  // achieved=6.601548e+14 peak_bf16=7.317958e+14 pct_compute=90.2103 dram_bytes=1.786335e+08
  // dram_peak=3.351295e+12 pct_dram=25.6027 ai=769.3908 bound=compute
  const auto launch = single_launch("gemm_raw.csv");
  REQUIRE(launch.flop.has_value());
  CHECK(*launch.flop == 137438953472.0);  // exact: no double counting of the hgmma/sparsity splits
  CHECK(launch.flop_by_precision == std::map<std::string, double>{{"bf16", 137438953472.0}});
  CHECK(launch.dominant_precision == "bf16");
  CHECK(*launch.duration_ns == Approx(208192.0));
  CHECK(*launch.achieved_flop_per_s == Approx(6.601548e14).epsilon(1e-6));
  CHECK(launch.peak_flop_per_s.at("bf16") == Approx(7.317958e14).epsilon(1e-6));
  CHECK(*launch.pct_peak_compute == Approx(90.2103).margin(1e-3));
  CHECK(*launch.dram_bytes == Approx(1.786335e8).epsilon(1e-6));
  CHECK(*launch.peak_dram_bytes_per_s == Approx(3.351295e12).epsilon(1e-6));
  CHECK(*launch.pct_peak_dram == Approx(25.6027).margin(1e-3));
  CHECK(*launch.arithmetic_intensity == Approx(769.3908).margin(1e-3));
  CHECK(launch.bound == KernelBound::compute);
  CHECK(launch.device_name == "NVIDIA H100 80GB HBM3");
  CHECK(launch.missing.empty());
}

TEST_CASE("nc1 launches: tensor and CUDA-core FLOP and latency-bound decode kernels") {
  // analysis_expected.py: launch 2: nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_ flop=5.035622e+07
  // by={'fp16': 50331648, 'fp32': 24576} pct_compute=0.8572 pct_dram=25.4022 bound=latency
  // launch 3: void pytorch_flash::flash_fwd_kernel<Fla flop=2.745139e+08
  // by={'fp16': 268435456, 'fp32': 6078464} pct_compute=4.4201 pct_dram=0.2857 bound=latency
  auto report = parse_ncu_csv(data_path(h100 + "ncu/nc1_raw.csv"));
  REQUIRE(report.has_value());
  REQUIRE(report->launches.size() == 40);
  const auto gemv = analyze_launch(report->launches[2]);
  CHECK(gemv.flop_by_precision.at("fp16") == 50331648.0);
  CHECK(gemv.flop_by_precision.at("fp32") == Approx(24576).margin(0.5));
  CHECK(*gemv.flop == Approx(5.035622e7).epsilon(1e-6));
  CHECK(*gemv.pct_peak_compute == Approx(0.8572).margin(1e-3));
  CHECK(*gemv.pct_peak_dram == Approx(25.4022).margin(1e-3));
  CHECK(gemv.bound == KernelBound::latency);
  const auto attention = analyze_launch(report->launches[3]);
  CHECK(attention.flop_by_precision.at("fp16") == 268435456.0);
  CHECK(attention.flop_by_precision.at("fp32") == Approx(6078464).margin(1));
  CHECK(*attention.pct_peak_compute == Approx(4.4201).margin(1e-3));
  CHECK(*attention.pct_peak_dram == Approx(0.2857).margin(1e-3));
  CHECK(attention.nvtx_stack == std::vector<NvtxRangeName>{{"", "decode"}});
  RooflineThresholds strict;
  strict.latency_percent = 0.1;  // with a tiny threshold the same launch is compute-bound
  CHECK(analyze_launch(report->launches[3], strict).bound == KernelBound::compute);
}

TEST_CASE("nc1_raw.csv and nc1_raw_base.csv give identical analyses") {
  TempDir dir;
  make_main(dir / "printed", "", h100 + "ncu/nc1_raw.csv");
  make_main(dir / "base", "", h100 + "ncu/nc1_raw_base.csv");
  const auto printed = analyze_main(dir / "printed");
  const auto base = analyze_main(dir / "base");
  REQUIRE(printed.launches.size() == 40);
  REQUIRE(base.launches.size() == 40);
  // Both pages print with 6 decimals, so their inputs agree to about 6 significant digits, except
  // the tiny per-cycle rates of CUDA-core instructions ("0.000277 inst/cycle" vs the base page's
  // own rounding), which keep only 3-4: FLOP and percent of peak compute agree within 1%.
  auto same = [](const std::optional<double>& a, const std::optional<double>& b, double tolerance = 1e-4) {
    REQUIRE(a.has_value() == b.has_value());
    if (a) CHECK(*a == Approx(*b).epsilon(tolerance).margin(1e-9));
  };
  for (std::size_t i = 0; i < 40; ++i) {
    const auto& a = printed.launches[i];
    const auto& b = base.launches[i];
    INFO("launch " << i << " " << a.kernel_name);
    CHECK(a.kernel_name == b.kernel_name);
    same(a.duration_ns, b.duration_ns);
    same(a.flop, b.flop, 1e-2);
    same(a.dram_bytes, b.dram_bytes);
    same(a.pct_peak_compute, b.pct_peak_compute, 1e-2);
    CHECK(a.flop_by_precision.count("fp16") == b.flop_by_precision.count("fp16"));
    if (a.flop_by_precision.count("fp16")) CHECK(a.flop_by_precision.at("fp16") == b.flop_by_precision.at("fp16"));
    same(a.pct_peak_dram, b.pct_peak_dram);
    same(a.peak_dram_bytes_per_s, b.peak_dram_bytes_per_s);
    CHECK(a.peak_flop_per_s.size() == b.peak_flop_per_s.size());
    CHECK(a.bound == b.bound);
    CHECK(a.dominant_precision == b.dominant_precision);
  }
  REQUIRE(printed.kernels.size() == base.kernels.size());
  for (std::size_t i = 0; i < printed.kernels.size(); ++i) {
    CHECK(printed.kernels[i].name == base.kernels[i].name);
    CHECK(printed.kernels[i].total_time_ns == base.kernels[i].total_time_ns);
    same(printed.kernels[i].flop_per_launch, base.kernels[i].flop_per_launch, 1e-2);
    CHECK(printed.kernels[i].bound == base.kernels[i].bound);
  }
  CHECK(printed.stages.size() == base.stages.size());
  same(printed.stages.at(0).flop, base.stages.at(0).flop, 1e-2);
}

TEST_CASE("ns1 with nc1 and workload metrics: stages and kernels and MFU") {
  TempDir dir;
  make_main(dir.path(), h100 + "nsys/ns1_st", h100 + "ncu/nc1_raw.csv", "analysis/workload_metrics_decode.json");
  const auto report = analyze_main(dir.path());

  // analysis_expected.py, ns1 stages (busy = kernel time / max(wall, projection)):
  //   stage :prefill: wall_ns=1280269408 proj_ns=1226511862 kernel_ns=305763 instances=38 busy=0.000239
  //   stage :decode: wall_ns=177371307 proj_ns=156817883 kernel_ns=1435206 instances=345 busy=0.008092
  REQUIRE(report.stages.size() == 2);
  const auto& decode = stage_named(report, "decode");
  CHECK(decode.domain.empty());
  CHECK_FALSE(decode.parent.has_value());
  CHECK(decode.wall_ns == 177371307);
  CHECK(decode.gpu_projection_ns == 156817883);
  CHECK(decode.kernel_time_ns == 1435206);
  CHECK(decode.kernel_instances == 345);
  CHECK(*decode.gpu_busy_fraction == Approx(0.008092).margin(1e-6));
  // The verdict, then why MFU (profiled) and MFU (workload) differ more than 2x (stage_limits_test.cpp checks
  // the figures of that sentence against the Python oracle).
  CHECK(decode.verdict ==
        "host/launch-bound: GPU busy 0.81% of the stage; kernel tuning will not help, cut launch overhead "
        "(CUDA graphs, fusion, larger batch); " +
            decode.mfu_gap_reason);
  CHECK(decode.mfu_gap_reason.rfind("MFU (profiled) ", 0) == 0);
  const auto& prefill = stage_named(report, "prefill");
  CHECK(prefill.wall_ns == 1280269408);
  CHECK(prefill.kernel_instances == 38);
  CHECK(*prefill.gpu_busy_fraction == Approx(0.000239).margin(1e-6));
  CHECK(prefill.verdict.rfind("host/launch-bound: GPU busy < 0.1% of the stage", 0) == 0);  // 0.0239%
  // The kernel-launch rate (a figure added as one record field, one field-table row and its computation): the
  // oracle's instances over the wall time the rates divide by.
  REQUIRE(decode.kernel_launches_per_s);
  CHECK(*decode.kernel_launches_per_s == Approx(345 / 0.177371307));  // 1,945 launches/s
  REQUIRE(prefill.kernel_launches_per_s);
  CHECK(*prefill.kernel_launches_per_s == Approx(38 / 1.280269408));
  REQUIRE(write_analysis(report, dir / "analysis").has_value());
  const auto json = boost::json::parse(read_file(dir / "analysis" / "report.json")).as_object();
  for (const auto& stage : json.at("stages").as_array()) {
    if (stage.at("name").as_string() != "decode") continue;
    CHECK(stage.at("kernel_launches_per_s").as_double() == Approx(345 / 0.177371307));
  }
  const auto csv = read_file(dir / "analysis" / "stages.csv");
  CHECK(csv.substr(0, csv.find('\n')).find(",kernel_launches_per_s,") != std::string::npos);
  CHECK_FALSE(prefill.flop.has_value());  // nc1 profiled decode only
  CHECK(std::find(report.skipped.begin(), report.skipped.end(),
                  "stage 'prefill': FLOP and MFU need ncu launches of its kernels; none was profiled in this stage") !=
        report.skipped.end());
  CHECK(report.stages.front().name == "prefill");  // same level: longest first

  // analysis_expected.py: nc1: max_peak_fp16=8.569867e+14 max_dram_peak=3.351082e+12
  // decode: flop=1.531038e+10 achieved=8.631825e+10 mfu=1.007230e-04 while_busy=1.066772e+13
  // flop_coverage=0.948761 (nc1 has no launch of nvjet_sm90_hsh_64x8_64x16_2x1_v_bz_bias_TNT)
  // decode workload: model_flop_per_s=2.999034e+10 mfu_workload=3.499511e-05
  CHECK(report.device.name == "NVIDIA H100 80GB HBM3");
  CHECK(report.device.peak_flop_per_s.at("fp16") == Approx(8.569867e14).epsilon(1e-6));
  CHECK(*report.device.peak_dram_bytes_per_s == Approx(3.351082e12).epsilon(1e-6));
  CHECK(report.device.sources.at("fp16").rfind("ncu sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off", 0) == 0);
  for (const auto& [key, source] : report.device.sources) CHECK(source.rfind("ncu ", 0) == 0);
  CHECK(report.device.sources.at("fp8").rfind("ncu sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained", 0) ==
        0);
  REQUIRE(report.datasheet.has_value());
  CHECK(report.datasheet->peak_flop_per_s.at("fp16") == Approx(989.4e12));
  CHECK(decode.dominant_precision == "fp16");
  CHECK(*decode.flop == Approx(1.531038e10).epsilon(1e-6));
  CHECK(decode.flop_coverage == Approx(0.948761).margin(1e-6));
  CHECK(*decode.achieved_flop_per_s == Approx(8.631825e10).epsilon(1e-6));
  CHECK(*decode.flop_per_s_while_busy == Approx(1.066772e13).epsilon(1e-6));
  CHECK(*decode.mfu == Approx(1.007230e-4).epsilon(1e-5));
  CHECK(*decode.model_flop_per_s == Approx(2.999034e10).epsilon(1e-6));
  CHECK(*decode.mfu_workload == Approx(3.499511e-5).epsilon(1e-5));

  // Kernels: nsys times for all 17, ncu efficiency joined across the two tools' spellings.
  // analysis_expected.py, nc1 per kernel: "8 launches flop/launch=3.357082e+07 pct_compute=0.5955
  // pct_dram=17.8624 bound=latency nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT", "4 launches
  // flop/launch=6.920602e+07 pct_compute=1.0986 pct_dram=31.6745 bound=memory ..._splitK_bias_TNT",
  // "7 launches flop/launch=1.569160e+05 ... vectorized_layer_norm_kernel"
  REQUIRE(report.kernels.size() == 17);
  CHECK(std::is_sorted(report.kernels.begin(), report.kernels.end(),
                       [](const auto& a, const auto& b) { return a.total_time_ns > b.total_time_ns; }));
  const auto& top = report.kernels.front();
  CHECK(top.name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT");
  CHECK(top.total_time_ns == 322025);
  CHECK(top.instances == 64);
  CHECK(top.share_of_total == Approx(322025.0 / 1939822.0));  // 1939822 = all kernel time (analysis_expected.py)
  CHECK(top.profiled_launches == 8);
  CHECK(*top.flop_per_launch == Approx(3.357082e7).epsilon(1e-6));
  CHECK(*top.pct_peak_compute == Approx(0.5955).margin(1e-3));
  CHECK(*top.pct_peak_dram == Approx(17.8624).margin(1e-3));
  CHECK(top.bound == std::optional<std::string>("latency"));
  CHECK(top.stages == std::vector<std::string>{"decode"});
  const auto& split = kernel_starting(report, "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_bias_TNT");
  CHECK(*split.pct_peak_dram == Approx(31.6745).margin(1e-3));
  CHECK(split.bound == std::optional<std::string>("memory"));
  const auto& norm = kernel_starting(report, "void at::native::<unnamed>::vectorized_layer_norm_kernel");
  CHECK(norm.profiled_launches == 7);
  CHECK(norm.ncu_name_join == "join key");
  CHECK(*norm.flop_per_launch == Approx(1.569160e5).epsilon(1e-5));
  CHECK(norm.stages == std::vector<std::string>{"decode", "prefill"});
  const auto& copy =
      kernel_starting(report, "void at::native::vectorized_elementwise_kernel<(int)8, at::native::float16");
  CHECK(copy.profiled_launches == 0);
  CHECK_FALSE(copy.bound.has_value());
  CHECK(copy.stages.empty());
  std::int64_t profiled = 0;
  for (const auto& kernel : report.kernels) profiled += kernel.profiled_launches.value_or(0);
  CHECK(profiled == 40);  // every ncu launch found its nsys row
  CHECK(report.warnings == std::vector<std::string>{"stage 'decode': FLOP cover only 95% of its kernel time (kernels "
                                                    "without ncu data count as 0 FLOP)"});

  REQUIRE(report.top_kernel_selection.has_value());
  CHECK(report.top_kernel_selection->coverage == Approx(0.790562).margin(1e-6));
}

TEST_CASE("the ncu plan's check says which part of the ncu coverage was measured and which extrapolated") {
  TempDir dir;
  make_main(dir.path(), h100 + "nsys/ns1_st", h100 + "ncu/nc1_raw.csv", "analysis/workload_metrics_decode.json");
  SECTION("a check with the split: report.json and the coverage warning carry it") {
    write_file(dir.path() / "ncu" / "plan.json",
               R"({"schema":"llmprof.ncu_plan/1","stage":"decode","check":{"coverage_reached":0.95,)"
               R"("coverage_measured":0.9,"coverage_extrapolated":0.05}})");
    const auto report = analyze_main(dir.path());
    REQUIRE(report.ncu_coverage.has_value());
    CHECK(report.ncu_coverage->stage == "decode");
    CHECK(report.ncu_coverage->measured == Approx(0.9));
    CHECK(report.ncu_coverage->extrapolated == Approx(0.05));
    REQUIRE(report.warnings.size() == 1);
    CHECK_THAT(report.warnings[0], Catch::Contains("ncu measured 90%, extrapolated 5") &&
                                       Catch::Contains("from the same kernels' profiled configurations"));
    const auto json = boost::json::parse(analysis_report_json(report)).as_object();
    CHECK(json.at("ncu_coverage").at("measured").as_double() == Approx(0.9));
    CHECK(json.at("ncu_coverage").at("reached").as_double() == Approx(0.95));
    // Read back by the same table, and quoted by the selection's sentence (its stage is the plan's).
    REQUIRE(write_analysis(report, dir / "analysis").has_value());
    const auto model = load_run_report(dir.path());
    INFO((model ? std::string() : model.error().describe()));
    REQUIRE(model.has_value());
    REQUIRE(model->ncu_coverage.has_value());
    CHECK(model->ncu_coverage->stage == "decode");
    CHECK(model->ncu_coverage->measured == Approx(0.9));
    CHECK(model->ncu_coverage->extrapolated == Approx(0.05));
    CHECK(model->top_kernel_selection_notes.ncu_measured.value_or(-1) == Approx(0.9));
    CHECK(model->top_kernel_selection_notes.ncu_extrapolated.value_or(-1) == Approx(0.05));
    // Written again from the model: the same keys, reached recomputed from the shares read (Boost.JSON's default
    // parse may land a decimal one ulp off, so the sum is compared as a number, not as text).
    const auto rewritten = detail::report_json(model->ncu_coverage).as_object();
    CHECK(rewritten.size() == json.at("ncu_coverage").as_object().size());
    CHECK(rewritten.at("reached").as_double() == Approx(0.95));
  }
  SECTION("the report's selection line says the split") {
    KernelSelection selection;
    selection.stage = "decode";
    selection.n = 19;
    selection.coverage = 0.909;
    selection.coverage_target = 0.9;
    SelectionCoverageNotes notes;
    notes.ncu_measured = 0.878;
    notes.ncu_extrapolated = 0.023;
    CHECK_THAT(describe_kernel_selection(selection, notes),
               Catch::Contains("with ncu data: measured 88%, extrapolated 2.3%"));
    notes.ncu_measured.reset();
    CHECK_THAT(describe_kernel_selection(selection, notes), !Catch::Contains("with ncu data"));
  }
  SECTION("a plan written before the split: nothing made up") {
    write_file(dir.path() / "ncu" / "plan.json", R"({"stage":"decode","check":{"coverage_reached":0.95}})");
    const auto report = analyze_main(dir.path());
    CHECK_FALSE(report.ncu_coverage.has_value());
    CHECK(boost::json::parse(analysis_report_json(report)).as_object().at("ncu_coverage").is_null());
  }
  SECTION("a coverage of 1.7 or a string where a count goes: the plan's check is not used, and said so") {
    write_file(dir.path() / "ncu" / "plan.json",
               R"({"stage":"decode","check":{"coverage_measured":1.7,"coverage_extrapolated":0.05}})");
    auto report = analyze_main(dir.path());
    CHECK_FALSE(report.ncu_coverage.has_value());
    CHECK(std::any_of(report.warnings.begin(), report.warnings.end(), [](const std::string& warning) {
      return warning.find("the check is left out") != std::string::npos;
    }));
    write_file(dir.path() / "ncu" / "plan.json",
               R"({"stage":"decode","check":{"rows":"four","coverage_measured":0.9,"coverage_extrapolated":0.05}})");
    report = analyze_main(dir.path());
    CHECK_FALSE(report.ncu_coverage.has_value());
    CHECK(std::any_of(report.warnings.begin(), report.warnings.end(), [](const std::string& warning) {
      return warning.find("plan.json: field check.rows has the wrong type") != std::string::npos;
    }));
  }
  SECTION("a split that is not a share is left out by the analysis and by the report, by the one rule, and said so") {
    // Each share lies in 0..1, so only their sum (0.9 + 0.5) breaks a bound: the `reached` row of ncu_coverage's
    // table, the one rule both sides apply (detail::withhold_impossible_figures). Neither side may state it.
    const auto breaks_the_sum = [](const std::vector<std::string>& warnings, const std::string& subject) {
      return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& warning) {
        return warning.starts_with(subject + ": reached = 1.4 cannot be true (a fraction lies in [0, 1])");
      });
    };
    write_file(dir.path() / "ncu" / "plan.json",
               R"({"stage":"decode","check":{"coverage_measured":0.9,"coverage_extrapolated":0.5}})");
    const auto report = analyze_main(dir.path());
    CHECK_FALSE(report.ncu_coverage.has_value());
    CHECK(breaks_the_sum(report.warnings, "ncu/plan.json's coverage"));
    CHECK_FALSE(boost::json::parse(analysis_report_json(report)).as_object().at("ncu_coverage").is_object());
    // The same split in a report.json the analysis did not write (another tool's, or edited by hand): the report
    // reading it back drops it too, and its selection line states no ncu split.
    REQUIRE(write_analysis(report, dir / "analysis").has_value());
    const auto report_json_path = dir.path() / "analysis" / "report.json";
    auto root = boost::json::parse(read_file(report_json_path)).as_object();
    root["ncu_coverage"] = boost::json::object{{"stage", "decode"}, {"measured", 0.9}, {"extrapolated", 0.5}};
    write_file(report_json_path, boost::json::serialize(root));
    const auto model = load_run_report(dir.path());
    INFO((model ? std::string() : model.error().describe()));
    REQUIRE(model.has_value());
    CHECK_FALSE(model->ncu_coverage.has_value());
    CHECK(breaks_the_sum(model->warnings, "report.json ncu_coverage"));
    CHECK_FALSE(model->top_kernel_selection_notes.ncu_measured.has_value());
  }
}

TEST_CASE("nesting: generate encloses prefill and decode") {
  // analysis_expected.py, nested stages:
  //   stage :generate: wall_ns=2000000 proj_ns=1900000 kernel_ns=868000 instances=212 busy=0.434000
  //   stage :decode: wall_ns=1400000 proj_ns=1300000 kernel_ns=512000 instances=192 busy=0.365714
  //   stage :prefill: wall_ns=500000 proj_ns=450000 kernel_ns=340000 instances=12 busy=0.680000
  TempDir dir;
  make_main(dir.path(), "analysis/nested/summary", "");
  AnalysisOptions options;
  options.device_name = "NVIDIA H100 80GB HBM3";
  const auto report = analyze_main(dir.path(), options);
  REQUIRE(report.stages.size() == 3);
  CHECK(report.stages[0].name == "generate");  // outermost first
  CHECK(report.stages[1].name == "decode");
  CHECK(report.stages[2].name == "prefill");
  const auto& generate = stage_named(report, "generate");
  CHECK_FALSE(generate.parent.has_value());
  CHECK(generate.level == 0);
  CHECK(generate.kernel_time_ns == 868000);
  CHECK(generate.kernel_instances == 212);
  CHECK(*generate.gpu_busy_fraction == Approx(0.434000).margin(1e-6));
  const auto& decode = stage_named(report, "decode");
  CHECK(decode.parent == std::optional<std::string>("generate"));
  CHECK(decode.level == 1);
  CHECK(decode.kernel_time_ns == 512000);
  CHECK(decode.kernel_instances == 192);
  CHECK(*decode.gpu_busy_fraction == Approx(0.365714).margin(1e-6));
  CHECK(decode.verdict.rfind("host/launch-bound: GPU busy 37% of the stage", 0) == 0);
  const auto& prefill = stage_named(report, "prefill");
  CHECK(prefill.parent == std::optional<std::string>("generate"));
  CHECK(*prefill.gpu_busy_fraction == Approx(0.680000).margin(1e-6));
  CHECK(prefill.verdict ==
        "GPU-bound: GPU busy 68% of the stage; no ncu data for its kernels: profile them to see their limits");
  CHECK(prefill.top_kernels.front().name == "gemm_big_kernel");
  CHECK(prefill.top_kernels.front().share == Approx(300000.0 / 340000.0));
  // A kernel counts toward every range on its stack.
  const auto& norm = kernel_starting(report, "void at::native::layer_norm");
  CHECK(norm.stages == std::vector<std::string>{"decode", "generate", "prefill"});
  CHECK(kernel_starting(report, "copy_kernel").stages.empty());
  // Only nsys: FLOP and bounds are reported as not computable, peaks come from the datasheet.
  CHECK_FALSE(decode.flop.has_value());
  CHECK(std::find(report.skipped.begin(), report.skipped.end(),
                  "FLOP, DRAM bytes, percent of peak, bound: no ncu launches") != report.skipped.end());
  CHECK(report.device.sources.at("bf16").rfind("datasheet:", 0) == 0);
  REQUIRE(report.top_kernel_selection.has_value());
  CHECK(report.top_kernel_selection->kernels.front().name == "gemm_small_kernel");
}

TEST_CASE("only ncu: stages from the NVTX stacks and times from the profiled launches") {
  TempDir dir;
  make_main(dir.path(), "", h100 + "ncu/gemm_raw.csv");
  const auto report = analyze_main(dir.path());
  REQUIRE(report.stages.size() == 1);
  const auto& gemm = report.stages.front();
  CHECK(gemm.name == "gemm");
  CHECK(gemm.kernel_time_source == "ncu launches");
  CHECK(gemm.kernel_time_ns == 208192);
  CHECK_FALSE(gemm.wall_ns.has_value());
  CHECK_FALSE(gemm.gpu_busy_fraction.has_value());
  CHECK(*gemm.flop == 137438953472.0);
  CHECK(*gemm.flop_per_s_while_busy == Approx(6.601548e14).epsilon(1e-6));
  CHECK_FALSE(gemm.mfu.has_value());  // MFU needs the stage's wall time, which only nsys knows
  CHECK(gemm.verdict.rfind("GPU busy fraction unknown (no nsys GPU projection); 100% of kernel time in compute-bound",
                           0) == 0);
  REQUIRE(report.kernels.size() == 1);
  CHECK(report.kernels[0].time_source == "ncu gpu__time_duration.sum");
  CHECK(report.kernels[0].bound == std::optional<std::string>("compute"));
  CHECK(report.kernels[0].share_of_total == 1.0);
  CHECK_FALSE(report.top_kernel_selection.has_value());
  CHECK(report.device.sources.at("bf16").find("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off") !=
        std::string::npos);
}

TEST_CASE("write_analysis writes the contract's files") {
  TempDir dir;
  make_main(dir.path(), h100 + "nsys/ns1_st", h100 + "ncu/nc1_raw.csv", "analysis/workload_metrics_decode.json");
  const auto report = analyze_main(dir.path());
  REQUIRE(write_analysis(report, dir / "analysis").has_value());

  const auto json = boost::json::parse(read_file(dir / "analysis" / "report.json")).as_object();
  CHECK(json.at("schema").as_string() == "llmprof.report/2");
  const auto& device = json.at("device").as_object();
  CHECK(device.at("name").as_string() == "NVIDIA H100 80GB HBM3");
  CHECK(device.at("peak_flop_per_s").as_object().at("fp16").as_double() == Approx(8.569867e14).epsilon(1e-6));
  CHECK(device.at("peak_dram_bytes_per_s").is_double());
  const auto& stages = json.at("stages").as_array();
  REQUIRE(stages.size() == 2);
  for (const auto& value : stages) {
    const auto& stage = value.as_object();
    for (const char* key : {"name", "domain", "verdict"}) CHECK(stage.at(key).is_string());
    CHECK(stage.at("parent").is_null());
    for (const char* key : {"wall_ns", "gpu_projection_ns", "kernel_time_ns", "kernel_instances"})
      CHECK(stage.at(key).is_int64());
    CHECK(stage.at("gpu_busy_fraction").is_double());
    for (const char* key : {"flop", "achieved_flop_per_s", "mfu"})
      CHECK((stage.at(key).is_double() || stage.at(key).is_null()));
  }
  const auto& kernels = json.at("kernels").as_array();
  REQUIRE(kernels.size() == 17);
  std::int64_t previous = INT64_MAX;
  for (const auto& value : kernels) {
    const auto& kernel = value.as_object();
    CHECK(kernel.at("total_time_ns").as_int64() <= previous);
    previous = kernel.at("total_time_ns").as_int64();
    for (const char* key : {"name", "stages", "instances", "avg_time_ns", "share_of_total", "profiled_launches",
                            "flop_per_launch", "dram_bytes_per_launch", "arithmetic_intensity", "achieved_flop_per_s",
                            "pct_peak_compute", "pct_peak_dram", "bound"}) {
      CHECK(kernel.contains(key));
    }
  }
  CHECK(kernels[0].as_object().at("bound").as_string() == "latency");
  const auto& selection = json.at("top_kernel_selection").as_object();
  CHECK(selection.at("stage").as_string() == "decode");
  CHECK(selection.at("n").as_int64() == 5);
  CHECK(selection.at("kernel_regex").as_string().subview().starts_with("regex:^(?:"));
  CHECK(selection.at("coverage").as_double() == Approx(0.790562).margin(1e-6));
  CHECK(json.at("warnings").is_array());
  // analysis_expected.py: decode workload: model_flop_per_s=2.999034e+10 mfu_workload=3.499511e-05;
  // nc1: ... max_peak_fp16=8.569867e+14 (the workload's dtype is fp16).
  const auto& mfu = json.at("mfu_workload").as_object();
  CHECK(mfu.at("dtype").as_string() == "fp16");
  CHECK(mfu.at("peak_flop_per_s").as_double() == Approx(8.569867e14).epsilon(1e-6));
  const auto& mfu_stages = mfu.at("stages").as_array();
  const auto mfu_decode = std::find_if(mfu_stages.begin(), mfu_stages.end(), [](const boost::json::value& stage) {
    return stage.as_object().at("stage").as_string() == "decode";
  });
  REQUIRE(mfu_decode != mfu_stages.end());
  CHECK(mfu_decode->as_object().at("model_flop_per_s").as_double() == Approx(2.999034e10).epsilon(1e-6));
  CHECK(mfu_decode->as_object().at("mfu").as_double() == Approx(3.499511e-5).epsilon(1e-5));

  // The CSVs read back with the project's reader: one row per kernel / stage, names intact.
  auto kernels_csv = CsvReader::open(dir / "analysis" / "kernels.csv");
  REQUIRE(kernels_csv.has_value());
  REQUIRE(kernels_csv->read_header().has_value());
  std::vector<std::string> names;
  while (true) {
    auto next = kernels_csv->next();
    REQUIRE(next.has_value());
    if (!*next) break;
    names.emplace_back(kernels_csv->fields()[0]);
  }
  REQUIRE(names.size() == 17);
  CHECK(names[0] == report.kernels[0].name);
  CHECK(names[1] == report.kernels[1].name);  // a name with commas, quoted
  const auto stages_text = read_file(dir / "analysis" / "stages.csv");
  CHECK(stages_text.find("prefill,,,0,1280269408,1226511862,305763,38,") != std::string::npos);
}

TEST_CASE("report.json's records are written and read back by the same field tables") {
  TempDir dir;
  make_main(dir.path(), h100 + "nsys/ns1_st", h100 + "ncu/nc1_raw.csv", "analysis/workload_metrics_decode.json");
  const auto analysis = analyze_main(dir.path());
  REQUIRE(write_analysis(analysis, dir / "analysis").has_value());
  const auto json = boost::json::parse(read_file(dir / "analysis" / "report.json")).as_object();
  const auto model = load_run_report(dir.path());
  REQUIRE(model.has_value());

  // Every stage as the report reads it, written again, is the object the analysis wrote: no field
  // is lost, renamed or retyped between the writer and the reader.
  const auto& stages = json.at("stages").as_array();
  REQUIRE(model->stages.size() == stages.size());
  REQUIRE(model->stages.size() == analysis.stages.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    INFO(model->stages[i].name);
    CHECK(detail::report_json(model->stages[i]) == stages[i].as_object());
    // Read back from the file, not copied: the figures are the analysis's own.
    CHECK(model->stages[i].kernel_time_ns == analysis.stages[i].kernel_time_ns);
    // report.json prints doubles to about 1e-10 relative, so the figure read back is that close.
    CHECK(model->stages[i].flop_coverage == Approx(analysis.stages[i].flop_coverage).epsilon(1e-9));
    CHECK(model->stages[i].top_kernels.size() == analysis.stages[i].top_kernels.size());
  }
  // The reader sorts kernels by total time as the analysis wrote them; match by name.
  const auto& kernels = json.at("kernels").as_array();
  REQUIRE(model->kernels.size() == kernels.size());
  for (const auto& value : kernels) {
    const auto& written = value.as_object();
    const auto read = std::find_if(model->kernels.begin(), model->kernels.end(), [&](const ReportKernel& kernel) {
      return kernel.name == written.at("name").as_string();
    });
    REQUIRE(read != model->kernels.end());
    CHECK(detail::report_json(*read) == written);
  }
  CHECK(detail::report_json(model->device) == json.at("device").as_object());
  REQUIRE(model->bare_run.has_value());
  CHECK(detail::report_json(*model->bare_run) == json.at("bare_run").as_object());
  REQUIRE(model->nvtx_ranges.size() == json.at("nvtx_ranges").as_array().size());
  for (std::size_t i = 0; i < model->nvtx_ranges.size(); ++i)
    CHECK(detail::report_json(model->nvtx_ranges[i]) == json.at("nvtx_ranges").as_array()[i].as_object());
}

TEST_CASE("a report.json field of the wrong type is an error naming the field, read by the shared table") {
  TempDir dir;
  make_main(dir.path(), h100 + "nsys/ns1_st", h100 + "ncu/nc1_raw.csv", "analysis/workload_metrics_decode.json");
  REQUIRE(write_analysis(analyze_main(dir.path()), dir / "analysis").has_value());
  auto json = boost::json::parse(read_file(dir / "analysis" / "report.json")).as_object();
  json.at("stages").as_array()[1].as_object()["top_kernels"].as_array()[0].as_object()["time_ns"] = "slow";
  write_file(dir / "analysis" / "report.json", boost::json::serialize(json));
  const auto model = load_run_report(dir.path());
  REQUIRE_FALSE(model.has_value());
  CHECK(model.error().code == ErrorCode::parse_error);
  CHECK_THAT(model.error().message, Catch::Contains("'stages[1].top_kernels[0].time_ns'"));
}

TEST_CASE("report.json spells every NVTX stage one way and reads back as llmprof.report/2") {
  TempDir dir;
  make_main(dir.path(), h100 + "nsys/ns1_st", h100 + "ncu/nc1_raw.csv", "analysis/workload_metrics_decode.json");
  REQUIRE(write_analysis(analyze_main(dir.path()), dir / "analysis").has_value());
  const auto json = boost::json::parse(read_file(dir / "analysis" / "report.json")).as_object();
  CHECK(json.at("schema").as_string() == "llmprof.report/2");
  std::set<std::string> stage_names;  // as stages[] names them: "decode", "llm:decode"
  for (const auto& value : json.at("stages").as_array()) {
    const auto& stage = value.as_object();
    const std::string domain(stage.at("domain").as_string());
    const std::string name(stage.at("name").as_string());
    stage_names.insert(domain.empty() ? name : domain + ":" + name);
  }
  REQUIRE(stage_names == std::set<std::string>{"prefill", "decode"});
  std::size_t stack_entries = 0;
  for (const auto& value : json.at("ncu_launches").as_array()) {
    for (const auto& range : value.as_object().at("nvtx_stack").as_array()) {
      ++stack_entries;
      CHECK(stage_names.count(std::string(range.as_string())) == 1);  // ":decode" before /2
    }
  }
  CHECK(stack_entries > 0);
  for (const auto& value : json.at("kernels").as_array()) {
    for (const auto& stage : value.as_object().at("stages").as_array())
      CHECK(stage_names.count(std::string(stage.as_string())) == 1);
  }
  // The workload MFU has one name, mfu_workload, in the file and in the report model.
  const auto& decode = json.at("stages").as_array()[1].as_object();
  REQUIRE(decode.at("name").as_string() == "decode");
  CHECK(decode.at("mfu_workload").as_double() == Approx(3.499511e-5).epsilon(1e-5));
  CHECK_FALSE(decode.contains("workload_mfu"));
  auto model = load_run_report(dir.path());
  REQUIRE(model.has_value());
  CHECK(model->schema == "llmprof.report/2");
  REQUIRE(model->stages.size() == 2);
  CHECK(*model->stages[1].mfu_workload == Approx(3.499511e-5).epsilon(1e-5));

  // ncu_launches and mfu_workload read back by the tables that wrote them: the model written again is the file.
  // analysis_expected.py: nc1: launches=40; launch 2: nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_ flop=5.035622e+07
  // by={'fp16': 50331648, 'fp32': 24576} ... bound=latency
  REQUIRE(model->ncu_launches.size() == 40);
  const ReportNcuLaunch& launch = model->ncu_launches[2];
  CHECK(launch.kernel_name.rfind("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_", 0) == 0);
  CHECK(*launch.flop == Approx(5.035622e7).epsilon(1e-6));
  REQUIRE(launch.flop_by_precision.size() == 2);
  CHECK(launch.flop_by_precision[0].first == "fp16");
  CHECK(launch.flop_by_precision[0].second == Approx(50331648));
  CHECK(launch.flop_by_precision[1].first == "fp32");
  CHECK(launch.flop_by_precision[1].second == Approx(24576));
  CHECK(launch.bound == std::optional<std::string>("latency"));
  CHECK(boost::json::value(detail::report_json(model->ncu_launches)) == json.at("ncu_launches"));
  REQUIRE(model->mfu_workload.has_value());
  CHECK(detail::report_json(model->mfu_workload) == json.at("mfu_workload"));
  CHECK(model->mfu_workload->dtype == "fp16");
}

TEST_CASE("bad input: errors name the file and what is wrong") {
  TempDir dir;
  const auto main = dir / "run";
  const auto raw = read_file(data_path(h100 + "ncu/nc1_raw.csv"));
  const auto ncu_csv = (main / "ncu" / "raw.csv").string();
  auto analysis_error = [&]() {
    auto report = analyze_run_directory(main, {});
    REQUIRE_FALSE(report.has_value());
    return report.error();
  };
  SECTION("no run directory") {
    auto error = analysis_error();
    CHECK(error.code == ErrorCode::not_found);
    CHECK(error.message == "run directory " + main.string() + " does not exist");
  }
  SECTION("nothing to analyse") {
    std::filesystem::create_directories(main);
    auto error = analysis_error();
    CHECK(error.code == ErrorCode::not_found);
    CHECK(error.message.find("holds nothing to analyse") != std::string::npos);
    CHECK(error.message.find(ncu_csv) != std::string::npos);
  }
  SECTION("truncated ncu CSV") {
    write_file(main / "ncu" / "raw.csv", raw.substr(0, raw.size() / 2));
    auto error = analysis_error();
    CHECK(error.code == ErrorCode::parse_error);
    CHECK(error.message.rfind(ncu_csv + ":", 0) == 0);
  }
  SECTION("ncu CSV missing the Kernel Name column") {
    std::string broken = raw;
    broken.replace(broken.find("\"Kernel Name\""), 13, "\"Kernel\"");
    write_file(main / "ncu" / "raw.csv", broken);
    auto error = analysis_error();
    CHECK(error.message.rfind(ncu_csv, 0) == 0);
    CHECK(error.message.find("Kernel Name") != std::string::npos);
  }
  SECTION("only ncu's error text") {
    write_file(main / "ncu" / "raw.csv", "==PROF== Connected to process 12\n==ERROR== Failed to profile kernel\n");
    auto error = analysis_error();
    CHECK(error.message.rfind(ncu_csv, 0) == 0);
    CHECK(error.message.find("==ERROR== Failed to profile kernel") != std::string::npos);
  }
  SECTION("empty ncu CSV") {
    write_file(main / "ncu" / "raw.csv", "");
    auto error = analysis_error();
    CHECK(error.message.rfind(ncu_csv, 0) == 0);
    CHECK(error.message.find("empty") != std::string::npos);
  }
  SECTION("random bytes as ncu CSV") {
    std::string noise;
    std::uint32_t state = 12345;
    for (int i = 0; i < 4096; ++i) {
      state = state * 1664525u + 1013904223u;
      noise += static_cast<char>(state >> 24);
    }
    write_file(main / "ncu" / "raw.csv", noise);
    auto error = analysis_error();
    CHECK(error.message.rfind(ncu_csv, 0) == 0);
  }
  SECTION("ncu CSV without gpu__time_duration.sum") {
    // Before: every kernel at 0 ns with time_source "ncu gpu__time_duration.sum".
    write_file(main / "ncu" / "raw.csv", "\"ID\",\"Kernel Name\"\n\"\",\"\"\n\"0\",\"gemm_kernel\"\n");
    auto error = analysis_error();
    CHECK(error.code == ErrorCode::parse_error);
    CHECK(error.message == ncu_csv +
                               ": missing column gpu__time_duration.sum (the details page's \"Duration\"); "
                               "the analysis needs each launch's duration");
    CHECK(error.subject == ncu_csv);
  }
  SECTION("header only") {
    write_file(main / "ncu" / "raw.csv", raw.substr(0, raw.find('\n') + 1));
    auto error = analysis_error();
    CHECK(error.message.rfind(ncu_csv, 0) == 0);
  }
  SECTION("nsys table missing a column") {
    const auto text = read_file(data_path(h100 + "nsys/ns1_st_nvtx_gpu_proj_sum.csv"));
    std::string broken = text;
    broken.replace(broken.find("Total Proj Time (ns)"), 20, "Projection");
    write_file(main / "nsys" / "summary_nvtx_gpu_proj_sum.csv", broken);
    auto error = analysis_error();
    CHECK(error.message.find((main / "nsys" / "summary_nvtx_gpu_proj_sum.csv").string()) != std::string::npos);
    CHECK(error.message.find("Total Proj Time (ns)") != std::string::npos);
  }
  SECTION("broken workload metrics") {
    make_main(main, h100 + "nsys/ns1_st", "");
    write_file(main / "stage1" / "metrics.json", "{\"schema\": \"llmprof.workload_metrics/1\"}");
    auto error = analysis_error();
    CHECK(error.message == (main / "stage1" / "metrics.json").string() + ": key \"model\" is missing");
  }
}

namespace {

// The metric names config/ncu-sections/LlmprofRoofline.section lists (protobuf text: `Name: "..."` lines).
std::set<std::string> llmprof_section_metrics() {
  std::set<std::string> names;
  std::istringstream lines(read_file(std::filesystem::path(LLMPROF_SOURCE_DIR) / "config/ncu-sections/LlmprofRoofline.section"));
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("Name: \"");
    if (at == std::string::npos || line.find_first_not_of(' ') != at) continue;
    names.insert(line.substr(at + 7, line.rfind('"') - at - 7));
  }
  return names;
}

void same_launch(const LaunchRoofline& a, const LaunchRoofline& b) {
  INFO("launch " << a.launch_id << " " << a.kernel_name.substr(0, 60));
  CHECK(a.kernel_name == b.kernel_name);
  CHECK(a.duration_ns == b.duration_ns);
  CHECK(a.flop_by_precision == b.flop_by_precision);
  CHECK(a.flop == b.flop);
  CHECK(a.dram_bytes == b.dram_bytes);
  CHECK(a.peak_flop_per_s == b.peak_flop_per_s);
  CHECK(a.peak_sources == b.peak_sources);
  CHECK(a.peak_dram_bytes_per_s == b.peak_dram_bytes_per_s);
  CHECK(a.pct_peak_compute == b.pct_peak_compute);
  CHECK(a.pct_peak_dram == b.pct_peak_dram);
  CHECK(a.bound == b.bound);
  CHECK(a.device_name == b.device_name);
  CHECK(a.missing == b.missing);
}

}  // namespace

TEST_CASE("ncu.set = llmprof: a real page of the set gives every launch's figures", "[ncuset]") {
  // ncu 2025.3.1 on the H100, the 1b decode with the defaults (scripts/gpu-verify.sh ncuset): the section's
  // metrics plus what ncu records with any section (launch__*, device__attribute_*).
  auto page = parse_ncu_csv(data_path("ncu-llmprof-set/h100_1b_decode_raw.csv"));
  REQUIRE(page.has_value());
  const std::string line = "llmprof h100_1b_decode:";
  REQUIRE(double(page->launches.size()) == testing::oracle_figure("analysis", line, "launches"));
  double flop = 0, dram_bytes = 0, duration_ns = 0;
  std::map<KernelBound, int> bounds;
  for (const auto& launch : page->launches) {
    const auto figures = analyze_launch(launch);
    INFO(figures.kernel_name);
    CHECK(figures.missing.empty());
    REQUIRE(figures.flop.has_value());
    REQUIRE(figures.dram_bytes.has_value());
    REQUIRE(figures.bound.has_value());
    flop += *figures.flop;
    dram_bytes += *figures.dram_bytes;
    duration_ns += figures.duration_ns.value_or(0);
    ++bounds[*figures.bound];
  }
  CHECK(flop == Approx(testing::oracle_figure("analysis", line, "total_flop")).epsilon(1e-6));
  CHECK(dram_bytes == Approx(testing::oracle_figure("analysis", line, "dram_bytes")).epsilon(1e-6));
  CHECK(duration_ns == Approx(testing::oracle_figure("analysis", line, "duration_ns")).epsilon(1e-9));
  CHECK(double(bounds[KernelBound::compute]) == testing::oracle_figure("analysis", line, "compute_bound"));
  CHECK(double(bounds[KernelBound::memory]) == testing::oracle_figure("analysis", line, "memory_bound"));
  CHECK(double(bounds[KernelBound::latency]) == testing::oracle_figure("analysis", line, "latency_bound"));
}

TEST_CASE("ncu.set = llmprof: its section's columns alone give the roofline set's figures", "[ncuset]") {
  // tests/data/ncu-llmprof-set/*.csv keep the launch columns and the section's 34 metric columns of the recorded
  // --set roofline pages (tests/tools/derive_llmprof_csv.py): whatever the analysis reads must be among them.
  const std::set<std::string> section = llmprof_section_metrics();
  CHECK(section.size() == 34);
  auto derived = parse_ncu_csv(data_path("ncu-llmprof-set/gemm_raw.csv"));
  REQUIRE(derived.has_value());
  REQUIRE(derived->launches.size() == 1);
  std::set<std::string> columns;
  for (const auto& [name, value] : derived->launches[0].metrics) columns.insert(name);
  for (const auto& [name, value] : derived->launches[0].text_metrics) columns.insert(name);
  CHECK(columns == section);

  // analysis_expected.py: gemm: flop=137438953472 by={'bf16': 137438953472.0} duration_ns=208192.000
  // achieved=6.601548e+14 peak_bf16=7.317958e+14 pct_compute=90.2103 dram_bytes=1.786335e+08
  // dram_peak=3.351295e+12 pct_dram=25.6027 ai=769.3908 bound=compute (from the full roofline page)
  const auto gemm = analyze_launch(derived->launches[0]);
  CHECK(*gemm.flop == 137438953472.0);
  CHECK(gemm.peak_flop_per_s.at("bf16") == Approx(7.317958e14).epsilon(1e-6));
  CHECK(*gemm.pct_peak_compute == Approx(90.2103).margin(1e-3));
  CHECK(*gemm.dram_bytes == Approx(1.786335e8).epsilon(1e-6));
  CHECK(*gemm.pct_peak_dram == Approx(25.6027).margin(1e-3));
  CHECK(gemm.bound == KernelBound::compute);
  CHECK(gemm.missing.empty());
  same_launch(gemm, single_launch("gemm_raw.csv"));

  // The decode run: every launch, and the per-stage FLOP, MFU, DRAM bytes and MBU, identical.
  TempDir dir;
  make_main(dir / "roofline", h100 + "nsys/ns1_st", h100 + "ncu/nc1_raw_base.csv", "analysis/workload_metrics_decode.json");
  make_main(dir / "llmprof", h100 + "nsys/ns1_st", "ncu-llmprof-set/nc1_raw_base.csv",
            "analysis/workload_metrics_decode.json");
  const auto roofline = analyze_main(dir / "roofline");
  const auto llmprof = analyze_main(dir / "llmprof");
  REQUIRE(llmprof.launches.size() == 40);
  REQUIRE(roofline.launches.size() == 40);
  for (std::size_t i = 0; i < 40; ++i) same_launch(llmprof.launches[i], roofline.launches[i]);
  REQUIRE(llmprof.stages.size() == roofline.stages.size());
  for (std::size_t i = 0; i < llmprof.stages.size(); ++i) {
    const auto& a = llmprof.stages[i];
    const auto& b = roofline.stages[i];
    INFO("stage " << a.name);
    CHECK(a.flop == b.flop);
    CHECK(a.mfu == b.mfu);
    CHECK(a.dram_bytes == b.dram_bytes);
    CHECK(a.mbu == b.mbu);
  }
  const auto& decode = stage_named(llmprof, "decode");
  CHECK(decode.flop.has_value());
  CHECK(decode.mfu.has_value());
  CHECK(decode.dram_bytes.has_value());
}
