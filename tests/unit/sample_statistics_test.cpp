// summarize_samples and the Welch tests against tests/tools/statistics_expected.py (Python statistics
// module + Student's t from its density by Simpson's rule, checked against a printed t-table).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "llmprof/sample_statistics.hpp"

using namespace llmprof;

namespace {

SampleSummary summarize(const std::vector<double>& samples) {
  auto summary = summarize_samples(samples);
  REQUIRE(summary.has_value());
  return summary.value();
}

}  // namespace

TEST_CASE("five decode times: mean, sd, 95% interval, spread, stable") {
  // statistics_expected.py: decode A: n=5 mean=4.21 sd=0.02738612788 t=2.776445105
  // ci=[4.175995631, 4.244004369] spread=0.008077047276
  const auto a = summarize({4.21, 4.18, 4.25, 4.19, 4.22});
  CHECK(a.count == 5);
  CHECK(a.mean == Approx(4.21).epsilon(1e-12));
  CHECK(a.standard_deviation == Approx(0.02738612788).epsilon(1e-9));
  REQUIRE(a.confidence_low.has_value());
  CHECK(*a.confidence_low == Approx(4.175995631).epsilon(1e-9));
  CHECK(*a.confidence_high == Approx(4.244004369).epsilon(1e-9));
  CHECK(*a.relative_spread == Approx(0.008077047276).epsilon(1e-8));
  CHECK(a.stable);  // 0.81% < 2%
}

TEST_CASE("few or scattered samples are not stable; one sample has no interval") {
  // statistics_expected.py: two samples: t=12.70620474 ci=[-1.706204736, 23.70620474] spread=1.155109521;
  // ten samples: t=2.262157163 ci=[3.33414941, 7.66585059] spread=0.3937910163
  const auto two = summarize({10.0, 12.0});
  CHECK(*two.confidence_low == Approx(-1.706204736).epsilon(1e-9));
  CHECK(*two.confidence_high == Approx(23.70620474).epsilon(1e-9));
  CHECK(*two.relative_spread == Approx(1.155109521).epsilon(1e-8));
  CHECK_FALSE(two.stable);
  const auto ten = summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(*ten.confidence_low == Approx(3.33414941).epsilon(1e-9));
  CHECK(*ten.relative_spread == Approx(0.3937910163).epsilon(1e-8));
  const auto one = summarize({3.5});
  CHECK(one.mean == 3.5);
  CHECK(one.standard_deviation == 0);
  CHECK_FALSE(one.confidence_low.has_value());
  CHECK_FALSE(one.relative_spread.has_value());
  CHECK_FALSE(one.stable);
}

TEST_CASE("bad samples and levels are errors") {
  CHECK(summarize_samples({}).error().code == ErrorCode::invalid_argument);
  CHECK_FALSE(summarize_samples({1.0, std::numeric_limits<double>::quiet_NaN()}).has_value());
  CHECK_FALSE(summarize_samples({1.0, std::numeric_limits<double>::infinity()}).has_value());
  CHECK_FALSE(summarize_samples({1.0, 2.0}, 1.0).has_value());
  CHECK_FALSE(summarize_samples({1.0, 2.0}, 0.95, -0.1).has_value());
}

TEST_CASE("Welch: a 5% slower B is slower beyond 2%, and not slower by 8%") {
  // statistics_expected.py: A vs B margin=0.02: t=6.640624247 df=7.74060418 p_slower=9.412276572e-05;
  // margin=0.0: t=11.03620733 df=7.68598456 p_slower=2.76042277e-06; margin=0.08: t=-6.132645236
  // df=7.87243593 p_faster=0.0001490041767; noise=0.01069716717
  const auto a = summarize({4.21, 4.18, 4.25, 4.19, 4.22});
  const auto b = summarize({4.43, 4.40, 4.46, 4.38, 4.45});
  auto beyond_2 = welch_slower_than(a, b, 0.02);
  REQUIRE(beyond_2.has_value());
  CHECK(beyond_2->t == Approx(6.640624247).epsilon(1e-8));
  CHECK(beyond_2->degrees_of_freedom == Approx(7.74060418).epsilon(1e-8));
  CHECK(beyond_2->p_value == Approx(9.412276572e-05).epsilon(1e-6));
  auto plain = welch_slower_than(a, b, 0.0);
  CHECK(plain->t == Approx(11.03620733).epsilon(1e-8));
  CHECK(plain->degrees_of_freedom == Approx(7.68598456).epsilon(1e-8));
  CHECK(plain->p_value == Approx(2.76042277e-06).epsilon(1e-5));
  auto under_8 = welch_faster_than(a, b, 0.08);
  CHECK(under_8->t == Approx(-6.132645236).epsilon(1e-8));
  CHECK(under_8->p_value == Approx(0.0001490041767).epsilon(1e-6));
  CHECK(welch_slower_than(a, b, 0.08)->p_value == Approx(1 - 0.0001490041767).epsilon(1e-9));
  REQUIRE(relative_difference_noise(a, b).has_value());
  CHECK(*relative_difference_noise(a, b) == Approx(0.01069716717).epsilon(1e-8));
}

TEST_CASE("Welch needs two samples a side and some variance") {
  const auto a = summarize({1.0, 1.0, 1.0});
  const auto single = summarize({1.0});
  CHECK_FALSE(welch_slower_than(a, single, 0).has_value());
  CHECK_FALSE(welch_slower_than(a, a, 0).has_value());  // both constant: nothing to weigh
  CHECK(relative_difference_noise(a, a) == 0.0);
  CHECK_FALSE(relative_difference_noise(a, single).has_value());
}

TEST_CASE("identical samples have no spread, whatever summing them rounds to") {
  // statistics_expected.py: a plain mean of n copies is not the value for 0.1 [3, 6, 7, 8, 9, 10],
  // 0.3 [10], 1.1 [6..10], 7.7 [7..10]; three 0.1 sum to 0.30000000000000004, so the mean was an ulp
  // off and the spread ~1e-17 instead of 0.
  const std::pair<double, std::size_t> cases[] = {{0.1, 3}, {0.1, 6}, {0.5, 3}, {0.3, 10}, {1.1, 7}, {7.7, 9}};
  for (const auto& [value, count] : cases) {
    const auto constant = summarize(std::vector<double>(count, value));
    INFO(value << " x " << count);
    CHECK(constant.mean == value);
    CHECK(constant.standard_deviation == 0);
    CHECK(*constant.relative_spread == 0);
  }
}

TEST_CASE("Welch with a margin whose scaled variance overflows a double stays finite") {
  // statistics_expected.py: A vs B margin=1e+306: t=-343.7450606 df=4. (1 + 1e306)^2 * var_a is about
  // 1e608: computed directly, the degrees of freedom were inf / inf = nan and Boost.Math threw.
  const auto a = summarize({4.21, 4.18, 4.25, 4.19, 4.22});
  const auto b = summarize({4.43, 4.40, 4.46, 4.38, 4.45});
  auto slower = welch_slower_than(a, b, 1e306);
  REQUIRE(slower.has_value());
  CHECK(slower->t == Approx(-343.7450606).epsilon(1e-8));
  CHECK(slower->degrees_of_freedom == Approx(4).epsilon(1e-12));
  CHECK(slower->p_value == Approx(1.0));
  auto faster = welch_faster_than(a, b, 1e306);
  REQUIRE(faster.has_value());
  CHECK(faster->p_value < 1e-6);
}

TEST_CASE("inputs the tests cannot use are errors, never exceptions") {
  const auto a = summarize({4.21, 4.18, 4.25, 4.19, 4.22});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(welch_slower_than(a, a, nan).error().code == ErrorCode::invalid_argument);
  CHECK(welch_faster_than(a, a, std::numeric_limits<double>::infinity()).error().code == ErrorCode::invalid_argument);
  CHECK_FALSE(welch_slower_than(a, a, -1).has_value());
  SampleSummary broken = a;
  broken.mean = nan;
  CHECK_FALSE(welch_slower_than(broken, a, 0).has_value());
  CHECK_FALSE(relative_difference_noise(broken, a).has_value());
  broken = a;
  broken.standard_deviation = -1;
  CHECK_FALSE(welch_faster_than(a, broken, 0).has_value());
  // Samples whose sum overflows: no infinite mean handed on.
  auto huge = summarize_samples({1e308, 1.5e308, 1.7e308});
  REQUIRE_FALSE(huge.has_value());
  CHECK_THAT(huge.error().message, Catch::Contains("too large"));
}
