// Summaries of repeated measurements and Welch's t-test (see llmprof/sample_statistics.hpp).
#include "llmprof/sample_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <string>

#include <boost/math/distributions/students_t.hpp>

#include "core/text.hpp"

namespace llmprof {
namespace {

// Boost.Math reports a parameter it cannot use (a degrees-of-freedom argument that is nan, zero or
// negative; a probability outside [0, 1]) by throwing std::domain_error, and an overflow by
// std::overflow_error. Every call into it goes through these two, so a bad input is an Error here and
// never an uncaught exception that aborts the process.
Result<double> critical_t(double level, double degrees_of_freedom) {
  if (!(degrees_of_freedom > 0) || !(level > 0 && level < 1)) {
    return make_error(ErrorCode::invalid_argument,
                      "the t quantile needs degrees of freedom > 0 and a level in (0, 1) (got df " +
                          detail::format_number(degrees_of_freedom) + ", level " + detail::format_number(level) + ")",
                      "check that both sides hold at least 2 finite samples");
  }
  try {
    const boost::math::students_t distribution(degrees_of_freedom);
    return boost::math::quantile(distribution, 1 - (1 - level) / 2);
  } catch (const std::exception& error) {
    return make_error(ErrorCode::invalid_argument, std::string("the t quantile could not be evaluated: ") + error.what(),
                      "check that both sides hold at least 2 finite samples");
  }
}

// P(T > t) (upper) or P(T < t) (lower) for Student's t with `degrees_of_freedom`.
Result<double> t_tail(double t, double degrees_of_freedom, bool upper) {
  if (std::isnan(t) || !(degrees_of_freedom > 0)) {
    return make_error(ErrorCode::invalid_argument,
                      "the t-test statistic is not a number (t " + detail::format_number(t) + ", df " +
                          detail::format_number(degrees_of_freedom) + ")",
                      "check that both sides hold finite samples and the limit is a finite percentage");
  }
  // An infinite t is a certain answer (a difference with no spread against it), not an error.
  if (std::isinf(t)) return (t > 0) == upper ? 0.0 : 1.0;
  try {
    const boost::math::students_t distribution(degrees_of_freedom);
    return upper ? boost::math::cdf(boost::math::complement(distribution, t)) : boost::math::cdf(distribution, t);
  } catch (const std::exception& error) {
    return make_error(ErrorCode::invalid_argument, std::string("the t distribution could not be evaluated: ") + error.what(),
                      "check that both sides hold finite samples and the limit is a finite percentage");
  }
}

Result<void> check_summary(const SampleSummary& summary, const char* side) {
  if (!std::isfinite(summary.mean) || !std::isfinite(summary.standard_deviation) || summary.standard_deviation < 0) {
    return make_error(ErrorCode::invalid_argument,
                      std::string("the summary of ") + side + " has a mean or standard deviation that is not a finite "
                                                              "number >= 0",
                      "summarize the samples with summarize_samples");
  }
  return {};
}

// mean_b - (1 + margin) * mean_a over its standard error, computed in units where neither side can
// overflow: a limit of 1e308% makes (1 + margin) * mean_a and its variance overflow a double, and
// inf / inf then gives nan degrees of freedom. Dividing both sides by max(1, 1 + margin), and the
// standard errors by the larger one, leaves t and the Welch-Satterthwaite degrees of freedom unchanged
// (both are scale-free) and keeps every intermediate finite.
struct ScaledDifference {
  double t = 0;
  double degrees_of_freedom = 0;
  double standard_error = 0;  // of mean_b - (1 + margin) * mean_a, in the units of the samples when margin <= 0
};

Result<ScaledDifference> scaled_difference(const SampleSummary& a, const SampleSummary& b, double margin) {
  if (a.count < 2 || b.count < 2) {
    return make_error(ErrorCode::invalid_argument,
                      "a t-test needs at least 2 samples on each side (A has " + std::to_string(a.count) + ", B has " +
                          std::to_string(b.count) + ")",
                      "repeat the measurement (run.repeats >= 2) for both runs");
  }
  if (!std::isfinite(margin) || margin <= -1) {
    return make_error(ErrorCode::invalid_argument,
                      "the margin must be a finite fraction > -1 (got " + detail::format_number(margin) + ")",
                      "pass the limit as a finite percentage, e.g. 5 for 5%");
  }
  if (auto checked = check_summary(a, "A"); !checked) return checked.error();
  if (auto checked = check_summary(b, "B"); !checked) return checked.error();
  const double scale = 1 + margin;
  const double unit = std::max(1.0, scale);
  const double error_a = (scale / unit) * a.standard_deviation / std::sqrt(static_cast<double>(a.count));
  const double error_b = (1 / unit) * b.standard_deviation / std::sqrt(static_cast<double>(b.count));
  const double larger = std::max(error_a, error_b);
  if (!(larger > 0)) {
    return make_error(ErrorCode::invalid_argument, "both samples have zero variance: a t-test has nothing to weigh",
                      "compare the means directly");
  }
  const double ra = error_a / larger, rb = error_b / larger;  // in [0, 1], one of them 1
  const double relative_variance = ra * ra + rb * rb;         // in [1, 2]
  ScaledDifference result;
  result.degrees_of_freedom =
      relative_variance * relative_variance / (std::pow(ra, 4) / static_cast<double>(a.count - 1) +
                                               std::pow(rb, 4) / static_cast<double>(b.count - 1));
  const double difference = b.mean / unit - (scale / unit) * a.mean;
  result.standard_error = larger * std::sqrt(relative_variance) * unit;
  result.t = (difference / larger) / std::sqrt(relative_variance);
  return result;
}

Result<WelchTest> welch_test(const SampleSummary& a, const SampleSummary& b, double margin, bool b_slower) {
  auto difference = scaled_difference(a, b, margin);
  if (!difference) return difference.error();
  auto p_value = t_tail(difference->t, difference->degrees_of_freedom, b_slower);
  if (!p_value) return p_value.error();
  WelchTest test;
  test.t = difference->t;
  test.degrees_of_freedom = difference->degrees_of_freedom;
  test.p_value = *p_value;
  return test;
}

// Samples that are all one value have no spread, but summing and dividing them can make a mean a few
// ulps away from that value (five samples of 0.1 sum to 0.5000000000000001), and the squared distances
// then give a standard deviation of about 1e-17 where there is none. Sums of n doubles carry a
// rounding error of at most about n * epsilon * sum |x|, so a standard deviation below that bound is
// rounding, not spread.
bool spread_is_rounding(double standard_deviation, const std::vector<double>& samples) {
  double largest = 0;
  for (const double sample : samples) largest = std::max(largest, std::fabs(sample));
  const double bound =
      4 * static_cast<double>(samples.size()) * std::numeric_limits<double>::epsilon() * largest;
  return standard_deviation <= bound;
}

}  // namespace

Result<SampleSummary> summarize_samples(const std::vector<double>& samples, double confidence_level,
                                        double stable_spread) {
  if (samples.empty()) {
    return make_error(ErrorCode::invalid_argument, "no samples to summarize", "measure at least once");
  }
  for (const double sample : samples) {
    if (!std::isfinite(sample)) {
      return make_error(ErrorCode::invalid_argument, "a sample is not a finite number",
                        "drop the failed measurement before summarizing");
    }
  }
  if (!(confidence_level > 0 && confidence_level < 1) || !(stable_spread >= 0)) {
    return make_error(ErrorCode::invalid_argument, "confidence level must be in (0, 1) and the stability bound >= 0",
                      "use e.g. 0.95 and 0.02");
  }
  SampleSummary summary;
  summary.count = samples.size();
  summary.confidence_level = confidence_level;
  const double n = static_cast<double>(samples.size());
  const auto [smallest, largest] = std::minmax_element(samples.begin(), samples.end());
  // All one value: that value exactly, with no spread (see spread_is_rounding).
  summary.mean = *smallest == *largest ? *smallest : std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  if (samples.size() >= 2 && *smallest != *largest) {
    double squares = 0;
    for (const double sample : samples) squares += (sample - summary.mean) * (sample - summary.mean);
    summary.standard_deviation = std::sqrt(squares / (n - 1));
    if (spread_is_rounding(summary.standard_deviation, samples)) summary.standard_deviation = 0;
  }
  if (!std::isfinite(summary.mean) || !std::isfinite(summary.standard_deviation)) {
    return make_error(ErrorCode::invalid_argument,
                      "the samples are too large to summarize: their sum or spread overflows a double",
                      "record the measurement in a unit that keeps it below about 1e300");
  }
  if (samples.size() < 2) return summary;
  auto critical = critical_t(confidence_level, n - 1);
  if (!critical) return critical.error();
  const double half_width = *critical * summary.standard_deviation / std::sqrt(n);
  summary.confidence_low = summary.mean - half_width;
  summary.confidence_high = summary.mean + half_width;
  if (summary.mean != 0) {
    summary.relative_spread = half_width / std::fabs(summary.mean);
    summary.stable = *summary.relative_spread < stable_spread;
  }
  return summary;
}

Result<WelchTest> welch_slower_than(const SampleSummary& a, const SampleSummary& b, double margin) {
  return welch_test(a, b, margin, true);
}

Result<WelchTest> welch_faster_than(const SampleSummary& a, const SampleSummary& b, double margin) {
  return welch_test(a, b, margin, false);
}

std::optional<double> relative_difference_noise(const SampleSummary& a, const SampleSummary& b, double level) {
  if (a.count < 2 || b.count < 2 || a.mean == 0) return std::nullopt;
  if (a.standard_deviation == 0 && b.standard_deviation == 0) return 0.0;
  auto difference = scaled_difference(a, b, 0);
  if (!difference) return std::nullopt;
  auto critical = critical_t(level, difference->degrees_of_freedom);
  if (!critical) return std::nullopt;
  return *critical * difference->standard_error / std::fabs(a.mean);
}

}  // namespace llmprof
