// compare_runs: B relative to A (see run_comparison.hpp).
#include "llmprof/run_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "compare/noise_gate.hpp"
#include "core/format.hpp"

namespace llmprof {
namespace {

using detail::as_double;

std::string stage_key(const ReportStage& stage) {
  return stage.domain.empty() ? stage.name : stage.domain + ":" + stage.name;
}

StageComparison compare_stage(const std::string& name, const ReportStage* a, const ReportStage* b) {
  StageComparison result;
  result.name = name;
  result.in_a = a != nullptr;
  result.in_b = b != nullptr;
  auto pick = [](const ReportStage* stage, auto member) { return stage ? member(*stage) : std::optional<double>(); };
  result.wall_ns = make_delta(pick(a, [](const ReportStage& s) { return as_double(s.wall_ns); }),
                              pick(b, [](const ReportStage& s) { return as_double(s.wall_ns); }));
  result.gpu_projection_ns = make_delta(pick(a, [](const ReportStage& s) { return as_double(s.gpu_projection_ns); }),
                                        pick(b, [](const ReportStage& s) { return as_double(s.gpu_projection_ns); }));
  result.kernel_time_ns = make_delta(pick(a, [](const ReportStage& s) { return as_double(s.kernel_time_ns); }),
                                     pick(b, [](const ReportStage& s) { return as_double(s.kernel_time_ns); }));
  result.gpu_busy_fraction = make_delta(pick(a, [](const ReportStage& s) { return s.gpu_busy_fraction; }),
                                        pick(b, [](const ReportStage& s) { return s.gpu_busy_fraction; }));
  result.mfu = make_delta(pick(a, [](const ReportStage& s) { return s.mfu; }),
                          pick(b, [](const ReportStage& s) { return s.mfu; }));
  result.mfu_workload = make_delta(pick(a, [](const ReportStage& s) { return s.mfu_workload; }),
                                   pick(b, [](const ReportStage& s) { return s.mfu_workload; }));
  return result;
}

KernelComparison compare_kernel(const std::string& name, const ReportKernel* a, const ReportKernel* b,
                                double threshold) {
  KernelComparison result;
  result.name = name;
  result.avg_time_ns = make_delta(a ? a->avg_time_ns : std::nullopt, b ? b->avg_time_ns : std::nullopt);
  result.total_time_ns =
      make_delta(a ? as_double(a->total_time_ns) : std::nullopt, b ? as_double(b->total_time_ns) : std::nullopt);
  result.instances = make_delta(a ? as_double(a->instances) : std::nullopt, b ? as_double(b->instances) : std::nullopt);
  result.share_of_total = make_delta(a ? a->share_of_total : std::nullopt, b ? b->share_of_total : std::nullopt);
  if (a == nullptr) {
    result.change = KernelChange::added;
  } else if (b == nullptr) {
    result.change = KernelChange::removed;
  } else if (result.avg_time_ns.delta_pct && *result.avg_time_ns.delta_pct > threshold) {
    result.change = KernelChange::slower;
  } else if (result.avg_time_ns.delta_pct && *result.avg_time_ns.delta_pct < -threshold) {
    result.change = KernelChange::faster;
  }
  return result;
}

void add_difference(std::vector<SettingDifference>& out, const std::string& key, const std::optional<std::string>& a,
                    const std::optional<std::string>& b) {
  if (a == b) return;
  out.push_back({key, a.value_or("(absent)"), b.value_or("(absent)")});
}

std::vector<SettingDifference> compare_environment(const RunReportModel& a, const RunReportModel& b) {
  std::vector<SettingDifference> differences;
  if (!a.environment.present || !b.environment.present) {
    add_difference(differences, "env.json",
                   a.environment.present ? std::optional<std::string>("present") : std::nullopt,
                   b.environment.present ? std::optional<std::string>("present") : std::nullopt);
  }
  const std::size_t gpus = std::max(a.environment.gpus.size(), b.environment.gpus.size());
  for (std::size_t i = 0; i < gpus; ++i) {
    const GpuRecord* ga = i < a.environment.gpus.size() ? &a.environment.gpus[i] : nullptr;
    const GpuRecord* gb = i < b.environment.gpus.size() ? &b.environment.gpus[i] : nullptr;
    const std::string prefix = "gpu[" + std::to_string(i) + "].";
    add_difference(differences, prefix + "name", ga ? std::optional(ga->name) : std::nullopt,
                   gb ? std::optional(gb->name) : std::nullopt);
    add_difference(differences, prefix + "driver", ga ? std::optional(ga->driver) : std::nullopt,
                   gb ? std::optional(gb->driver) : std::nullopt);
    add_difference(differences, prefix + "memory_mib",
                   ga ? std::optional(std::to_string(ga->memory_mib)) : std::nullopt,
                   gb ? std::optional(std::to_string(gb->memory_mib)) : std::nullopt);
  }
  std::map<std::string, std::pair<std::optional<std::string>, std::optional<std::string>>> tools;
  for (const auto& [tool, version] : a.environment.tool_versions) tools[tool].first = version;
  for (const auto& [tool, version] : b.environment.tool_versions) tools[tool].second = version;
  for (const auto& [tool, versions] : tools)
    add_difference(differences, "tools." + tool, versions.first, versions.second);
  add_difference(differences, "device (report.json)", a.device.name, b.device.name);
  return differences;
}

std::vector<SettingDifference> compare_config(const RunReportModel& a, const RunReportModel& b) {
  std::map<std::string, std::pair<std::optional<std::string>, std::optional<std::string>>> keys;
  for (const auto& [key, value] : a.config) keys[key].first = value;
  for (const auto& [key, value] : b.config) keys[key].second = value;
  std::vector<SettingDifference> differences;
  for (const auto& [key, values] : keys) add_difference(differences, "config." + key, values.first, values.second);
  return differences;
}

// Why a measure of A cannot be judged in B, or nullopt when it can (or A did not measure it).
// Both runs lacking the same figure is not a failure to compare: a run without a GPU measures 0 ns of
// kernel time in every stage, and so does its rerun; the figure is left out of the gate (neither judged
// nor missing), and the stages' wall times decide. Only a figure A measured and B lacks, or one that
// grew from 0 ns in A, cannot be judged.
std::optional<std::string> why_not_comparable(const ValueDelta& delta) {
  if (!delta.a || delta.delta_pct) return std::nullopt;
  if (*delta.a == 0 && delta.b && *delta.b == 0) return std::nullopt;
  if (!delta.b) return std::string("B has none (A: ") + detail::format_number(*delta.a) + " ns)";
  return std::string("A is ") + detail::format_number(*delta.a) + " ns and B " + detail::format_number(*delta.b) +
         " ns, so no relative change exists";
}

// The GPU a run measured: report.json's device, else env.json's first GPU; "" when neither says.
std::string measured_gpu(const RunReportModel& model) {
  if (!model.device.name.empty()) return model.device.name;
  return model.environment.gpus.empty() ? std::string() : model.environment.gpus.front().name;
}

// A comparison of two different workloads, or of one workload on two different GPUs, measures the
// difference between them, not a change of one: its deltas are real but no regression verdict holds.
std::vector<std::string> unlike_runs(const RunReportModel& a, const RunReportModel& b) {
  std::vector<std::string> warnings;
  if (!a.workload_argv.empty() && !b.workload_argv.empty() && a.workload_argv != b.workload_argv) {
    warnings.push_back("the runs measured different workloads (A: " + detail::join(a.workload_argv, " ") +
                       "; B: " + detail::join(b.workload_argv, " ") + ")");
  }
  const std::string gpu_a = measured_gpu(a), gpu_b = measured_gpu(b);
  if (!gpu_a.empty() && !gpu_b.empty() && gpu_a != gpu_b) {
    warnings.push_back("the runs measured different GPUs (A: " + gpu_a + "; B: " + gpu_b + ")");
  } else if (gpu_a.empty() != gpu_b.empty()) {
    warnings.push_back(std::string("only ") + (gpu_a.empty() ? "B" : "A") + " ran on a GPU (" +
                       (gpu_a.empty() ? gpu_b : gpu_a) + ")");
  }
  return warnings;
}

void check_regression(RunComparison& comparison, const RunReportModel& a, const RunReportModel& b) {
  if (!comparison.options.fail_if_slower_pct) return;
  const double limit = *comparison.options.fail_if_slower_pct;
  comparison.noise_gate = detail::judge_noise(a, b, limit, comparison.options.noise_level);
  if (!comparison.unlike_runs.empty()) {
    comparison.noise_gate->summary +=
        " — WARNING: unlike runs, the verdict compares two different things: " + detail::join(comparison.unlike_runs, "; ");
  }
  if (comparison.noise_gate->verdict != NoiseVerdict::single_run) {
    comparison.regression = comparison.noise_gate->verdict == NoiseVerdict::regression;
    if (comparison.regression) comparison.regression_reasons.push_back(comparison.noise_gate->summary);
    return;
  }
  std::size_t judged = 0;
  for (const auto& stage : comparison.stages) {
    const std::pair<const char*, const ValueDelta*> measures[] = {{"wall time", &stage.wall_ns},
                                                                  {"kernel time", &stage.kernel_time_ns}};
    for (const auto& [what, delta] : measures) {
      if (auto why = why_not_comparable(*delta)) {
        comparison.inconclusive_reasons.push_back(stage.name + ": " + what + ": " + *why);
        continue;
      }
      if (!delta->delta_pct) continue;
      ++judged;
      if (*delta->delta_pct > limit) {
        comparison.regression = true;
        comparison.regression_reasons.push_back(stage.name + ": " + what + " " +
                                                detail::format_signed_percent(*delta->delta_pct) + " (limit +" +
                                                detail::format_number(limit) + "%)");
      }
    }
  }
  if (judged == 0 && comparison.inconclusive_reasons.empty()) {
    comparison.inconclusive_reasons.push_back(
        "no stage has a wall or kernel time in both runs: there is nothing to gate on");
  }
  comparison.inconclusive = !comparison.inconclusive_reasons.empty();
}

}  // namespace

ValueDelta make_delta(const std::optional<double>& a, const std::optional<double>& b) {
  ValueDelta delta{a, b, std::nullopt, std::nullopt};
  if (a && b && *a != 0) {
    delta.ratio = *b / *a;
    delta.delta_pct = (*b / *a - 1) * 100;
  }
  return delta;
}

GateVerdict decide_gate(const RunComparison& comparison) {
  GateVerdict verdict;
  if (comparison.noise_gate) verdict.noise_summary = comparison.noise_gate->summary;
  if (comparison.regression) {
    verdict.outcome = GateOutcome::regression;
    verdict.reasons = comparison.regression_reasons;
  } else if (comparison.options.fail_if_slower_pct && comparison.inconclusive) {
    verdict.outcome = GateOutcome::cannot_compare;
    verdict.reasons = comparison.inconclusive_reasons;
  } else if (comparison.noise_gate && comparison.noise_gate->verdict == NoiseVerdict::inconclusive) {
    verdict.outcome = GateOutcome::inconclusive;
  }
  return verdict;
}

std::vector<std::string> gate_messages(const GateVerdict& verdict) {
  std::vector<std::string> lines;
  if (verdict.noise_summary) lines.push_back(*verdict.noise_summary);
  for (const auto& reason : verdict.reasons) lines.push_back(std::string(to_string(verdict.outcome)) + ": " + reason);
  return lines;
}

RunComparison compare_runs(const RunReportModel& a, const RunReportModel& b, const ComparisonOptions& options) {
  RunComparison comparison;
  comparison.run_a = a.run_id;
  comparison.run_b = b.run_id;
  comparison.path_a = a.main_directory;
  comparison.path_b = b.main_directory;
  comparison.options = options;
  auto find_stage = [](const RunReportModel& model, const std::string& key) -> const ReportStage* {
    for (const auto& stage : model.stages) {
      if (stage_key(stage) == key) return &stage;
    }
    return nullptr;
  };
  for (const auto& stage : a.stages)
    comparison.stages.push_back(compare_stage(stage_key(stage), &stage, find_stage(b, stage_key(stage))));
  for (const auto& stage : b.stages) {
    if (find_stage(a, stage_key(stage)) == nullptr)
      comparison.stages.push_back(compare_stage(stage_key(stage), nullptr, &stage));
  }
  auto find_kernel = [](const RunReportModel& model, const std::string& name) -> const ReportKernel* {
    for (const auto& kernel : model.kernels) {
      if (kernel.name == name) return &kernel;
    }
    return nullptr;
  };
  for (const auto& kernel : a.kernels) {
    comparison.kernels.push_back(
        compare_kernel(kernel.name, &kernel, find_kernel(b, kernel.name), options.kernel_threshold_pct));
  }
  for (const auto& kernel : b.kernels) {
    if (find_kernel(a, kernel.name) == nullptr) {
      comparison.kernels.push_back(compare_kernel(kernel.name, nullptr, &kernel, options.kernel_threshold_pct));
    }
  }
  comparison.environment = compare_environment(a, b);
  comparison.config = compare_config(a, b);
  comparison.unlike_runs = unlike_runs(a, b);
  check_regression(comparison, a, b);
  return comparison;
}

Result<RunComparison> compare_run_directories(const std::filesystem::path& a, const std::filesystem::path& b,
                                              const ComparisonOptions& options) {
  if (!std::isfinite(options.kernel_threshold_pct) || options.kernel_threshold_pct < 0) {
    return make_error(ErrorCode::invalid_argument, "the kernel threshold must be a finite percentage >= 0",
                      "pass e.g. --threshold 5", detail::format_number(options.kernel_threshold_pct));
  }
  if (options.fail_if_slower_pct && (!std::isfinite(*options.fail_if_slower_pct) || *options.fail_if_slower_pct < 0)) {
    return make_error(ErrorCode::invalid_argument, "the regression limit must be a finite percentage >= 0",
                      "pass e.g. --fail-if-slower 5", detail::format_number(*options.fail_if_slower_pct));
  }
  auto model_a = load_run_report(a);
  if (!model_a) return model_a.error();
  auto model_b = load_run_report(b);
  if (!model_b) return model_b.error();
  return compare_runs(*model_a, *model_b, options);
}

}  // namespace llmprof
