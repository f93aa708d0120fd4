// Summaries of repeated measurements and Welch's t-test (see llmprof/sample_statistics.hpp).
#include "llmprof/sample_statistics.hpp"

#include <cmath>
#include <numeric>
#include <string>

#include <boost/math/distributions/students_t.hpp>

namespace llmprof {
namespace {

// The two-sided critical value t(1 - (1 - level) / 2, df).
double critical_t(double level, double degrees_of_freedom) {
  const boost::math::students_t distribution(degrees_of_freedom);
  return boost::math::quantile(distribution, 1 - (1 - level) / 2);
}

struct ScaledDifference {
  double difference = 0;  // mean_b - (1 + margin) * mean_a
  double variance = 0;    // of that difference's estimate
  double degrees_of_freedom = 0;
};

Result<ScaledDifference> scaled_difference(const SampleSummary& a, const SampleSummary& b, double margin) {
  if (a.count < 2 || b.count < 2) {
    return make_error(ErrorCode::invalid_argument,
                      "a t-test needs at least 2 samples on each side (A has " + std::to_string(a.count) + ", B has " +
                          std::to_string(b.count) + ")",
                      "repeat the measurement (run.repeats >= 2) for both runs");
  }
  const double scale = 1 + margin;
  const double va = scale * scale * a.standard_deviation * a.standard_deviation / static_cast<double>(a.count);
  const double vb = b.standard_deviation * b.standard_deviation / static_cast<double>(b.count);
  ScaledDifference result;
  result.difference = b.mean - scale * a.mean;
  result.variance = va + vb;
  if (result.variance <= 0) {
    return make_error(ErrorCode::invalid_argument, "both samples have zero variance: a t-test has nothing to weigh",
                      "compare the means directly");
  }
  result.degrees_of_freedom = result.variance * result.variance /
                              (va * va / static_cast<double>(a.count - 1) + vb * vb / static_cast<double>(b.count - 1));
  return result;
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
  summary.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  if (samples.size() < 2) return summary;
  double squares = 0;
  for (const double sample : samples) squares += (sample - summary.mean) * (sample - summary.mean);
  summary.standard_deviation = std::sqrt(squares / (n - 1));
  const double half_width = critical_t(confidence_level, n - 1) * summary.standard_deviation / std::sqrt(n);
  summary.confidence_low = summary.mean - half_width;
  summary.confidence_high = summary.mean + half_width;
  if (summary.mean != 0) {
    summary.relative_spread = half_width / std::fabs(summary.mean);
    summary.stable = *summary.relative_spread < stable_spread;
  }
  return summary;
}

Result<WelchTest> welch_slower_than(const SampleSummary& a, const SampleSummary& b, double margin) {
  auto difference = scaled_difference(a, b, margin);
  if (!difference) return difference.error();
  WelchTest test;
  test.t = difference->difference / std::sqrt(difference->variance);
  test.degrees_of_freedom = difference->degrees_of_freedom;
  test.p_value = boost::math::cdf(boost::math::complement(boost::math::students_t(test.degrees_of_freedom), test.t));
  return test;
}

Result<WelchTest> welch_faster_than(const SampleSummary& a, const SampleSummary& b, double margin) {
  auto difference = scaled_difference(a, b, margin);
  if (!difference) return difference.error();
  WelchTest test;
  test.t = difference->difference / std::sqrt(difference->variance);
  test.degrees_of_freedom = difference->degrees_of_freedom;
  test.p_value = boost::math::cdf(boost::math::students_t(test.degrees_of_freedom), test.t);
  return test;
}

std::optional<double> relative_difference_noise(const SampleSummary& a, const SampleSummary& b, double level) {
  if (a.count < 2 || b.count < 2 || a.mean == 0) return std::nullopt;
  if (a.standard_deviation == 0 && b.standard_deviation == 0) return 0.0;
  auto difference = scaled_difference(a, b, 0);
  if (!difference || a.mean == 0) return std::nullopt;
  return critical_t(level, difference->degrees_of_freedom) * std::sqrt(difference->variance) / std::fabs(a.mean);
}

}  // namespace llmprof
