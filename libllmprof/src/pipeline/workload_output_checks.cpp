// What the workload's output under nsys/ncu says about the profiling itself: a CUPTI conflict with the
// workload's own profiler, and nsys ending the workload when its capture range closed.
#include "core/file_text.hpp"
#include "pipeline/tool_call.hpp"

namespace llmprof::detail {

// Recorded on the H100 (tests/data/cupti/): a workload that runs torch.profiler (Kineto) under nsys or ncu
// prints this, its own profile silently drops from 18 to 2 events, and both tools still exit 0.
void warn_about_cupti_conflict(PipelineRun& run, Stage stage, const std::filesystem::path& log_file) {
  const std::string profiler = to_string(stage);  // nsys or ncu, as LLMPROF_PROFILER says
  const std::string text = read_text(run.directory.path() / log_file);
  if (text.find("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") == std::string::npos) return;
  run.warn(stage, "the workload's own CUDA profiler (e.g. torch.profiler/Kineto) could not attach under " + profiler +
                      ": it printed CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39) (see " + log_file.string() +
                      "), so its own trace is missing CUDA activity while " + profiler +
                      "'s data is complete. Fix: turn the workload's profiler off under deep-profile; deep-profile "
                      "sets LLMPROF_PROFILER=" +
                      profiler +
                      " in its environment (none for the bare stage-1 run), "
                      "so a harness can check that itself");
}

// With --capture-range=nvtx and --capture-range-end=stop-shutdown (nsys's own default), nsys ends the
// workload with SIGTERM when the range closes and exits 143: the capture is complete, the workload did
// not fail.
bool ended_by_capture_range(const PipelineRun& run, const ProcessOutcome& outcome) {
  const auto& nsys = run.config.nsys;
  if (nsys.capture_range != NsysCaptureRange::nvtx || nsys.capture_range_end != NsysCaptureRangeEnd::stop_shutdown)
    return false;
  return outcome.exited && outcome.exit_code == 143;
}

}  // namespace llmprof::detail
