// The ncu sets' costs and libllmprof's own section folder (see ncu_sets.hpp).
#include "pipeline/ncu_sets.hpp"

#include <array>
#include <system_error>

#include "core/format.hpp"
#include "llmprof/ncu_command.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

// H100, ncu 2025.3.1, the 1b eager decode (llmprof-decode --preset 1b --warmup 1):
// - roofline: "- 17 passes" on every launch (tests/data/h100-1b-decode/ncu/profile.log); 0.6 s per launch beyond a
//   duration-only pass (43 s against 36 s for 12 launches, examples/nsight-2025-h100/ncu-cost-2026-11-23).
// - llmprof: "- 6 passes" on every one of the 37 launches profiled, and 0.24 s per launch (the 26 planned launches'
//   progress lines span 5.9 s), deep-profile's defaults. Its per-stage FLOP, DRAM bytes and MBU were
//   within 0.4% of roofline's on the same decode, MFU within 1.4% (lm_head 3%: its 26 us launches' durations).
constexpr std::array<NcuSetCost, 2> kSetCosts{{
    {kLlmprofNcuSet, 6, 0.24, true, "the H100, ncu 2025.3.1, the 1b example"},
    {"roofline", 17, 0.6, true, "the H100, ncu 2025.3.1, the 1b example"},
}};

// "17 replay passes and 0.6 s a launch, measured on the H100, ...".
std::string describe(const NcuSetCost& cost) {
  return std::to_string(cost.replay_passes) + " replay passes and " + format_seconds(cost.seconds_per_launch) +
         " a launch, " + (cost.measured ? "measured on " : "an upper bound until measured: ") + std::string(cost.source);
}

}  // namespace

const NcuSetCost* ncu_set_cost(std::string_view set) {
  for (const auto& cost : kSetCosts)
    if (cost.set == set) return &cost;
  return nullptr;
}

PlannedLaunchCost planned_launch_cost(const NcuConfig& config) {
  if (config.seconds_per_launch > 0) return {config.seconds_per_launch, "ncu.seconds_per_launch"};
  if (const NcuSetCost* cost = ncu_set_cost(config.set))
    return {cost->seconds_per_launch, "ncu.set " + config.set + ": " + describe(*cost)};
  const NcuSetCost* roofline = ncu_set_cost("roofline");
  return {roofline->seconds_per_launch, "ncu.set " + config.set + " has no figure of its own; roofline's (" +
                                            describe(*roofline) + ") until a run measures it"};
}

std::optional<fs::path> find_llmprof_section_folder(const DeepProfilerEnvironment& environment,
                                                    std::vector<fs::path>* searched) {
  std::vector<fs::path> directories = environment.config_directories;
  if (!environment.executable.empty())
    directories.push_back(environment.executable.parent_path().parent_path() / "share" / "llmprof" / "config");
#ifdef LLMPROF_INSTALL_CONFIG_DIR
  directories.emplace_back(LLMPROF_INSTALL_CONFIG_DIR);
#endif
#ifdef LLMPROF_SOURCE_CONFIG_DIR
  directories.emplace_back(LLMPROF_SOURCE_CONFIG_DIR);
#endif
  const fs::path file(kLlmprofSectionFile);
  for (const auto& directory : directories) {
    std::error_code error;
    // Absolute: ncu runs in the workload's directory, and $LLMPROF_CONFIG_DIR may be relative to ours.
    if (fs::is_regular_file(directory / file, error)) return fs::absolute(directory / file, error).parent_path();
    if (searched) searched->push_back((directory / file).parent_path());
  }
  return std::nullopt;
}

}  // namespace llmprof::detail
