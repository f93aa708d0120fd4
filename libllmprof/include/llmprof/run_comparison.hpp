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

#include "llmprof/report.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

struct ComparisonOptions {
  // A kernel counts as faster/slower when its average launch time moved by more than this (percent).
  double kernel_threshold_pct = 5.0;
  // Regression gate: a stage whose wall time or kernel time grew by more than this (percent) from A
  // to B makes the comparison a regression. Unset: no gate.
  std::optional<double> fail_if_slower_pct;
};

// B relative to A. ratio = B / A; delta_pct = (B / A - 1) * 100. Unset when either side is missing
// or A is zero.
struct ValueDelta {
  std::optional<double> a;
  std::optional<double> b;
  std::optional<double> ratio;
  std::optional<double> delta_pct;
};
ValueDelta make_delta(const std::optional<double>& a, const std::optional<double>& b);

struct StageComparison {
  std::string name;          // "decode", or "domain:decode"
  bool in_a = false, in_b = false;
  ValueDelta wall_ns;
  ValueDelta gpu_projection_ns;
  ValueDelta kernel_time_ns;
  ValueDelta gpu_busy_fraction;
  ValueDelta mfu;
  ValueDelta mfu_workload;
};

enum class KernelChange { unchanged, faster, slower, added, removed };
const char* to_string(KernelChange change) noexcept;  // "unchanged", "faster", "slower", "new", "gone"

struct KernelComparison {
  std::string name;
  KernelChange change = KernelChange::unchanged;
  ValueDelta avg_time_ns;    // per launch: what "faster/slower" is judged on
  ValueDelta total_time_ns;
  ValueDelta instances;
  ValueDelta share_of_total;
};

// One difference between the two runs' machines, tools or configurations.
struct SettingDifference {
  std::string key;   // "gpu[0].driver", "tools.ncu", "config.ncu.set"
  std::string a;     // "(absent)" when only one side has it
  std::string b;
};

struct RunComparison {
  std::string run_a, run_b;        // run ids
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
};

RunComparison compare_runs(const RunReportModel& a, const RunReportModel& b, const ComparisonOptions& options);
// Loads both directories with load_run_report; errors name the directory that failed. Thresholds
// that are negative or not finite (nan never compares greater, so the gate would never fire) are
// invalid_argument.
Result<RunComparison> compare_run_directories(const std::filesystem::path& a, const std::filesystem::path& b,
                                              const ComparisonOptions& options);

// Schema "llmprof.compare/2": {"schema","run_a","run_b","options","stages","kernels","environment",
// "config","regression","regression_reasons"}; indented, deterministic.
std::string comparison_to_json(const RunComparison& comparison);
std::string render_comparison_markdown(const RunComparison& comparison);
std::string render_comparison_html(const RunComparison& comparison);

}  // namespace llmprof
