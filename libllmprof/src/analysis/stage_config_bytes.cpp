// DRAM bytes of the plan's stage per launch configuration. The ncu plan profiles one launch per configuration
// group of a kernel (grid bucket, block, shared memory) and lets the groups it skips take the figures of another
// group of the same kernel. A kernel's mean over its profiled launches weighs every group alike, whatever its
// launch count: on the recorded 1b decode (examples/ncu-budget-h100, H100) one GEMM kernel runs in groups of
// 4096 and of 128 launches. Here each group's bytes per launch count for that group's launches only.
#include <algorithm>

#include "analysis/analysis_model.hpp"
#include "llmprof/kernel_name.hpp"

namespace llmprof::detail {
namespace {

struct GroupBytes {
  const PlannedConfig* config = nullptr;
  std::optional<double> measured;  // mean ncu bytes per launch of the group's profiled launches
};

// ncu's raw rows carry no shared-memory size: groups that differ only by it share their rows.
bool in_group(const LaunchRoofline& launch, const PlannedConfig& config) {
  return launch.block_size == config.block && grid_bucket(launch.grid_size) == grid_bucket(config.grid);
}

std::optional<double> mean_bytes(const std::vector<LaunchRoofline>& launches, const std::vector<std::size_t>& rows,
                                 const PlannedConfig* group) {
  double bytes = 0;
  std::int64_t count = 0;
  for (const std::size_t row : rows) {
    const auto& launch = launches[row];
    if (!launch.dram_bytes || (group != nullptr && !in_group(launch, *group))) continue;
    bytes += *launch.dram_bytes;
    ++count;
  }
  if (count == 0) return std::nullopt;
  return bytes / static_cast<double>(count);
}

// One kernel's groups: measured ones take their own launches' bytes; the others the group the plan carried
// them from, else (a plan that named none, or whose source has no rows) the kernel's mean, as the plan's check
// counts them.
ConfigBytes kernel_config_bytes(const std::vector<LaunchRoofline>& launches, const std::vector<std::size_t>& rows,
                                const std::vector<const PlannedConfig*>& configs) {
  std::vector<GroupBytes> groups;
  for (const auto* config : configs) groups.push_back({config, mean_bytes(launches, rows, config)});
  const auto kernel_mean = mean_bytes(launches, rows, nullptr);
  ConfigBytes result;
  result.launches_profiled = rows;
  for (const auto& group : groups) {
    const auto& config = *group.config;
    result.launches += config.stage_launches;
    result.time_ns += config.stage_time_ns;
    std::optional<double> per_launch = group.measured;
    if (per_launch) {
      result.measured_ns += config.stage_time_ns;
      result.measured_launches += config.stage_launches;
    } else {
      const auto source = std::find_if(groups.begin(), groups.end(), [&](const GroupBytes& other) {
        return other.measured && !config.extrapolated_from.empty() && other.config->config == config.extrapolated_from;
      });
      per_launch = source != groups.end() ? source->measured : kernel_mean;
      if (!per_launch) continue;
      result.extrapolated_ns += config.stage_time_ns;
      result.extrapolated_launches += config.stage_launches;
    }
    result.bytes += *per_launch * static_cast<double>(config.stage_launches);
  }
  return result;
}

}  // namespace

void fill_config_bytes(const AnalysisInputs& inputs, PerLaunchMeans& means) {
  if (!inputs.ncu_plan_groups || !inputs.ncu_launches) return;
  const auto& plan = *inputs.ncu_plan_groups;
  // A plan without launch configurations (an export without them) groups by kernel only: nothing to weigh.
  if (std::any_of(plan.configs.begin(), plan.configs.end(), [](const PlannedConfig& c) { return c.grid.empty(); }))
    return;
  const auto stage = means.launches_by_stage.find(plan.stage);
  if (stage == means.launches_by_stage.end()) return;
  means.config_stage = plan.stage;
  // The plan names kernels as nsys does; ncu renames them, so both sides meet through the join key.
  for (const auto& [kernel, rows] : stage->second) {
    const std::string key = kernel_name_join_key(kernel);
    std::vector<const PlannedConfig*> configs;
    for (const auto& config : plan.configs)
      if (kernel_name_join_key(config.kernel) == key) configs.push_back(&config);
    if (configs.empty()) continue;
    means.dram_bytes_by_config[kernel] = kernel_config_bytes(*inputs.ncu_launches, rows, configs);
  }
}

}  // namespace llmprof::detail
