// Which selected kernels share an ncu pass (see llmprof/ncu_plan.hpp for the counting it works around).
//
// ncu 2025.3.1's --filter-mode per-launch-config counts each launch configuration across every kernel the
// pass matches. A kernel whose configuration first occurs late in the stage (a copy whose grid grows with the
// context), after thousands of another selected kernel's launches in that configuration, is out of reach of
// any --launch-count in a pass with that kernel, and only a pass without it reaches it. On the H100 (ncu 2025.3.1,
// 1b decode, 32-token prompt, 192 new tokens) a pass-by-pass search that keeps all remaining kernels together
// planned 11 passes (estimated 963 s); packing kernels into passes where they do not block each other avoids
// that.
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
