// The noise-aware regression gate on synthetic run directories: the recorded b4 run copied twice, with
// stage1/repeats.json of known distributions (decode_s = scale * (1 + noise * z), z fixed), so that a 5%
// slowdown under 1% noise is a regression, under 10% noise inconclusive, and an unchanged run under 1%
// noise no regression. Expected p-values: tests/tools/statistics_expected.py (quoted where used).
#include <catch2/catch.hpp>

#include <sstream>

#include "deep_profile_cli.hpp"
#include "llmprof/run_comparison.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr double kZA[] = {-1.26, -0.63, 0.0, 0.63, 1.26};
constexpr double kZB[] = {0.63, -1.26, 1.26, 0.0, -0.63};

std::string samples_json(double scale, double noise, const double (&z)[5], std::size_t count = 5) {
  std::ostringstream text;
  text.precision(17);
  text << "[";
  for (std::size_t i = 0; i < count; ++i) text << (i ? ", " : "") << scale * (1 + noise * z[i]);
  return text.str() + "]";
}

// A copy of the recorded b4 run whose stage 1 was repeated with these decode times.
fs::path make_run(const TempDir& temp, const std::string& name, const std::string& decode_samples) {
  const fs::path run = temp / name;
  fs::copy(data_path("runs/h100-decode-b4"), run, fs::copy_options::recursive);
  fs::create_directories(run / "stage1");
  llmprof::testing::write_file(
      run / "stage1/repeats.json",
      "{\"schema\": \"llmprof.repeats/1\", \"quantities\": {\"decode_s\": {\"samples\": " + decode_samples + "}}}");
  return run;
}

RunComparison gate(const fs::path& a, const fs::path& b, double limit_pct) {
  ComparisonOptions options;
  options.fail_if_slower_pct = limit_pct;
  auto comparison = compare_run_directories(a, b, options);
  REQUIRE(comparison.has_value());
  REQUIRE(comparison->noise_gate.has_value());
  return comparison.value();
}

std::string repeated(double value, std::size_t count) {
  std::ostringstream text;
  text.precision(17);
  text << "[";
  for (std::size_t i = 0; i < count; ++i) text << (i ? ", " : "") << value;
  return text.str() + "]";
}

// Replaces the first occurrence of `from` in a file of the run (a fixture edit that must take).
void edit_file(const fs::path& file, const std::string& from, const std::string& to) {
  std::string text = llmprof::testing::read_file(file);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  llmprof::testing::write_file(file, text);
}

// A run of the same workload on a machine without a GPU: nsys traced the NVTX ranges (wall times)
// but no kernel ran, so every stage has 0 ns of kernel time and report.json names no device.
fs::path make_gpu_less_run(const TempDir& temp, const std::string& name) {
  const fs::path run = make_run(temp, name, "[1.0]");
  edit_file(run / "env.json", "\"name\": \"NVIDIA H100 80GB HBM3\"", "\"name\": \"\"");  // no GPU named
  llmprof::testing::write_file(
      run / "analysis/report.json",
      R"({"schema": "llmprof.report/1", "device": null, "kernels": [], "warnings": [], "stages": [)"
      R"({"name": "generate", "domain": "", "parent": null, "wall_ns": 1461740715, "gpu_projection_ns": null,)"
      R"( "kernel_time_ns": 0, "kernel_instances": 0, "gpu_busy_fraction": null, "flop": null,)"
      R"( "achieved_flop_per_s": null, "mfu": null, "workload_mfu": null, "verdict": "no GPU kernels ran in this stage"},)"
      R"({"name": "decode", "domain": "", "parent": "generate", "wall_ns": 181471307, "gpu_projection_ns": null,)"
      R"( "kernel_time_ns": 0, "kernel_instances": 0, "gpu_busy_fraction": null, "flop": null,)"
      R"( "achieved_flop_per_s": null, "mfu": null, "workload_mfu": null, "verdict": "no GPU kernels ran in this stage"}]})");
  return run;
}

}  // namespace

TEST_CASE("a 5% slowdown under 1% noise is a regression beyond a 2% limit") {
  // statistics_expected.py: gate 5% slower, 1% noise margin=0.02: t=4.600391059 df=7.993287183
  // p_slower=0.000879201408; noise=0.01490161473
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA));
  const auto b = make_run(temp, "b", samples_json(1.05, 0.01, kZB));
  const auto comparison = gate(a, b, 2);
  const auto& noise = *comparison.noise_gate;
  CHECK(noise.verdict == NoiseVerdict::regression);
  CHECK(comparison.regression);
  REQUIRE(noise.quantities.size() == 1);
  CHECK(noise.quantities[0].quantity == "decode_s");
  CHECK(noise.quantities[0].slowdown_pct == Approx(5.0));
  CHECK(noise.quantities[0].p_slower == Approx(0.000879201408).epsilon(1e-6));
  CHECK(*noise.quantities[0].noise_pct == Approx(1.490161473).epsilon(1e-7));
  CHECK_THAT(noise.summary, Catch::StartsWith("regression: decode_s +5.0% (limit +2%, noise ±1.49%"));
  // The single-run stage deltas (the same b4 report twice: none) do not decide; the repeats do.
  REQUIRE(comparison.regression_reasons.size() == 1);
  CHECK(comparison.regression_reasons[0] == noise.summary);
}

TEST_CASE("the same 5% slowdown under 10% noise is inconclusive, with the noise stated") {
  // statistics_expected.py: gate 5% slower, 10% noise margin=0.02: p_slower=0.3288716132
  // p_faster=0.6711283868; noise=0.1490161473
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.10, kZA));
  const auto b = make_run(temp, "b", samples_json(1.05, 0.10, kZB));
  const auto comparison = gate(a, b, 2);
  const auto& noise = *comparison.noise_gate;
  CHECK(noise.verdict == NoiseVerdict::inconclusive);
  CHECK_FALSE(comparison.regression);
  CHECK(noise.quantities[0].p_slower == Approx(0.3288716132).epsilon(1e-6));
  CHECK(noise.quantities[0].p_not_slower == Approx(0.6711283868).epsilon(1e-6));
  REQUIRE(noise.quantities[0].noise_pct.has_value());
  CHECK(*noise.quantities[0].noise_pct == Approx(14.90161473).epsilon(1e-7));
  CHECK_THAT(noise.summary, Catch::StartsWith("inconclusive: noise ±14.9%: decode_s +5.0%"));
  CHECK_THAT(render_comparison_markdown(comparison), Catch::Contains("**Inconclusive**"));
}

TEST_CASE("an unchanged run under 1% noise is no regression beyond the noise") {
  // statistics_expected.py: gate unchanged, 1% noise margin=0.02: t=-3.143017409 p_faster=0.006874652493
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA));
  const auto b = make_run(temp, "b", samples_json(1.0, 0.01, kZB));
  const auto comparison = gate(a, b, 2);
  CHECK(comparison.noise_gate->verdict == NoiseVerdict::no_regression);
  CHECK(comparison.noise_gate->quantities[0].p_not_slower == Approx(0.006874652493).epsilon(1e-6));
  CHECK_FALSE(comparison.regression);
  CHECK_THAT(comparison_to_json(comparison), Catch::Contains("\"verdict\": \"no regression\""));
}

TEST_CASE("single runs say that they cannot tell noise from change, and the stage deltas gate") {
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA, 1));
  const auto b = make_run(temp, "b", samples_json(1.05, 0.01, kZB, 5));
  const auto comparison = gate(a, b, 2);
  CHECK(comparison.noise_gate->verdict == NoiseVerdict::single_run);
  CHECK_THAT(comparison.noise_gate->summary, Catch::Contains("cannot tell noise from change"));
  CHECK_FALSE(comparison.regression);  // the b4 stage times are the same in both copies
  CHECK_THAT(render_comparison_markdown(comparison), Catch::Contains("cannot tell noise from change"));
}

TEST_CASE("a limit so large that (1 + limit) * mean overflows is an answer, not an abort") {
  // A limit of 1e308% scales A's variance by 1e612: the test used to reach Boost.Math with nan degrees
  // of freedom and throw out of the process. B is 5% slower: nowhere near 1e308% slower.
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA));
  const auto b = make_run(temp, "b", samples_json(1.05, 0.01, kZB));
  for (const double limit : {1e308, 1e100}) {
    const auto comparison = gate(a, b, limit);
    REQUIRE(comparison.noise_gate->quantities.size() == 1);
    const auto& quantity = comparison.noise_gate->quantities[0];
    CHECK_FALSE(quantity.problem.has_value());
    CHECK(comparison.noise_gate->verdict == NoiseVerdict::no_regression);
    CHECK(quantity.p_not_slower < 1e-6);
    CHECK_FALSE(comparison.regression);
  }
}

TEST_CASE("identical repeats have no noise whatever their rounding: 0.1 s and 0.5 s agree") {
  // Three samples of 0.1 sum to 0.30000000000000004: the mean came out an ulp off, the spread ~1e-17,
  // and the gate said "inconclusive: noise ±0%" (exit 7) where samples of 0.5 said "no regression".
  // The counts are those at which the plain mean of the value is not the value (statistics_expected.py).
  TempDir temp;
  const std::pair<double, std::size_t> cases[] = {{0.1, 3}, {0.1, 6}, {0.5, 3}, {0.3, 10}, {1.1, 7}, {7.7, 9}};
  for (const auto& [value, count] : cases) {
    const auto a = make_run(temp, "a" + std::to_string(value) + "x" + std::to_string(count), repeated(value, count));
    const auto comparison = gate(a, a, 0);
    INFO(value << " x " << count);
    CHECK(comparison.noise_gate->verdict == NoiseVerdict::no_regression);
    REQUIRE(comparison.noise_gate->quantities.size() == 1);
    CHECK(*comparison.noise_gate->quantities[0].noise_pct == 0);
    CHECK_FALSE(comparison.regression);
  }
  // And a constant B above a constant A by more than the limit is a regression, by the means.
  const auto a = make_run(temp, "low", repeated(0.1, 5));
  const auto b = make_run(temp, "high", repeated(0.11, 5));
  CHECK(gate(a, b, 5).noise_gate->verdict == NoiseVerdict::regression);
  CHECK(gate(a, b, 20).noise_gate->verdict == NoiseVerdict::no_regression);
}

TEST_CASE("a repeated time that is not a duration > 0 is named, not weighed") {
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA));
  const auto b = make_run(temp, "b", "[1.0, -1.0, 1.0]");
  const auto comparison = gate(a, b, 2);
  CHECK(comparison.noise_gate->verdict == NoiseVerdict::single_run);
  CHECK_THAT(comparison.noise_gate->summary, Catch::Contains("B's decode_s sample 2 is -1, not a duration > 0"));
}

TEST_CASE("runs of different workloads or on different GPUs are compared with a loud warning") {
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA));
  const auto b = make_run(temp, "b", samples_json(1.0, 0.01, kZB));
  edit_file(b / "run.json", "\"--new-tokens\"", "\"--max-tokens\"");
  edit_file(b / "analysis/report.json", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB");
  const auto comparison = gate(a, b, 2);
  REQUIRE(comparison.unlike_runs.size() == 2);
  CHECK_THAT(comparison.unlike_runs[0], Catch::Contains("different workloads") && Catch::Contains("--max-tokens"));
  CHECK_THAT(comparison.unlike_runs[1],
             Catch::Contains("different GPUs (A: NVIDIA H100 80GB HBM3; B: NVIDIA A100-SXM4-40GB)"));
  CHECK_THAT(comparison.noise_gate->summary, Catch::Contains("WARNING: unlike runs"));
  CHECK_THAT(render_comparison_markdown(comparison), Catch::Contains("**WARNING: unlike runs.**"));
  CHECK_THAT(render_comparison_html(comparison), Catch::Contains("<strong>unlike runs</strong>"));
  CHECK_THAT(comparison_to_json(comparison), Catch::Contains("different GPUs"));
  // Like runs carry no warning.
  CHECK(gate(a, a, 2).unlike_runs.empty());
}

TEST_CASE("a run without a GPU compares with itself: 0 ns of kernel time on both sides is not missing") {
  TempDir temp;
  const auto a = make_gpu_less_run(temp, "cpu");
  ComparisonOptions options;
  options.fail_if_slower_pct = 0;
  auto comparison = compare_run_directories(a, a, options);
  REQUIRE(comparison.has_value());
  CHECK_FALSE(comparison->inconclusive);
  CHECK(comparison->inconclusive_reasons.empty());
  CHECK_FALSE(comparison->regression);
  // A GPU run against it: A's kernel time has no counterpart in B, which still cannot be judged.
  const auto gpu = make_run(temp, "gpu", "[1.0]");
  comparison = compare_run_directories(gpu, a, options);
  REQUIRE(comparison.has_value());
  CHECK(comparison->inconclusive);
  CHECK_THAT(comparison->unlike_runs.at(0), Catch::Contains("only A ran on a GPU"));
}

#ifdef LLMPROF_DEEP_PROFILE_EXE
TEST_CASE("deep-profile compare: an absurd limit, constant repeats and a GPU-less run against itself exit 0",
          "[cli]") {
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA));
  const auto b = make_run(temp, "b", samples_json(1.05, 0.01, kZB));
  const auto huge = llmprof::testing::run_deep_profile({"compare", a.string(), b.string(), "--fail-if-slower", "1e308"});
  CHECK(huge.exit_code == 0);
  CHECK_THAT(huge.err, Catch::Contains("no regression"));
  const auto tenth = make_run(temp, "tenth", repeated(0.1, 3));
  CHECK(llmprof::testing::run_deep_profile({"compare", tenth.string(), tenth.string(), "--fail-if-slower", "0"})
            .exit_code == 0);
  const auto cpu = make_gpu_less_run(temp, "cpu");
  CHECK(llmprof::testing::run_deep_profile({"compare", cpu.string(), cpu.string(), "--fail-if-slower", "0"})
            .exit_code == 0);
}

TEST_CASE("deep-profile compare: exit 5 regression, 7 inconclusive, 0 no regression", "[cli]") {
  TempDir temp;
  const auto a = make_run(temp, "a", samples_json(1.0, 0.01, kZA));
  const auto slower = make_run(temp, "slower", samples_json(1.05, 0.01, kZB));
  const auto noisy_a = make_run(temp, "noisy_a", samples_json(1.0, 0.10, kZA));
  const auto noisy_b = make_run(temp, "noisy_b", samples_json(1.05, 0.10, kZB));
  const auto same = make_run(temp, "same", samples_json(1.0, 0.01, kZB));
  auto status_of = [&](const fs::path& x, const fs::path& y) {
    return llmprof::testing::run_deep_profile({"compare", x.string(), y.string(), "--fail-if-slower", "2"}).exit_code;
  };
  CHECK(status_of(a, slower) == 5);
  CHECK(status_of(noisy_a, noisy_b) == 7);
  CHECK(status_of(a, same) == 0);
}
#endif
