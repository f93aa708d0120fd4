// Which selected kernels share an ncu pass (see llmprof/ncu_plan.hpp for the counting it replays).
//
// The packing was written for a counting model in which --filter-mode per-launch-config shared one count
// among every function of a configuration; under it a kernel whose configuration first occurs late was out of
// reach of any --launch-count in a pass with another kernel of that configuration (an 11-pass plan, estimated
// 963 s, for the 1b decode with a 192-token growing context). ncu 2025.3.1 counts each function apart
// (ncu_counting_key; measured on the H200 with ncu 2025.3.1), so every selected kernel packs into one pass at
// launches_per_config, except namesakes that share a recorded name when the export has no mangled names.
// Kept as the second of the two plans the planner weighs: it is exact under either model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmprof/ncu_plan.hpp"

namespace llmprof::detail {

struct PackedPass {
  std::vector<std::string> kernels;
  std::int64_t launch_count = 0;  // the least that reaches launches_per_config of each of their configurations
};

// `kernels` in selection order (heaviest first), each placed in the existing pass where it adds the least
// estimated time (its launches, and the launches a higher --launch-count adds to the pass's other
// configurations) or in a new pass when that is cheaper (seconds_per_pass plus its own launches). Counts up
// to options.max_launch_count. Assumes --launch-skip 0, known configurations, and that only the pass's own
// kernels match its filter; the caller replays ncu's counting to confirm.
std::vector<PackedPass> pack_ncu_passes(const std::vector<StageKernelLaunch>& launches,
                                        const std::vector<std::string>& kernels, const NcuPlanOptions& options);

// Each group without a planned launch takes its counters from a planned group of the same kernel
// (PlannedConfig::extrapolated_from): the one with the same block, else any, the latest to first appear.
void assign_extrapolation_sources(NcuPlan& plan);
// extrapolated_time_ratio and unrepresentative_configs from the planned launches' nsys durations.
void judge_representativeness(NcuPlan& plan);

}  // namespace llmprof::detail
