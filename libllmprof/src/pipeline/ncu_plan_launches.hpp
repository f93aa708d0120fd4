// The per-kernel ncu plan before any pass runs: its launches from the nsys stage's export, its estimate from the
// configuration or, for a command the runs root has seen, from what that command's last run measured.
#pragma once

#include <filesystem>
#include <string>

#include "llmprof/ncu_plan.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {

// The runs root's record of what ncu cost (pipeline/ncu_launch_cost.hpp), beside the run directories.
std::filesystem::path ncu_launch_cost_file(const PipelineRun& run);

// The command whose figures that record keeps: the workload's argv joined by spaces.
std::string ncu_workload_key(const PipelineRun& run);

// ncu.plan = per-kernel: the launches of each selected kernel and launch configuration to profile, fitted to
// ncu.max_seconds; says on the stage when it plans from the kernels' counts alone.
NcuPlan plan_launches(PipelineRun& run, const KernelSelection& selection, KernelNameBase base, const NsysOutput& nsys);

}  // namespace llmprof::detail
