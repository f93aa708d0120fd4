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

#ifdef LLMPROF_DEEP_PROFILE_EXE
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
