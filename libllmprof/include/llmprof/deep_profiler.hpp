// DeepProfiler: the whole deep-profile pipeline (probe -> stage1 -> nsys -> select -> ncu -> analyze
// -> report) behind one call, usable from a user's own harness.
//
// Every stage is recorded in MAIN/run.json (status ok/skipped/failed/interrupted, reason, timings,
// exit codes, command), which is rewritten after every stage. The pipeline is fail-open: a missing or
// failing profiler marks its stage skipped/failed and the run goes on with what it has; RunSummary
// says whether everything that was asked for succeeded.
//
// Related headers: clock.hpp (SystemClock), stop_signal_watcher.hpp (SIGINT/SIGTERM -> request_stop),
// ncu_progress.hpp (the ncu lines behind ProgressEvent's kernel n/N), run_directory.hpp and run_layout.hpp (the
// manifest and the files of MAIN). This header includes what its declarations need: the configuration, the
// process runner, the stage records; not the analysis (a harness that only runs the pipeline does not compile it).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config.hpp"
#include "llmprof/exit_code.hpp"
#include "llmprof/export.hpp"
#include "llmprof/process.hpp"
#include "llmprof/rank_launch.hpp"
#include "llmprof/result.hpp"
#include "llmprof/stage.hpp"  // StageRecord, RunStatus (the manifest itself: run_directory.hpp)

namespace llmprof {

class Clock;  // llmprof/clock.hpp: SystemClock for a run, ManualClock for tests

// The stages, in the order they run (also their names in run.json).
LLMPROF_API const std::vector<std::string>& deep_profile_stage_names();

struct LLMPROF_API ProgressEvent {
  enum class Kind {
    stage_started,   // `stage` begins; message says what it will do
    stage_finished,  // `status` and message (the reason when not ok)
    message,         // a line worth showing (a warning, a diagnosis, a fallback)
    tool_progress,   // a profiler's own progress ("Processing events...", ncu kernel n/N)
  };
  Kind kind = Kind::message;
  std::string stage;
  std::string message;
  std::chrono::nanoseconds elapsed{0};  // since run() started
  std::optional<StageStatus> status;    // stage_finished only
  bool warning = false;                 // message: a warning rather than information
  // ncu progress, from "==PROF== Profiling "NAME" - 3 (4/40): ... - 17 passes".
  std::string kernel_name;
  int kernel_index = 0;  // 1-based n of n/N; 0 when not a kernel event
  int kernel_total = 0;
  int passes = 0;             // replay passes of the kernel just profiled; 0 while unknown
  std::string plan_progress;  // under the per-kernel ncu plan: "launch 3 of 40 planned, ETA 22 s"
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

// How a run ended: the same type and names as run.json's "status" (llmprof/stage.hpp), so a harness,
// the CLI's summary and run.json never disagree. Never `running` for a run that returned.
using RunOutcome = RunStatus;
// The exit status of a run that ended this way: ok 0, hardware_limited 0 (everything the machine allows ran),
// incomplete 1, failed 1, environment 3, timeout 124, interrupted 130 (README "Exit codes"), for
// `deep-profile run` and every tool that runs one.
LLMPROF_API ExitCode exit_code_for(RunOutcome outcome) noexcept;

struct LLMPROF_API RunSummary {
  std::filesystem::path main_directory;
  RunOutcome outcome = RunOutcome::running;
  // outcome == ok: every stage asked for succeeded. False under hardware_limited too: stages were skipped.
  bool all_requested_succeeded = false;
  // The stages skipped because this machine lacks the hardware they need, with the reason in their records.
  std::vector<std::string> skipped_for_hardware;
  std::vector<StageRecord> stages;  // as in run.json
  std::uint64_t total_bytes = 0;
  std::vector<std::string> notes;  // diagnoses and fallbacks a user should read (e.g. the gate fix)
};

// Things about the host program that the config does not say.
struct LLMPROF_API DeepProfilerEnvironment {
  // The running deep-profile (or harness) executable; the bundled example is looked for beside it.
  std::filesystem::path executable;
  // Additional places to look for llmprof-decode (build trees, install prefixes), after the defaults.
  std::vector<std::filesystem::path> example_search_directories;
  // Where the configuration was looked for (deep-profile: $LLMPROF_CONFIG_DIR, <prefix>/share/llmprof/config, the
  // source tree's config/): ncu.set = "llmprof" reads its section from ncu-sections/ under the first that has it,
  // then under <executable>/../share/llmprof/config and the install's and source tree's configuration.
  std::vector<std::filesystem::path> config_directories;
  std::string path_variable;  // PATH used to find nsys/ncu; empty: this process's PATH
  bool use_default_tool_locations = true;
  std::vector<std::filesystem::path> extra_tool_search_roots;
  bool attach_log_file = true;  // send log lines to MAIN/deep-profile.log while running
  // Set: whether this machine has an NVIDIA driver, instead of reading /proc/driver/nvidia/version (a harness that
  // knows better, or a test of a GPU machine's paths on a machine without one).
  std::optional<bool> nvidia_driver_present;
  // Set: stage1, nsys and ncu run through this launcher, one `deep-profile rank-exec` per rank
  // (`executable` must then be deep-profile itself); results land in MAIN/ranks/r<k>/.
  std::optional<RankLaunch> rank_launch;
};

class LLMPROF_API DeepProfiler {
 public:
  DeepProfiler(DeepProfileConfig config, ProcessRunner& runner, const Clock& clock, ProgressCallback progress = {},
               DeepProfilerEnvironment environment = {});
  ~DeepProfiler();
  DeepProfiler(const DeepProfiler&) = delete;
  DeepProfiler& operator=(const DeepProfiler&) = delete;

  // Runs every stage. An Error, before anything runs or is written, when the configuration fails
  // validate_config (invalid_argument naming the key), when no run directory could be made or the workload
  // cannot be resolved (unwritable runs root, bundled example not built, invalid run id); everything later
  // is a stage status inside the summary.
  Result<RunSummary> run();

  // Continues the run in `main` (created by run() with this configuration: MAIN/config.toml, see
  // load_recorded_config) from its first stage after the probe that is not ok. The probe runs again; the
  // stages before that point keep their records and files, and their outputs are read back from MAIN; the
  // files of the stages that run again move to MAIN/attempts/<n>/; run.json gains a "resumptions" entry.
  // Errors (nothing changed in MAIN): another deep-profile holds MAIN/run.lock, every stage is ok already,
  // the workload's command, environment or files (executable, scripts: sizes and modification times
  // recorded in inputs.json) changed, nsys or ncu differ from env.json, the run predates fingerprints, or it
  // ran under a launcher.
  Result<RunSummary> resume(const std::filesystem::path& main);

  // Stops the run: the current stage's process tree is stopped and the stage marked interrupted;
  // later stages do not start. Safe from any thread (e.g. a signal-handling thread).
  void request_stop() noexcept;

 private:
  DeepProfileConfig config_;
  ProcessRunner& runner_;
  const Clock& clock_;
  ProgressCallback progress_;
  DeepProfilerEnvironment environment_;
  std::atomic<bool> stop_requested_{false};
};

// The configuration a run recorded (MAIN/config.toml), for DeepProfiler::resume.
LLMPROF_API Result<DeepProfileConfig> load_recorded_config(const std::filesystem::path& main);

// One human line for a progress event: "[  12.3s] ncu     kernel 4/40 reduce_kernel (17 passes)".
LLMPROF_API std::string format_progress_event(const ProgressEvent& event);

}  // namespace llmprof
