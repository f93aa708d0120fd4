// The ncu set a run profiles with: where libllmprof's own section lives, and what a profiled launch of each set
// costs (ncu's replay passes per launch and seconds per launch), the planner's figures before a run measures its own.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config.hpp"
#include "llmprof/deep_profiler.hpp"

namespace llmprof::detail {

// What a profiled launch of one set costs under kernel replay with the defaults (--cache-control all,
// --clock-control base), and where the figures come from.
struct NcuSetCost {
  std::string_view set;
  int replay_passes = 0;          // ncu's "- N passes" per launch
  double seconds_per_launch = 0;  // beyond the pass's replay of the workload
  bool measured = false;          // false: an estimate the next measurement on the GPU replaces
  std::string_view source;
};

// The figures of `set` (kLlmprofNcuSet, "roofline"); nullptr for a set nothing measured ("full", "basic").
const NcuSetCost* ncu_set_cost(std::string_view set);

// The per-launch cost the plan starts from: ncu.seconds_per_launch when set (> 0), else the set's figure, else
// roofline's (the set with the most measurements) with a source saying so.
struct PlannedLaunchCost {
  double seconds_per_launch = 0;
  std::string source;  // "ncu.seconds_per_launch", "ncu.set llmprof: ..."
};
PlannedLaunchCost planned_launch_cost(const NcuConfig& config);

// The folder holding kLlmprofSectionFile's section: ncu-sections under the first of `config_directories`,
// <executable>/../share/llmprof/config, the install's configuration and the source tree's config/ that has the
// file. nullopt when none has it; `searched` then lists the folders looked in.
std::optional<std::filesystem::path> find_llmprof_section_folder(const DeepProfilerEnvironment& environment,
                                                                 std::vector<std::filesystem::path>* searched = nullptr);

}  // namespace llmprof::detail
