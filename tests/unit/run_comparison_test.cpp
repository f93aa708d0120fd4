// compare_runs on two fixture runs whose differences are known by construction
// (tests/tools/make_run_fixtures.py: the rerun's decode wall +10%, one kernel +20%, one -15%, one gone,
// one new, driver and ncu version changed, ncu.set and run.top_n_kernels changed).
#include <sys/wait.h>
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <cmath>
#include <limits>

#include "deep_profile_cli.hpp"
#include "llmprof/run_comparison.hpp"
#include "report_golden.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

namespace {

const std::string kNvjetBias = "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT";

RunComparison compare_fixtures(ComparisonOptions options = {}) {
  auto comparison =
      compare_run_directories(data_path("runs/h100-decode-b4"), data_path("runs/h100-decode-b4-rerun"), options);
  if (!comparison) FAIL(comparison.error().describe());
  return *comparison;
}

const KernelComparison& kernel(const RunComparison& comparison, const std::string& prefix) {
  for (const auto& entry : comparison.kernels) {
    if (entry.name.rfind(prefix, 0) == 0) return entry;
  }
  FAIL("no kernel " << prefix);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("stage deltas and ratios are B relative to A") {
  const auto comparison = compare_fixtures();
  REQUIRE(comparison.stages.size() == 3);
  const auto& decode = comparison.stages[2];
  CHECK(decode.name == "decode");
  CHECK(*decode.wall_ns.a == 177371307);
  CHECK(*decode.wall_ns.b == 195108438);  // round(177371307 * 1.1)
  CHECK(*decode.wall_ns.ratio == Approx(1.1).epsilon(1e-8));
  CHECK(*decode.wall_ns.delta_pct == Approx(10.0).epsilon(1e-6));
  // Decode kernel time: +20% of 322025, -15% of 220067, -215688 (flash gone), +240000 (cutlass new).
  const double a = 1435206,
               b = a + std::round(322025 * 1.2) - 322025 + std::round(220067 * 0.85) - 220067 - 215688 + 240000;
  CHECK(*decode.kernel_time_ns.b == b);
  CHECK(*decode.kernel_time_ns.delta_pct == Approx((b / a - 1) * 100));
  CHECK(comparison.stages[1].wall_ns.delta_pct == Approx(0.0));  // prefill unchanged
  CHECK_FALSE(comparison.stages[1].mfu.ratio.has_value());       // null on both sides: no ratio
}

TEST_CASE("kernels are matched by name: slower, faster, new and gone beyond the threshold") {
  const auto comparison = compare_fixtures();
  const auto& slower = kernel(comparison, kNvjetBias);
  CHECK(slower.change == KernelChange::slower);
  CHECK(*slower.avg_time_ns.delta_pct == Approx(20.0).margin(0.01));
  const auto& faster = kernel(comparison, "void at::native::<unnamed>::vectorized_layer_norm_kernel");
  CHECK(faster.change == KernelChange::faster);
  CHECK(*faster.avg_time_ns.delta_pct == Approx(-15.0).margin(0.01));
  CHECK(kernel(comparison, "void pytorch_flash::flash_fwd_kernel").change == KernelChange::removed);
  CHECK(kernel(comparison, "void cutlass::Kernel2").change == KernelChange::added);
  CHECK(kernel(comparison, "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT").change == KernelChange::unchanged);
  std::size_t changed = 0;
  for (const auto& entry : comparison.kernels) changed += entry.change != KernelChange::unchanged;
  CHECK(changed == 4);
  CHECK(comparison.kernels.size() == 17);  // 16 in A + 1 only in B

  ComparisonOptions loose;
  loose.kernel_threshold_pct = 25;
  CHECK(kernel(compare_fixtures(loose), kNvjetBias).change == KernelChange::unchanged);
}

TEST_CASE("environment and config differences are listed key by key") {
  const auto comparison = compare_fixtures();
  REQUIRE(comparison.environment.size() == 2);
  CHECK(comparison.environment[0].key == "gpu[0].driver");
  CHECK(comparison.environment[0].a == "580.159.04");
  CHECK(comparison.environment[0].b == "580.165.02");
  CHECK(comparison.environment[1].key == "tools.ncu");
  CHECK(comparison.environment[1].b == "2025.3.2.0");
  REQUIRE(comparison.config.size() == 2);
  CHECK(comparison.config[0].key == "config.ncu.set");
  CHECK(comparison.config[0].a == "'roofline'");
  CHECK(comparison.config[0].b == "'full'");
  CHECK(comparison.config[1].key == "config.run.top_n_kernels");
}

TEST_CASE("the fail-if-slower gate flags a regression only beyond the limit") {
  ComparisonOptions gate;
  gate.fail_if_slower_pct = 5;
  const auto flagged = compare_fixtures(gate);
  CHECK(flagged.regression);
  REQUIRE_FALSE(flagged.regression_reasons.empty());
  CHECK(flagged.regression_reasons[0].find("wall time +10%") != std::string::npos);
  gate.fail_if_slower_pct = 15;
  const auto relaxed = compare_fixtures(gate);
  // generate +1.2% wall, decode +10% wall; kernel time of decode moved by less than 15%.
  CHECK_FALSE(relaxed.regression);
  CHECK_FALSE(compare_fixtures().regression);  // no gate, no regression
}

TEST_CASE("comparison JSON and Markdown match their golden files", "[golden]") {
  ComparisonOptions gate;
  gate.fail_if_slower_pct = 5;
  const auto comparison = compare_fixtures(gate);
  const auto json = comparison_to_json(comparison);
  llmprof::testing::check_golden("compare.b4-vs-rerun.json", json);
  CHECK(json.find("\"schema\": \"llmprof.compare/2\"") != std::string::npos);
  CHECK(json.find("\"regression\": true") != std::string::npos);
  const auto markdown = render_comparison_markdown(comparison);
  llmprof::testing::check_golden("compare.b4-vs-rerun.md", markdown);
  CHECK(markdown.find("| decode | 177 ms | 195 ms | +10% |") != std::string::npos);
  CHECK(markdown.find("| gone | `pytorch_flash::flash_fwd_kernel` |") != std::string::npos);
  const auto html = render_comparison_html(comparison);
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("badge new") != std::string::npos);
  CHECK(html.find("flash_fwd_kernel&lt;Flash_fwd_kernel_traits") != std::string::npos);
}

#ifdef LLMPROF_DEEP_PROFILE_EXE
TEST_CASE("deep-profile compare exits 5 on a regression and 0 otherwise", "[cli]") {
  llmprof::testing::TempDir temp;
  using llmprof::testing::run_deep_profile;
  const std::string a = data_path("runs/h100-decode-b4").string(), b = data_path("runs/h100-decode-b4-rerun").string();
  const auto regression = run_deep_profile({"compare", a, b, "--json", "--fail-if-slower", "5"});
  CHECK(regression.exit_code == 5);
  CHECK(regression.out.find("\"regression\": true") != std::string::npos);
  CHECK(run_deep_profile({"compare", a, b, "--fail-if-slower", "50", "--html", (temp / "c.html").string()}).exit_code ==
        0);
  CHECK(std::filesystem::exists(temp / "c.html"));
  CHECK(run_deep_profile({"compare", a, temp.path().string()}).exit_code == 4);
}
#endif

namespace {

// A copy of the rerun fixture in which B measured nothing: no stage times, no kernels (a CI machine
// without nsys still writes report.json from the workload's own metrics).
std::filesystem::path run_that_measured_nothing(const llmprof::testing::TempDir& temp) {
  const auto copy = temp / "measured-nothing";
  std::filesystem::copy(data_path("runs/h100-decode-b4-rerun"), copy, std::filesystem::copy_options::recursive);
  auto report = boost::json::parse(llmprof::testing::read_file(copy / "analysis/report.json")).as_object();
  for (auto& stage : report.at("stages").as_array()) {
    for (const char* key : {"wall_ns", "gpu_projection_ns", "kernel_time_ns"}) stage.as_object()[key] = nullptr;
  }
  report["kernels"] = boost::json::array();
  llmprof::testing::write_file(copy / "analysis/report.json", boost::json::serialize(report));
  return copy;
}

}  // namespace

TEST_CASE("a gate that cannot compare is inconclusive, never 'no regression'") {
  llmprof::testing::TempDir temp;
  ComparisonOptions gate;
  gate.fail_if_slower_pct = 5;
  auto comparison = compare_run_directories(data_path("runs/h100-decode-b4"), run_that_measured_nothing(temp), gate);
  REQUIRE(comparison.has_value());
  CHECK_FALSE(comparison->regression);
  CHECK(comparison->inconclusive);  // before: "No regression." and exit 0
  REQUIRE_FALSE(comparison->inconclusive_reasons.empty());
  CHECK_THAT(comparison->inconclusive_reasons.front(), Catch::Contains("B has none"));
  CHECK_THAT(render_comparison_markdown(*comparison),
             Catch::Contains("**INCONCLUSIVE**") && !Catch::Contains("No regression"));
  CHECK_FALSE(compare_fixtures(gate).inconclusive);  // two runs that both measured every stage
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
    gate.fail_if_slower_pct = bad;
    const auto refused =
        compare_run_directories(data_path("runs/h100-decode-b4"), data_path("runs/h100-decode-b4-rerun"), gate);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == ErrorCode::invalid_argument);
  }
}

TEST_CASE("the library decides the gate's verdict and its exit status, not the CLI") {
  llmprof::testing::TempDir temp;
  ComparisonOptions gate;
  gate.fail_if_slower_pct = 5;
  // decode's wall time grew 10% between the recorded runs: past 5%, within 15%.
  const auto flagged = compare_fixtures(gate);
  const GateVerdict regression = decide_gate(flagged);
  CHECK(regression.outcome == GateOutcome::regression);
  CHECK(exit_code_for(regression.outcome) == 5);
  CHECK(regression.reasons == flagged.regression_reasons);
  REQUIRE_FALSE(gate_messages(regression).empty());
  // Single runs: the noise gate's line first, then one "regression: ..." line per reason.
  CHECK(gate_messages(regression).front() == flagged.noise_gate->summary);
  CHECK_THAT(gate_messages(regression).back(), Catch::StartsWith("regression: decode: wall time +10%"));

  gate.fail_if_slower_pct = 15;
  const GateVerdict passed = decide_gate(compare_fixtures(gate));
  CHECK(passed.outcome == GateOutcome::passed);
  CHECK(exit_code_for(passed.outcome) == 0);
  CHECK(passed.reasons.empty());
  const GateVerdict ungated = decide_gate(compare_fixtures());
  CHECK(ungated.outcome == GateOutcome::passed);
  CHECK_FALSE(ungated.noise_summary.has_value());
  CHECK(gate_messages(ungated).empty());

  gate.fail_if_slower_pct = 5;
  auto nothing = compare_run_directories(data_path("runs/h100-decode-b4"), run_that_measured_nothing(temp), gate);
  REQUIRE(nothing.has_value());
  const GateVerdict cannot = decide_gate(*nothing);
  CHECK(cannot.outcome == GateOutcome::cannot_compare);
  CHECK(exit_code_for(cannot.outcome) == 6);
  REQUIRE_FALSE(cannot.reasons.empty());
  CHECK_THAT(gate_messages(cannot).back(), Catch::StartsWith("cannot compare: ") && Catch::Contains("B has none"));

  // The repeats' noise gate could not tell: exit 7, unless a regression was also found (it wins).
  RunComparison noisy;
  noisy.options.fail_if_slower_pct = 2;
  noisy.noise_gate = NoiseGate{};
  noisy.noise_gate->verdict = NoiseVerdict::inconclusive;
  noisy.noise_gate->summary = "inconclusive: noise +-14.9%";
  const GateVerdict within_noise = decide_gate(noisy);
  CHECK(within_noise.outcome == GateOutcome::inconclusive);
  CHECK(exit_code_for(within_noise.outcome) == 7);
  CHECK(gate_messages(within_noise) == std::vector<std::string>{"inconclusive: noise +-14.9%"});
  noisy.regression = true;
  noisy.regression_reasons = {"decode_s +5%"};
  CHECK(decide_gate(noisy).outcome == GateOutcome::regression);
}

#ifdef LLMPROF_DEEP_PROFILE_EXE
TEST_CASE("deep-profile compare exits 6 when the gate cannot compare and 2 on a non-finite threshold") {
  llmprof::testing::TempDir temp;
  const std::string exe = LLMPROF_DEEP_PROFILE_EXE;
  const std::string a = data_path("runs/h100-decode-b4").string();
  const std::string quiet = " > /dev/null 2>&1";
  int status = std::system(
      (exe + " compare " + a + " " + run_that_measured_nothing(temp).string() + " --fail-if-slower 5" + quiet).c_str());
  CHECK(WEXITSTATUS(status) == 6);
  const std::string b = data_path("runs/h100-decode-b4-rerun").string();
  for (const char* bad : {"nan", "inf", "-inf", "-5"}) {
    INFO(bad);
    status = std::system((exe + " compare " + a + " " + b + " --fail-if-slower=" + bad + quiet).c_str());
    CHECK(WEXITSTATUS(status) == 2);  // before: nan was accepted and the gate never fired
    status = std::system((exe + " compare " + a + " " + b + " --threshold=" + bad + quiet).c_str());
    CHECK(WEXITSTATUS(status) == 2);
  }
}
#endif
