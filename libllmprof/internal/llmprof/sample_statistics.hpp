// Repeated measurements of one quantity (e.g. the workload's decode time over N bare runs): mean,
// standard deviation, a Student-t confidence interval, the relative spread and a stability flag; and
// the Welch t-test that the regression gate uses to tell a slowdown from noise. The t distribution
// comes from Boost.Math (header-only), not from hand-written tables.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

// Defaults: a 95% interval, and "stable" when its half-width is under 2% of the mean (the bar:
// the host we measured moved about +-15% between runs, so 2% is the level at which a 5% change shows).
inline constexpr double default_confidence_level = 0.95;
inline constexpr double default_stable_spread = 0.02;

struct SampleSummary {
  std::size_t count = 0;
  double mean = 0;
  double standard_deviation = 0;  // sample standard deviation (n - 1); 0 for a single sample
  double confidence_level = default_confidence_level;
  // mean -+ t(1 - (1 - level) / 2, n - 1) * sd / sqrt(n); nullopt for fewer than 2 samples.
  std::optional<double> confidence_low, confidence_high;
  // Half-width of the interval relative to the mean ("noise +-X%" as a fraction); nullopt for fewer
  // than 2 samples or a zero mean.
  std::optional<double> relative_spread;
  bool stable = false;  // relative_spread < the stability bound (never for fewer than 2 samples)
};

// Errors (invalid_argument): no samples, a non-finite sample, a level outside (0, 1), a negative bound.
Result<SampleSummary> summarize_samples(const std::vector<double>& samples,
                                        double confidence_level = default_confidence_level,
                                        double stable_spread = default_stable_spread);

// Welch's t-test of "B is more than `margin` slower than A": H0 mean_b <= (1 + margin) * mean_a against
// H1 mean_b > (1 + margin) * mean_a, without assuming equal variances. The threshold scales A, so its
// variance enters as (1 + margin)^2 * var_a / n_a, and the degrees of freedom are Welch-Satterthwaite's.
struct WelchTest {
  double t = 0;
  double degrees_of_freedom = 0;
  double p_value = 1;  // one-sided, for H1 above
};
// With margin m, p_value(b_slower_than(a, m)) < alpha says "slower by more than m, beyond the noise";
// p_value of the mirrored question (welch_faster_than) < alpha says "not slower by m, beyond the noise".
// Errors: fewer than 2 samples on a side, both variances zero with equal thresholds (nothing to test).
Result<WelchTest> welch_slower_than(const SampleSummary& a, const SampleSummary& b, double margin);
// H1 mean_b < (1 + margin) * mean_a.
Result<WelchTest> welch_faster_than(const SampleSummary& a, const SampleSummary& b, double margin);

// Half-width of the `level` confidence interval of mean_b - mean_a (Welch), relative to mean_a: the
// "noise +-X%" a comparison of the two can resolve. nullopt when a side has fewer than 2 samples.
std::optional<double> relative_difference_noise(const SampleSummary& a, const SampleSummary& b,
                                                double level = default_confidence_level);

}  // namespace llmprof
