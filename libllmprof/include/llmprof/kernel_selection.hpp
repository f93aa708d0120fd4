// Choosing which kernels ncu should profile: the N kernels with the most GPU time inside one NVTX
// stage, from the nsys tables, as an ncu --kernel-name value and a --launch-count that reaches
// every one of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/kernel_name.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

struct TopKernelRequest {
  std::string stage;                  // NVTX range name, e.g. "decode"
  std::optional<std::string> domain;  // nullopt: whichever domain holds `stage`; "" = default domain
  std::size_t n = 5;
  KernelNameBase name_base = KernelNameBase::demangled;
  // The nsys capture itself was gated on this stage (nsys --capture-range=nvtx --nvtx-capture=STAGE),
  // so the whole-run cuda_gpu_kern_sum holds exactly the stage's kernels. Only then is that table
  // used when nvtx_kern_sum has no rows for the stage; it is never a silent fallback.
  bool capture_gated_on_stage = false;
};

struct SelectedKernel {
  std::string name;             // as nsys printed it
  std::string match_name;       // the form the regex matches: demangled name, or its function name
  std::int64_t total_time_ns = 0;  // GPU time of the kernel inside the stage
  std::int64_t instances = 0;      // launches inside the stage
  double share = 0;                // total_time_ns / the stage's kernel time
};

struct KernelSelection {
  std::string stage;
  std::string domain;
  std::string source;  // "nvtx_kern_sum" or "cuda_gpu_kern_sum (capture gated on the stage)"
  KernelNameBase name_base = KernelNameBase::demangled;
  std::vector<SelectedKernel> kernels;  // most GPU time first
  std::int64_t stage_kernel_time_ns = 0;
  std::int64_t stage_kernel_instances = 0;
  std::size_t stage_kernel_count = 0;  // distinct kernel names in the stage
  double coverage = 0;                 // share of the stage's kernel time the selected kernels hold (0..1)
  // `--kernel-name` value: "regex:^(?:...)$", matching the selected kernels (and only kernels
  // sharing a function name with one of them, listed in also_matched, when name_base is function).
  std::string kernel_regex;
  // Unselected kernels of the stage that kernel_regex matches too (same function name).
  std::vector<std::string> also_matched;
  // A --launch-count that profiles every selected kernel at least once whatever the launch order,
  // when ncu is filtered to the same stage (--nvtx-include): all matching launches except those of
  // the rarest selected kernel, plus one.
  std::int64_t launch_count = 0;
};

// Errors: the stage has no rows (the message lists the stages that exist), nvtx_kern_sum absent
// without capture_gated_on_stage, n == 0, the stage present in several domains with no domain set.
Result<KernelSelection> select_top_kernels(const NsysStats& stats, const TopKernelRequest& request);

}  // namespace llmprof
