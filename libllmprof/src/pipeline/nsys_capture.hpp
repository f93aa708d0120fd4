// The nsys stage's pieces that the ranked stages share: its precondition, the profile command, the
// exports of a report (stats tables, SQLite), and the gate's diagnosis against the ranges the workload emitted.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/nsys_command.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/result.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

// Why there is nothing to select: no CUDA kernel in the timeline on a machine without an NVIDIA driver.
std::optional<std::string> no_kernels_to_select(const NsysStats& stats, const NvidiaDriver& driver);

// Pieces of the nsys stage that the ranked stages share. Directories are relative to MAIN.
std::optional<StageResult> nsys_stage_precondition(const PipelineRun& run, const ProbeOutput& probe,
                                                   const WorkloadOutput& workload);
// `added_arguments` go after nsys.extra_args (the node-traced capture's --cuda-graph-trace=node).
NsysCommand nsys_profile_command(const PipelineRun& run, const NsysInfo& nsys, bool gated,
                                 const std::filesystem::path& output_base,
                                 const std::vector<std::string>& added_arguments = {});
// What the captures do about GPU-metrics sampling, in one sentence: the frequency, devices and set, or why
// there is none (nsys.gpu_metrics = off, or the probe found it not available and nsys's reason).
std::string gpu_metrics_plan_sentence(const NsysConfig& config, const NsysInfo& nsys);
// `nsys stats` of `report` into <directory>/summary_*.csv, parsed into `stats`.
StageResult export_nsys_stats(PipelineRun& run, const NsysInfo& nsys, const std::filesystem::path& report,
                              const std::filesystem::path& directory, NsysStats& stats);
// `nsys export --type sqlite` of `report` into <directory>/profile.sqlite (the timeline engine's input).
StageResult export_nsys_sqlite(PipelineRun& run, const NsysInfo& nsys, const std::filesystem::path& report,
                               const std::filesystem::path& directory);
// The capture record's gate kind for nsys.capture_range.
CaptureGateKind capture_gate_kind(NsysCaptureRange range);
// The NVTX domain and ranges of a stage-1 metrics file, read with load_workload_metrics (strict).
Result<EmittedRanges> read_emitted_ranges(const std::filesystem::path& metrics_file);
// The empty-gate diagnosis: compares the gate with the emitted ranges and gives the exact fix.
std::string diagnose_empty_gate(const std::string& gate, const std::optional<EmittedRanges>& emitted,
                                const std::string& preferred_stage);

}  // namespace llmprof::detail
