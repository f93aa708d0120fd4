// The per-kernel plan's kernel filters, and its check against the rows ncu wrote.
#include <map>
#include <set>
#include <tuple>

#include "llmprof/ncu_plan.hpp"

namespace llmprof {

NcuKernelFilter ncu_kernel_filter(const NcuPlan& plan, const std::vector<std::string>& kernels, KernelNameBase base) {
  // Under the function base the user asked for namesakes to match too; mangled names would not.
  if (base == KernelNameBase::demangled) {
    std::vector<std::string> mangled;
    for (const auto& kernel : kernels) {
      const auto found = plan.mangled_names.find(kernel);
      if (found == plan.mangled_names.end()) {
        mangled.clear();
        break;
      }
      mangled.insert(mangled.end(), found->second.begin(), found->second.end());
    }
    if (!mangled.empty()) return {mangled_name_regex(mangled), true};
  }
  return {kernel_name_regex(kernels, base), false};
}

NcuPlanCheck check_ncu_plan(const NcuPlan& plan, const std::vector<ProfiledLaunch>& rows, KernelNameBase name_base) {
  // ncu renames demangled names (--rename-kernels, on by default in 2025.3), so both sides are
  // compared by the spelling-independent join key (or the function name under that base).
  const auto key_of = [name_base](const std::string& name) {
    return name_base == KernelNameBase::function ? kernel_function_name(name) : kernel_name_join_key(name);
  };
  // (key, grid bucket, block): a planned group takes the rows of every exact configuration in its bucket.
  std::map<std::tuple<std::string, std::string, std::string>, std::int64_t> row_counts;
  std::map<std::string, std::int64_t> rows_by_kernel;
  for (const auto& row : rows) {
    const std::string key = key_of(row.kernel_name);
    ++row_counts[{key, grid_bucket(row.grid), row.block}];
    ++rows_by_kernel[key];
  }
  NcuPlanCheck check;
  check.rows = std::int64_t(rows.size());
  std::set<std::string> kernels_seen, kernels_planned, kernels_measured;
  std::int64_t measured_ns = 0;
  const auto rows_of = [&](const PlannedConfig& config) -> std::int64_t {
    const std::string key = key_of(config.kernel);
    if (plan.configs_known && !config.grid.empty()) {
      // Several nsys names may share one key; each planned group takes its rows once.
      const auto found = row_counts.find({key, grid_bucket(config.grid), config.block});
      return found == row_counts.end() ? 0 : found->second;
    }
    const auto found = rows_by_kernel.find(key);
    return found == rows_by_kernel.end() ? 0 : found->second;
  };
  for (const auto& config : plan.configs) {
    const std::int64_t profiled = rows_of(config);
    if (profiled > 0) {
      measured_ns += config.stage_time_ns;
      kernels_measured.insert(config.kernel);
    }
    if (config.ordinals.empty()) continue;
    kernels_planned.insert(config.kernel);
    if (rows_by_kernel.contains(key_of(config.kernel))) kernels_seen.insert(config.kernel);
    const std::int64_t planned = std::int64_t(config.ordinals.size());
    check.planned_launches += planned;
    check.profiled_planned_launches += std::min(planned, profiled);
    if (profiled < planned) check.not_profiled.push_back({config.kernel, config.config, planned, profiled});
  }
  // A group without rows whose kernel has some is extrapolated from them, as the plan's extrapolated groups are.
  std::int64_t extrapolated_ns = 0;
  for (const auto& config : plan.configs)
    if (rows_of(config) == 0 && kernels_measured.contains(config.kernel)) extrapolated_ns += config.stage_time_ns;
  for (const auto& kernel : kernels_planned)
    if (!kernels_seen.contains(kernel)) check.kernels_without_rows.push_back(kernel);
  const auto share = [&plan](std::int64_t ns) {
    return plan.stage_kernel_time_ns > 0 ? double(ns) / double(plan.stage_kernel_time_ns) : 0.0;
  };
  check.coverage_measured = share(measured_ns);
  check.coverage_extrapolated = share(extrapolated_ns);
  check.coverage_reached = check.coverage_measured + check.coverage_extrapolated;
  return check;
}

}  // namespace llmprof
