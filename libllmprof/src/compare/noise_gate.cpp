// The repeats-based regression gate: Welch t-tests on stage 1's repeated runs (see NoiseGate).
#include "compare/noise_gate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/format.hpp"
#include "llmprof/sample_statistics.hpp"

namespace llmprof::detail {
namespace {

const ReportRepeatQuantity* find_quantity(const RunReportModel& model, const std::string& name) {
  for (const auto& quantity : model.repeats) {
    if (quantity.name == name && quantity.samples.size() >= 2) return &quantity;
  }
  return nullptr;
}

// The workload's own timings exclude process start and model loading; wall_s only when they are absent.
std::vector<std::string> gated_quantities(const RunReportModel& a, const RunReportModel& b) {
  std::vector<std::string> own;
  for (const char* name : {"prefill_s", "decode_s"}) {
    if (find_quantity(a, name) && find_quantity(b, name)) own.emplace_back(name);
  }
  if (!own.empty()) return own;
  if (find_quantity(a, "wall_s") && find_quantity(b, "wall_s")) return {"wall_s"};
  return {};
}

int severity(NoiseVerdict verdict) {
  switch (verdict) {
    case NoiseVerdict::no_regression:
      return 0;
    case NoiseVerdict::inconclusive:
      return 1;
    case NoiseVerdict::regression:
      return 2;
    case NoiseVerdict::single_run:
      return -1;
  }
  return -1;
}

std::string p_text(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", p);
  return text;
}

std::string describe(const QuantityVerdict& quantity, double limit_pct) {
  std::string text = quantity.quantity + " " + format_signed_percent(quantity.slowdown_pct) + " (limit +" +
                     format_number(limit_pct) + "%";
  if (quantity.noise_pct) text += ", noise ±" + format_number(*quantity.noise_pct) + "%";
  text += ", " + std::to_string(quantity.runs_a) + " vs " + std::to_string(quantity.runs_b) + " runs";
  if (quantity.verdict == NoiseVerdict::regression) text += ", p = " + p_text(quantity.p_slower);
  if (quantity.verdict == NoiseVerdict::no_regression) text += ", p = " + p_text(quantity.p_not_slower);
  if (quantity.problem) text += ", not tested: " + *quantity.problem;
  return text + ")";
}

QuantityVerdict judge_quantity(const std::string& name, const SampleSummary& a, const SampleSummary& b, double limit,
                               double level) {
  QuantityVerdict verdict;
  verdict.quantity = name;
  verdict.runs_a = a.count;
  verdict.runs_b = b.count;
  verdict.mean_a = a.mean;
  verdict.mean_b = b.mean;
  verdict.slowdown_pct = a.mean != 0 ? (b.mean / a.mean - 1) * 100 : 0;
  if (auto noise = relative_difference_noise(a, b)) verdict.noise_pct = *noise * 100;
  if (a.standard_deviation == 0 && b.standard_deviation == 0) {
    // Both sides constant (summarize_samples tells rounding from spread): no noise at all, so the
    // means decide, and "slower by more than the limit" is strict, as in the tests.
    verdict.p_slower = b.mean > (1 + limit) * a.mean ? 0 : 1;
    verdict.p_not_slower = 1 - verdict.p_slower;
  } else {
    auto slower = welch_slower_than(a, b, limit);
    auto not_slower = welch_faster_than(a, b, limit);
    if (!slower || !not_slower) {
      // The test could not be evaluated: say so rather than guess (the verdict stays inconclusive).
      verdict.problem = (!slower ? slower.error() : not_slower.error()).message;
      return verdict;
    }
    verdict.p_slower = slower->p_value;
    verdict.p_not_slower = not_slower->p_value;
  }
  verdict.verdict = verdict.p_slower < level       ? NoiseVerdict::regression
                    : verdict.p_not_slower < level ? NoiseVerdict::no_regression
                                                   : NoiseVerdict::inconclusive;
  return verdict;
}

// Repeated times are durations: a sample that is not a finite number > 0 is a broken measurement,
// and the gate names it instead of weighing it.
std::optional<std::string> why_not_durations(const std::string& side, const ReportRepeatQuantity& quantity) {
  for (std::size_t i = 0; i < quantity.samples.size(); ++i) {
    const double sample = quantity.samples[i];
    if (!std::isfinite(sample) || sample <= 0) {
      return side + "'s " + quantity.name + " sample " + std::to_string(i + 1) + " is " + format_number(sample) +
             ", not a duration > 0";
    }
  }
  return std::nullopt;
}

}  // namespace

NoiseGate judge_noise(const RunReportModel& a, const RunReportModel& b, double limit_pct, double level) {
  NoiseGate gate;
  gate.level = level;
  const auto names = gated_quantities(a, b);
  if (names.empty()) {
    gate.summary =
        "single runs: a run has fewer than 2 repeats of a time both measured, so this gate cannot tell noise "
        "from change (set run.repeats to 5 or more for both runs)";
    return gate;
  }
  gate.verdict = NoiseVerdict::no_regression;
  std::vector<std::string> unusable;
  for (const auto& name : names) {
    const auto* quantity_a = find_quantity(a, name);
    const auto* quantity_b = find_quantity(b, name);
    auto why = why_not_durations("A", *quantity_a);
    if (!why) why = why_not_durations("B", *quantity_b);
    auto summary_a = summarize_samples(quantity_a->samples);
    auto summary_b = summarize_samples(quantity_b->samples);
    if (!why && !summary_a) why = "A's " + name + ": " + summary_a.error().message;
    if (!why && !summary_b) why = "B's " + name + ": " + summary_b.error().message;
    if (why) {
      unusable.push_back(*why);  // load_run_report let it through; the gate does not weigh it
      continue;
    }
    gate.quantities.push_back(judge_quantity(name, *summary_a, *summary_b, limit_pct / 100, level));
    if (severity(gate.quantities.back().verdict) > severity(gate.verdict))
      gate.verdict = gate.quantities.back().verdict;
  }
  if (gate.quantities.empty()) {
    gate.verdict = NoiseVerdict::single_run;
    gate.summary = "no noise-aware verdict: " + join(unusable, "; ");
    return gate;
  }
  std::string details;
  for (const auto& quantity : gate.quantities) details += (details.empty() ? "" : "; ") + describe(quantity, limit_pct);
  double widest_noise = 0;
  for (const auto& quantity : gate.quantities) widest_noise = std::max(widest_noise, quantity.noise_pct.value_or(0));
  std::string test = " (Welch t-test, one-sided level " + format_number(level) + ")";
  if (!unusable.empty()) test += "; not judged: " + join(unusable, "; ");
  switch (gate.verdict) {
    case NoiseVerdict::regression:
      gate.summary = "regression: " + details + test;
      break;
    case NoiseVerdict::no_regression:
      gate.summary = "no regression: " + details + test;
      break;
    case NoiseVerdict::inconclusive:
      gate.summary = "inconclusive: noise ±" + format_number(widest_noise) + "%: " + details + test;
      break;
    case NoiseVerdict::single_run:
      break;
  }
  return gate;
}

}  // namespace llmprof::detail
