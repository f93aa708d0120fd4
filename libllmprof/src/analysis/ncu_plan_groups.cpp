// The plan's groups of launch configurations, and what its figures stand for: the groups a planned group's
// ncu figures are extrapolated to, and how representative the planned launches are (see ncu_plan.hpp).
#include <algorithm>
#include <array>
#include <bit>
#include <sstream>

#include "analysis/ncu_plan_packing.hpp"

namespace llmprof {

std::string launch_config_key(const StageKernelLaunch& launch) {
  return "grid " + launch.grid + " block " + launch.block + " smem " + std::to_string(launch.shared_memory_bytes);
}

std::string ncu_counting_key(const StageKernelLaunch& launch) {
  return (launch.mangled.empty() ? launch.kernel : launch.mangled) + " " + launch_config_key(launch);
}

std::string grid_bucket(const std::string& grid) {
  std::array<std::uint64_t, 3> values{};
  char open = 0, comma1 = 0, comma2 = 0, close = 0;
  unsigned long long x = 0, y = 0, z = 0;
  std::istringstream in(grid);
  if (!(in >> open >> x >> comma1 >> y >> comma2 >> z >> close) || open != '(' || comma1 != ',' || comma2 != ',' ||
      close != ')')
    return grid;
  values = {std::bit_ceil(std::uint64_t(x)), std::bit_ceil(std::uint64_t(y)), std::bit_ceil(std::uint64_t(z))};
  return "(" + std::to_string(values[0]) + ", " + std::to_string(values[1]) + ", " + std::to_string(values[2]) + ")";
}

std::string launch_group_key(const StageKernelLaunch& launch) {
  return "grid bucket " + grid_bucket(launch.grid) + " block " + launch.block + " smem " +
         std::to_string(launch.shared_memory_bytes);
}

namespace detail {

// Each group without a planned launch takes its counters from a planned group of the same kernel: the one
// with the same block, else any, the latest to first appear (nearest in grid to a growing one).
void assign_extrapolation_sources(NcuPlan& plan) {
  for (auto& config : plan.configs) {
    if (!config.ordinals.empty()) continue;
    const PlannedConfig* source = nullptr;
    for (const auto& other : plan.configs) {
      if (other.kernel != config.kernel || other.ordinals.empty()) continue;
      const auto rank = [&config](const PlannedConfig* c) { return std::pair{c->block == config.block, c->first_launch}; };
      if (!source || rank(&other) > rank(source)) source = &other;
    }
    if (source) config.extrapolated_from = source->config.empty() ? source->kernel : source->config;
  }
}

// The plan's figures stand for every launch of a configuration; how far the planned launches' nsys
// durations say they do.
void judge_representativeness(NcuPlan& plan) {
  double extrapolated_ns = 0, measured_ns = 0;
  for (std::size_t i = 0; i < plan.configs.size(); ++i) {
    const PlannedConfig& config = plan.configs[i];
    if (planned_duration_ratio(config) <= 0) continue;
    extrapolated_ns += config.planned_mean_ns * double(config.stage_launches);
    measured_ns += double(config.stage_time_ns);
    if (is_unrepresentative(config)) plan.unrepresentative_configs.push_back(i);
  }
  plan.extrapolated_time_ratio = measured_ns > 0 ? extrapolated_ns / measured_ns : 0;
  std::stable_sort(plan.unrepresentative_configs.begin(), plan.unrepresentative_configs.end(),
                   [&plan](std::size_t a, std::size_t b) {
                     return plan.configs[a].stage_time_ns > plan.configs[b].stage_time_ns;
                   });
}

}  // namespace detail

double planned_duration_ratio(const PlannedConfig& config) {
  if (config.planned_mean_ns <= 0 || config.stage_launches <= 0 || config.stage_time_ns <= 0) return 0;
  return config.planned_mean_ns / (double(config.stage_time_ns) / double(config.stage_launches));
}

bool is_unrepresentative(const PlannedConfig& config) {
  const double ratio = planned_duration_ratio(config);
  return ratio > 0 && (ratio > 1 + kRepresentativeTolerance || ratio < 1 / (1 + kRepresentativeTolerance));
}

}  // namespace llmprof
