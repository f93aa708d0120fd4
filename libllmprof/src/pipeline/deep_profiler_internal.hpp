// What the stage files (stage_*.cpp, rank_*.cpp) share, by concept:
//   stage_interface.hpp  PipelineRun, StageResult, the stage outputs and the stage functions
//   tool_call.hpp        running a tool and recording it (ToolCall, run_tool, run_profiler_call)
//   nsys_capture.hpp     the nsys command, its exports, the empty-gate diagnosis
//   ncu_pass.hpp         the ncu passes (NcuPassFilter, NcuAttempt, the per-kernel plan)
// and, here, the few helpers left over: repeats, GPU state, workload fingerprints, probe and analysis options.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "llmprof/analysis.hpp"
#include "llmprof/clock.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/run_directory.hpp"
#include "pipeline/ncu_pass.hpp"
#include "pipeline/nsys_capture.hpp"
#include "pipeline/stage_interface.hpp"
#include "pipeline/tool_call.hpp"

namespace llmprof::detail {

// Samples of the bare stage-1 runs, by quantity: "wall_s" (the process), and from the workload's
// metrics file when it wrote one, "prefill_s" and "decode_s".
using RepeatSamples = std::map<std::string, std::vector<double>>;
void add_repeat_sample(RepeatSamples& samples, const ProcessOutcome& outcome,
                       const std::filesystem::path& metrics_file);
// Summaries into stage1/repeats.json (schema llmprof.repeats/1) and the stage's messages.
void record_repeats(PipelineRun& run, const RepeatSamples& samples);

// nvidia-smi snapshot `moment` ("before"/"after") of a stage that runs the workload on the GPU (stage1,
// nsys, ncu), into MAIN/gpu_state.json; throttling or another process on the GPU becomes a stage warning.
void record_gpu_state(PipelineRun& run, Stage stage, const std::string& moment);

// The files the workload consists of, for run --resume to tell whether it changed: the executable argv[0]
// names (found on `path_variable`, empty: PATH) and every argument that names a regular file (relative ones
// against `working_directory`).
std::vector<FileFingerprint> fingerprint_workload_files(const std::vector<std::string>& argv,
                                                        const std::filesystem::path& working_directory,
                                                        const std::string& path_variable);

// Where the probe looks for nsys and ncu: the configured paths, then PATH and the usual places.
ProbeOptions probe_options(const PipelineRun& run);

AnalysisOptions analysis_options(const PipelineRun& run, const NsysOutput& nsys);
// The verdict stored in analysis/report.json (write_run_verdict), last in the analyze stage; a failure is the
// stage's warning, and the report then says the verdict was not stored.
void store_verdict(PipelineRun& run);

// MAIN/deep-profile.log for the lines this thread logs while the run goes on; null when
// environment.attach_log_file is off, or when the file cannot be opened (then a warning says so: the run
// goes on, its run.json and stage logs still say what happened).
std::unique_ptr<ScopedLogFile> open_run_log(const DeepProfilerEnvironment& environment,
                                            const std::filesystem::path& path);

}  // namespace llmprof::detail
