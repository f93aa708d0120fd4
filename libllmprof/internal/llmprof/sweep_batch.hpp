// Sweeps on a batch scheduler: each point of a plan as its own job, and Slurm job arrays to run them.
//
//   deep-profile sweep --plan F --point-index I       SweepPointJob: point I into SWEEP/point-<I>/
//   deep-profile sweep --plan F --merge                merge_sweep_points (sweep.hpp): SWEEP/index.*
//   deep-profile sweep --plan F --executor slurm       write_sweep_batch_scripts: SWEEP/sweep.sbatch, merge.sbatch
//                                       [--submit]     submit_sweep_batch: sbatch --parsable, twice
//
// sweep.sbatch is a job array, one task per point (`--array=0-(N-1)%K --gpus=1`), each task running
// `deep-profile sweep ... --point-index $SLURM_ARRAY_TASK_ID`. merge.sbatch builds the index; it is
// submitted with --dependency=afterany:<array id> because afterok never fires once one task has
// failed, and the index must show failed points rather than wait for them forever. A finished point is
// never run again, so submitting the same scripts again resumes a sweep.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/clock.hpp"
#include "llmprof/config.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/exit_code.hpp"
#include "llmprof/process.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_directory.hpp"

namespace llmprof {

// ---- one point as its own job ------------------------------------------------------------------

struct SweepPointResult {
  std::filesystem::path main_directory;   // SWEEP/point-<I>
  RunStatus status = RunStatus::running;  // what its run.json says now
  bool already_finished = false;          // a finished run was there: nothing ran
  std::optional<RunOutcome> outcome;      // set when the point ran now
  // 0 ok; 1 incomplete or failed (also for a run found finished); 3, 124, 130 as `deep-profile run`.
  ExitCode exit_code() const noexcept;
};

// Runs point `index` of a sweep into SWEEP/point-<index>/ with `config`, the point's configuration
// already layered (base, then the point's overrides); run.runs_root and run.run_id are set here and
// retention is off (it must never delete the sweep's other points).
//  - a finished run there (run.json ok, incomplete or failed) is kept and not run again;
//  - an unfinished one (interrupted, or killed so that run.json still says running, or a directory
//    without run.json) is removed and the point runs from the start;
//  - one that another process is running (its run.lock is held) is left alone: already_exists.
// Like DeepProfiler::run, an Error only when no run could be made (unwritable SWEEP, workload not
// found); a run that fails is a result with its status.
class SweepPointJob {
 public:
  SweepPointJob(DeepProfileConfig config, std::filesystem::path sweep_directory, std::size_t index,
                ProcessRunner& runner, const Clock& clock, ProgressCallback progress = {},
                DeepProfilerEnvironment environment = {});
  Result<SweepPointResult> run();
  // Stops the point's run (DeepProfiler::request_stop), or keeps it from starting. Any thread.
  void request_stop() noexcept;

 private:
  DeepProfileConfig config_;
  std::filesystem::path sweep_directory_;
  std::size_t index_;
  ProcessRunner& runner_;
  const Clock& clock_;
  ProgressCallback progress_;
  DeepProfilerEnvironment environment_;
  std::mutex mutex_;
  DeepProfiler* profiler_ = nullptr;  // while run() runs the pipeline
  std::atomic<bool> stop_requested_{false};
};

// ---- Slurm job arrays --------------------------------------------------------------------------

struct SweepBatchRequest {
  std::filesystem::path deep_profile;     // the executable every task runs (absolute; on a shared file system)
  std::filesystem::path plan_file;        // absolute
  std::filesystem::path sweep_directory;  // SWEEP, absolute
  std::filesystem::path
      working_directory;   // the tasks' cwd (#SBATCH --chdir): relative paths in the config resolve as here
  std::size_t points = 0;  // N: the array is 0..N-1 (at least 1)
  std::optional<std::size_t> concurrency;     // K: at most K tasks at once (%K); nullopt: as many as Slurm allows
  std::vector<std::string> shared_arguments;  // --preset/--config/--set every point gets, as given
  std::vector<std::string> workload;          // -- CMD ARGS, when given
  std::string job_name = "deep-profile-sweep";
};

// Deterministic texts (golden-tested): every argument shell-quoted, the task logs in
// SWEEP/logs/point-%a.out (%a: the array task id) and SWEEP/logs/merge.out.
std::string render_sweep_array_script(const SweepBatchRequest& request);
std::string render_sweep_merge_script(const SweepBatchRequest& request);

struct SweepBatchScripts {
  std::filesystem::path array_script;    // SWEEP/sweep.sbatch
  std::filesystem::path merge_script;    // SWEEP/merge.sbatch
  std::filesystem::path logs_directory;  // SWEEP/logs
};
// Checks the request (at least one point, K >= 1, absolute paths) and writes both scripts
// atomically, executable, creating SWEEP/logs for the task logs (Slurm does not create it, and a task
// whose log cannot be opened fails without a word).
Result<SweepBatchScripts> write_sweep_batch_scripts(const SweepBatchRequest& request);

// The job id `sbatch --parsable` printed: "1234" or "1234;cluster". parse_error otherwise.
Result<std::string> parse_sbatch_job_id(std::string_view output);

struct SweepSubmission {
  std::string array_job_id;
  std::string merge_job_id;
};
// `sbatch --parsable sweep.sbatch`, then `sbatch --parsable --dependency=afterany:<array> merge.sbatch`,
// through `runner` (each with a timeout of one minute); the tasks inherit this process's environment.
// Errors: sbatch missing or refusing (process_failed, with its words: the machine is not ready, exit 3),
// or an id that cannot be read (parse_error);
// when only the merge job failed, the message names the submitted array and how to finish by hand.
Result<SweepSubmission> submit_sweep_batch(const SweepBatchScripts& scripts, ProcessRunner& runner,
                                           const std::string& sbatch = "sbatch");

}  // namespace llmprof
