// The statistics of stage 1's repeated bare runs: one SampleSummary per quantity, written to
// MAIN/stage1/repeats.json for the report and for `deep-profile compare --fail-if-slower`.
//
// Schema llmprof.repeats/1:
//   {"schema", "repeats": N, "confidence_level": 0.95, "stable_spread": 0.02,
//    "quantities": {"wall_s" | "prefill_s" | "decode_s": {"samples": [...], "count", "mean",
//                   "standard_deviation", "confidence_low", "confidence_high", "relative_spread", "stable"}}}
// Interval and spread are null for a single sample: one run cannot tell noise from change.
#include <boost/json.hpp>
#include <sstream>

#include "llmprof/sample_statistics.hpp"
#include "llmprof/workload_metrics.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {
namespace {

boost::json::value optional_number(const std::optional<double>& value) {
  if (!value) return nullptr;
  return *value;
}

boost::json::object summary_json(const std::vector<double>& samples, const SampleSummary& summary) {
  boost::json::array values;
  for (const double sample : samples) values.emplace_back(sample);
  return {{"samples", std::move(values)},
          {"count", summary.count},
          {"mean", summary.mean},
          {"standard_deviation", summary.standard_deviation},
          {"confidence_low", optional_number(summary.confidence_low)},
          {"confidence_high", optional_number(summary.confidence_high)},
          {"relative_spread", optional_number(summary.relative_spread)},
          {"stable", summary.stable}};
}

std::string describe(const std::string& quantity, const SampleSummary& summary) {
  std::ostringstream text;
  text.precision(4);
  text << quantity << " mean " << summary.mean << " s, sd " << summary.standard_deviation << " s over " << summary.count
       << " runs";
  if (summary.relative_spread) {
    text.precision(3);
    text << ", 95% CI +-" << *summary.relative_spread * 100 << "% (" << (summary.stable ? "stable" : "not stable")
         << ")";
  }
  return text.str();
}

}  // namespace

void add_repeat_sample(RepeatSamples& samples, const ProcessOutcome& outcome,
                       const std::filesystem::path& metrics_file) {
  samples["wall_s"].push_back(std::chrono::duration<double>(outcome.wall_time).count());
  // The workload's own timings exclude process start and model loading, so they are the quieter measure.
  auto metrics = load_workload_metrics(metrics_file);
  if (!metrics) return;
  if (metrics->prefill_s > 0) samples["prefill_s"].push_back(metrics->prefill_s);
  if (metrics->decode_s > 0) samples["decode_s"].push_back(metrics->decode_s);
}

void record_repeats(PipelineRun& run, const RepeatSamples& samples) {
  const std::size_t runs = samples.count("wall_s") ? samples.at("wall_s").size() : 0;
  boost::json::object quantities;
  for (const auto& [quantity, values] : samples) {
    // A quantity some runs lacked (a metrics file missing once) would mix populations: leave it out.
    if (values.size() != runs) {
      run.warn(Stage::workload, quantity + " was measured in " + std::to_string(values.size()) + " of " +
                                    std::to_string(runs) + " runs, so it is left out of the repeat statistics");
      continue;
    }
    auto summary = summarize_samples(values);
    if (!summary) {
      run.warn(Stage::workload, "no statistics for " + quantity + ": " + summary.error().describe());
      continue;
    }
    quantities[quantity] = summary_json(values, summary.value());
    if (runs > 1) run.say(Stage::workload, describe(quantity, summary.value()));
    if (runs > 1 && !summary->stable) {
      run.warn(Stage::workload, quantity + " is not stable over " + std::to_string(runs) +
                                    " runs (95% CI wider than +-" +
                                    std::to_string(static_cast<int>(default_stable_spread * 100)) +
                                    "% of the mean): compare such runs with care");
    }
  }
  const boost::json::object document = {{"schema", "llmprof.repeats/1"},
                                        {"repeats", runs},
                                        {"confidence_level", default_confidence_level},
                                        {"stable_spread", default_stable_spread},
                                        {"quantities", std::move(quantities)}};
  if (auto written = run.directory.write_json(RunLayout::stage1_repeats(), boost::json::serialize(document)); written) {
    run.stage_report(Stage::workload).artifacts.push_back(RunLayout::stage1_repeats().string());
  } else {
    run.warn(Stage::workload, written.error().describe());
  }
}

}  // namespace llmprof::detail
