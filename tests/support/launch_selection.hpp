// Kernel selections made from a stage's launch table without the selection code, for the ncu planner's tests
// (ncu_plan_test, ncu_plan_record_test): the stage's and each kernel's time and count summed from the launches.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "llmprof/ncu_plan.hpp"

namespace llmprof::testing {

// The stage "decode" with its kernel time from `launches` and no kernel chosen yet, and every kernel of the table
// with its total time and launch count.
struct LaunchTableKernels {
  KernelSelection selection;
  std::map<std::string, SelectedKernel> kernels;
};

inline LaunchTableKernels launch_table_kernels(const std::vector<StageKernelLaunch>& launches) {
  LaunchTableKernels table;
  table.selection.stage = "decode";
  for (const auto& one : launches) {
    table.selection.stage_kernel_time_ns += one.duration_ns;
    auto& kernel = table.kernels[one.kernel];
    kernel.name = one.kernel;
    kernel.total_time_ns += one.duration_ns;
    ++kernel.instances;
  }
  return table;
}

// A selection of `names` out of `launches`, in that order.
inline KernelSelection selection_of(const std::vector<StageKernelLaunch>& launches,
                                    const std::vector<std::string>& names) {
  auto table = launch_table_kernels(launches);
  for (const auto& name : names) table.selection.kernels.push_back(table.kernels.at(name));
  return table.selection;
}

// Every kernel of the stage by descending kernel time, at most `most` of them.
inline KernelSelection every_kernel(const std::vector<StageKernelLaunch>& launches, std::size_t most = 12) {
  auto table = launch_table_kernels(launches);
  for (const auto& [name, kernel] : table.kernels) table.selection.kernels.push_back(kernel);
  std::sort(table.selection.kernels.begin(), table.selection.kernels.end(),
            [](const auto& a, const auto& b) { return a.total_time_ns > b.total_time_ns; });
  table.selection.kernels.resize(std::min<std::size_t>(table.selection.kernels.size(), most));
  return table.selection;
}

}  // namespace llmprof::testing
