// Re-analysing a run directory as it was profiled: the analysis options a run used, read back from its
// configuration and its run record (`deep-profile analyze MAIN`, the pipeline's analyze stage, the cross-rank view).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "llmprof/analysis.hpp"
#include "llmprof/config.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_directory.hpp"

namespace llmprof {

// The analysis options a run used: run.stage, run.top_n_kernels and ncu.kernel_name_base from its
// config, and whether the nsys capture was gated on that stage (`capture_gate`: the NVTX range the
// capture was gated on, if it was).
AnalysisOptions analysis_options_for(const DeepProfileConfig& config, std::optional<std::string> capture_gate);
// The same, read back from a run directory (MAIN/config.toml, and run.json's capture record for the gate),
// so that re-analysing a run reproduces what it measured. not_found without config.toml.
Result<AnalysisOptions> analysis_options_of_run(const std::filesystem::path& main);
// The NVTX range name the captured timeline of the run in `main` is limited to (CaptureRecord::gated_range);
// for a run recorded before run.json had a capture record, read from the last `nsys profile` line of its
// nsys/cmd.txt (the primary rank's under a launcher). nullopt: the capture was not limited to a range.
std::optional<std::string> capture_gate_of_run(const std::filesystem::path& main, const RunManifest& manifest);

}  // namespace llmprof
