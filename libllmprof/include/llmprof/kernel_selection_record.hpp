// The kernel selection: the kernels ncu profiles inside one stage, as the select stage chose them. One record,
// MAIN/nsys/selection.json and report.json's top_kernel_selection alike; one field table per type
// (src/rundir/kernel_selection_json.cpp) writes both files and reads both back, with the bounds of each figure. The
// analysis computes it (select_top_kernels), and the pipeline's ncu stage, the report and compare read it; the report
// model (llmprof/report_model.hpp) holds it as RunReportModel::top_kernel_selection.
//
// The JSON nests the rule ({kind, n} or {kind, target, max_kernels, capped}) and the collectives left out ({count,
// total_time_ns, share, names, kernels}); the table writes those objects from the members below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/export.hpp"

namespace llmprof {

enum class KernelNameBase;  // demangled (the first, 0) or function: defined with its spellings in the parse layer

struct LLMPROF_API SelectedKernel {
  std::string name;                // as nsys printed it
  std::string match_name;          // the form the regex matches: demangled name, or its function name
  std::int64_t total_time_ns = 0;  // GPU time of the kernel inside the stage
  std::int64_t instances = 0;      // launches inside the stage
  double share = 0;                // total_time_ns / the stage's kernel time, 0..1
  bool operator==(const SelectedKernel&) const = default;
};

// What reaching a higher coverage would take: "3 more kernels for 95%".
struct LLMPROF_API CoverageStep {
  double target = 0;             // fraction of the stage's kernel time, e.g. 0.95
  std::size_t kernels = 0;       // distinct kernels needed in all (when reachable)
  std::size_t more_kernels = 0;  // kernels beyond the selection (when reachable)
  bool reachable = true;         // false: collectives hold too much of the stage's time
  bool operator==(const CoverageStep&) const = default;
};

// The rule that chose the kernels (the file's rule.kind).
enum class SelectionRule { top_n, coverage };
inline std::span<const std::string_view> choice_names(SelectionRule) noexcept {
  static constexpr std::string_view names[] = {"top_n", "coverage"};
  return names;
}

struct LLMPROF_API KernelSelection {
  std::string stage;
  std::string domain;
  std::string source;  // "nvtx_kern_sum" or "cuda_gpu_kern_sum (capture gated on the stage)"
  KernelNameBase name_base{};  // demangled
  // Kernels selected: kernels.size() where the file lists them (a report.json of another tool may give only n).
  std::size_t n = 0;
  std::vector<SelectedKernel> kernels;  // most GPU time first
  std::int64_t stage_kernel_time_ns = 0;
  std::int64_t stage_kernel_instances = 0;  // 0 in a selection.json written before it was recorded
  std::size_t stage_kernel_count = 0;       // distinct kernel names in the stage
  double coverage = 0;                      // share of the stage's kernel time the selected kernels hold (0..1)
  std::optional<double> coverage_target;    // the coverage rule's target; nullopt: top-N rule
  std::size_t max_kernels = 0;              // the coverage rule's cap (0 with the top-N rule)
  bool capped = false;                      // the cap stopped the coverage rule short of its target
  std::vector<CoverageStep> more_coverage;  // targets above `coverage` (analysis: coverage_step_targets)
  // Collective kernels of the stage, left out of the selection (most GPU time first), and their time.
  std::vector<SelectedKernel> collectives_left_out;
  std::int64_t collective_time_ns = 0;
  double collective_share = 0;  // of the stage's kernel time
  // `--kernel-name` value: "regex:^(?:...)$", matching the selected kernels (and only kernels
  // sharing a function name with one of them, listed in also_matched, when name_base is function).
  std::string kernel_regex;
  // Unselected kernels of the stage that kernel_regex matches too (same function name).
  std::vector<std::string> also_matched;
  // A --launch-count that profiles every selected kernel at least once whatever the launch order,
  // when ncu is filtered to the same stage (--nvtx-include): all matching launches except those of
  // the rarest selected kernel, plus one. selection.json holds the bound ncu ran with (raised or capped by ncu.*).
  std::int64_t launch_count = 0;

  SelectionRule rule() const { return coverage_target ? SelectionRule::coverage : SelectionRule::top_n; }
  std::size_t collective_count() const { return collectives_left_out.size(); }
  std::vector<std::string> collective_names() const {
    std::vector<std::string> names;
    for (const auto& kernel : collectives_left_out) names.push_back(kernel.name);
    return names;
  }
  bool operator==(const KernelSelection&) const = default;
};

}  // namespace llmprof
