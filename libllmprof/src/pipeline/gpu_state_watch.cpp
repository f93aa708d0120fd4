// GPU state around the stages that run the workload on the GPU (see record_gpu_state).
#include <algorithm>
#include <cstdlib>
#include <string>

#include "llmprof/logging.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {
namespace {

// The stages that run the workload, when enabled (a disabled stage is skipped without touching the GPU).
bool runs_on_gpu(const PipelineRun& run, Stage stage) {
  const auto& enabled = run.config.run;
  return (stage == Stage::workload && enabled.enable_stage1) || (stage == Stage::nsys && enabled.enable_nsys) ||
         (stage == Stage::ncu && enabled.enable_ncu);
}

// The GPU the workload uses, when one is named: run.device_index, else a single-GPU CUDA_VISIBLE_DEVICES
// of the workload's environment. Empty: all GPUs are watched. (nvidia-smi numbers GPUs in PCI order; CUDA
// does too when CUDA_DEVICE_ORDER=PCI_BUS_ID, which is the usual setting on profiling machines.)
std::vector<int> watched_gpus(const PipelineRun& run) {
  if (run.config.run.device_index) return {*run.config.run.device_index};
  const auto visible = run.workload.environment.find("CUDA_VISIBLE_DEVICES");
  const char* inherited = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string text = visible != run.workload.environment.end() ? visible->second : (inherited ? inherited : "");
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return {};
  return {std::stoi(text)};
}

}  // namespace

void record_gpu_state(PipelineRun& run, Stage stage, const std::string& moment) {
  if (!run.config.run.record_gpu_state || run.gpu_state_unavailable || !runs_on_gpu(run, stage) || run.stopping())
    return;
  auto snapshot = capture_gpu_state(run.runner, to_string(stage), moment, format_utc_iso8601(run.clock.wall_now()));
  if (!snapshot.problem.empty() && snapshot.gpus.empty()) {
    run.gpu_state_unavailable = true;
    run.say(stage, snapshot.problem + "; going on without it");
  }
  snapshot.warnings = gpu_state_warnings(snapshot, watched_gpus(run));
  for (const auto& warning : snapshot.warnings) run.warn(stage, warning);
  run.gpu_snapshots.push_back(std::move(snapshot));
  if (auto written = run.directory.write_json(RunLayout::gpu_state(), gpu_state_to_json(run.gpu_snapshots)); !written) {
    log_warning(to_string(stage), "could not write gpu_state.json: " + written.error().describe());
  }
}

}  // namespace llmprof::detail
