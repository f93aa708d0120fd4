// Comparing two run directories: stage times and MFU, kernels matched by name, environment and
// configuration differences, and a regression verdict usable as a CI gate.
//
// Inputs are what load_run_report reads (report.json, run.json, env.json, config.toml), so two
// runs from different machines or days compare without their raw reports.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/choice.hpp"
#include "llmprof/exit_code.hpp"
#include "llmprof/export.hpp"
#include "llmprof/report.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

struct LLMPROF_API ComparisonOptions {
  // One-sided level of the noise gate's Welch tests (see NoiseGate).
  double noise_level = 0.05;
  // A kernel counts as faster/slower when its average launch time moved by more than this (percent).
  double kernel_threshold_pct = 5.0;
  // Regression gate: a stage whose wall time or kernel time grew by more than this (percent) from A
  // to B makes the comparison a regression. Unset: no gate.
  std::optional<double> fail_if_slower_pct;
};

// B relative to A. ratio = B / A; delta_pct = (B / A - 1) * 100. Unset when either side is missing
// or A is zero.
struct LLMPROF_API ValueDelta {
  std::optional<double> a;
  std::optional<double> b;
  std::optional<double> ratio;
  std::optional<double> delta_pct;
};
LLMPROF_API ValueDelta make_delta(const std::optional<double>& a, const std::optional<double>& b);

struct LLMPROF_API StageComparison {
  std::string name;  // "decode", or "domain:decode"
  bool in_a = false, in_b = false;
  ValueDelta wall_ns;
  ValueDelta gpu_projection_ns;
  ValueDelta kernel_time_ns;
  ValueDelta gpu_busy_fraction;
  ValueDelta mfu;
  ValueDelta mfu_workload;
};

enum class KernelChange { unchanged, faster, slower, added, removed };
inline std::span<const std::string_view> choice_names(KernelChange) noexcept {
  static constexpr std::string_view names[] = {"unchanged", "faster", "slower", "new", "gone"};
  return names;
}
inline const char* to_string(KernelChange change) noexcept { return choice_name(change).data(); }

struct LLMPROF_API KernelComparison {
  std::string name;
  KernelChange change = KernelChange::unchanged;
  ValueDelta avg_time_ns;  // per launch: what "faster/slower" is judged on
  ValueDelta total_time_ns;
  ValueDelta instances;
  ValueDelta share_of_total;
};

// One difference between the two runs' machines, tools or configurations.
struct LLMPROF_API SettingDifference {
  std::string key;  // "gpu[0].driver", "tools.ncu", "config.ncu.set"
  std::string a;    // "(absent)" when only one side has it
  std::string b;
};

// The regression gate on stage 1's repeated bare runs (stage1/repeats.json of both runs). For each
// time both runs measured at least twice (the workload's own prefill_s/decode_s when both have them,
// else the process wall_s), with limit L = --fail-if-slower / 100 and level alpha:
//   regression     Welch one-sided test rejects "mean_B <= (1 + L) mean_A" at alpha: slower by more
//                  than L, beyond the noise;
//   no_regression  the mirrored test rejects "mean_B >= (1 + L) mean_A": not slower by L, beyond the noise;
//   inconclusive   neither: the slowdown cannot be told from the noise (+-noise_pct, the 95% interval of
//                  the difference relative to A's mean).
// The gate's verdict is the worst over the quantities (regression > inconclusive > no_regression).
// single_run: a side has fewer than 2 runs of every time, so the gate falls back to the single-run
// stage times and says that it cannot tell noise from change.
enum class NoiseVerdict { no_regression, inconclusive, regression, single_run };
inline std::span<const std::string_view> choice_names(NoiseVerdict) noexcept {
  static constexpr std::string_view names[] = {"no regression", "inconclusive", "regression", "single run"};
  return names;
}
inline const char* to_string(NoiseVerdict verdict) noexcept { return choice_name(verdict).data(); }

struct LLMPROF_API QuantityVerdict {
  std::string quantity;  // "decode_s"
  std::size_t runs_a = 0, runs_b = 0;
  double mean_a = 0, mean_b = 0;
  double slowdown_pct = 0;  // (mean_b / mean_a - 1) * 100
  std::optional<double> noise_pct;
  double p_slower = 1;      // of "slower by more than the limit"
  double p_not_slower = 1;  // of "not slower by the limit"
  NoiseVerdict verdict = NoiseVerdict::inconclusive;
  // Why the t-test could not be evaluated (the verdict is then inconclusive); nullopt when it was, or
  // when both sides are constant and the means decided.
  std::optional<std::string> problem;
};

struct LLMPROF_API NoiseGate {
  double level = 0.05;  // one-sided alpha of each test
  NoiseVerdict verdict = NoiseVerdict::single_run;
  std::vector<QuantityVerdict> quantities;
  std::string summary;  // one line: "regression: decode_s +5.1% (limit 2%, noise +-1.1%, p = 0.0001)"
};

struct LLMPROF_API RunComparison {
  std::string run_a, run_b;  // run ids
  std::filesystem::path path_a, path_b;
  ComparisonOptions options;
  std::vector<StageComparison> stages;    // in A's order, then stages only in B
  std::vector<KernelComparison> kernels;  // by A's total time, then new kernels by B's total time
  std::vector<SettingDifference> environment;
  std::vector<SettingDifference> config;
  bool regression = false;
  std::vector<std::string> regression_reasons;  // "decode: wall time +10.0% (limit 5%)"
  // The gate could not judge: a time A measured has no counterpart in B (B measured nothing, e.g. a
  // CI machine without nsys), or nothing was measured at all. Never read as "no regression".
  bool inconclusive = false;
  std::vector<std::string> inconclusive_reasons;  // "decode: kernel time: B has none (A: 1.2 ms)"
  // The two runs measured different workloads (workload argv) or different GPUs (report.json device,
  // else env.json's first GPU): each a loud warning in every rendering and in the gate's summary, since
  // no regression verdict holds between unlike runs. Empty for like runs.
  std::vector<std::string> unlike_runs;
  // Set with fail_if_slower_pct. When its verdict is not single_run it decides `regression` alone: the
  // single-run stage deltas above are still listed but cannot be told from noise.
  std::optional<NoiseGate> noise_gate;
};

// The CI gate's decision on a comparison, and its exit status through exit_code_for(GateOutcome):
//   regression      `regression` is set (noise gate, or a single-run stage time past the limit);
//   cannot_compare  the gate was asked for and `inconclusive` is set (a time A measured is missing in B);
//   inconclusive    the noise gate could not tell the change from the noise of the repeats;
//   passed          otherwise, including a comparison without --fail-if-slower.
struct LLMPROF_API GateVerdict {
  GateOutcome outcome = GateOutcome::passed;
  std::optional<std::string> noise_summary;  // the noise gate's one line, when the gate ran
  std::vector<std::string> reasons;          // regression_reasons or inconclusive_reasons, per outcome
};
LLMPROF_API GateVerdict decide_gate(const RunComparison& comparison);
// What a CLI prints to stderr about the verdict, one line each: the noise summary, then
// "regression: <reason>" or "cannot compare: <reason>".
LLMPROF_API std::vector<std::string> gate_messages(const GateVerdict& verdict);

LLMPROF_API RunComparison compare_runs(const RunReportModel& a, const RunReportModel& b, const ComparisonOptions& options);
// Loads both directories with load_run_report; errors name the directory that failed. Thresholds
// that are negative or not finite (nan never compares greater, so the gate would never fire) are
// invalid_argument.
LLMPROF_API Result<RunComparison> compare_run_directories(const std::filesystem::path& a, const std::filesystem::path& b,
                                              const ComparisonOptions& options);

// Schema "llmprof.compare/2": {"schema","run_a","run_b","options","stages","kernels","environment",
// "config","regression","regression_reasons"}; indented, deterministic.
LLMPROF_API std::string comparison_to_json(const RunComparison& comparison);
LLMPROF_API std::string render_comparison_markdown(const RunComparison& comparison);
LLMPROF_API std::string render_comparison_html(const RunComparison& comparison);

}  // namespace llmprof
