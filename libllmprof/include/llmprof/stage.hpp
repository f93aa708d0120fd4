// Stage: the stages of a deep-profile run, in the order they run, and the one table of their names; what
// run.json records of each stage (StageRecord) and of the run (RunStatus). A harness that runs the pipeline
// needs these and not the rest of the manifest (run_directory.hpp).
//
// A stage's name is what run.json records (StageRecord::name), what progress lines and the log show, and
// the folder its files go to where it has one. The bare run of the workload is Stage::workload; its
// recorded name and folder stay "stage1" so that run directories written before this enum read the same.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/export.hpp"

namespace llmprof {

enum class Stage { probe, workload, nsys, select, ncu, analyze, report };

// Every stage, in the order a run runs them.
inline constexpr std::array<Stage, 7> kStages = {Stage::probe, Stage::workload, Stage::nsys,  Stage::select,
                                                 Stage::ncu,   Stage::analyze,  Stage::report};

// The recorded name: probe, stage1, nsys, select, ncu, analyze, report.
LLMPROF_API const char* to_string(Stage stage) noexcept;
// The stage a recorded name stands for; nullopt for a name that is no stage.
LLMPROF_API std::optional<Stage> parse_stage(std::string_view name) noexcept;

enum class StageStatus { pending, running, ok, skipped, failed, interrupted };
LLMPROF_API const char* to_string(StageStatus status) noexcept;

// One rank's share of a stage run under a launcher (`deep-profile run --launcher`).
struct LLMPROF_API RankRecord {
  int rank = 0;
  int local_rank = 0;
  std::string host;
  std::string role;  // "nsys" / "ncu" (profiled on this rank) or "bare"
  StageStatus status = StageStatus::pending;
  std::string reason;  // why not ok
  std::optional<int> exit_code;
  double duration_s = 0;
  std::string directory;  // relative to MAIN, e.g. "ranks/r1/nsys"
};

struct LLMPROF_API StageRecord {
  std::string name;  // probe, stage1, nsys, select, ncu, analyze, report
  StageStatus status = StageStatus::pending;
  std::string reason;  // why skipped/failed/interrupted, in words a user can act on
  std::string started_utc;
  double duration_s = 0;
  std::optional<int> exit_code;
  std::optional<std::string> command;   // the exact command, shell-quoted
  std::optional<std::string> cmd_file;  // relative to MAIN, e.g. "nsys/cmd.txt"
  std::optional<std::string> log_file;  // relative to MAIN
  std::vector<std::string> artifacts;   // relative to MAIN
  std::vector<std::string> warnings;
  // Workloads the stage ended on purpose, one line each ("pass 1 ended the workload after its 16 planned
  // launches at 19.6 s"): their exit code is not a failure. Absent from run.json when empty.
  std::vector<std::string> workload_endings;
  // The ncu stage: the ncu.set whose metrics fed the figures ("llmprof": libllmprof's own section; else ncu's
  // --set). Absent from run.json for other stages and in runs recorded before it existed.
  std::optional<std::string> ncu_set;
  std::vector<RankRecord> ranks;  // stages run under a launcher: one per rank (absent from run.json otherwise)
};

// How a run stands: run.json's "status", RunSummary::outcome (RunOutcome is this type) and the summary line
// the CLI prints share these names. A finished run is never `running`.
enum class RunStatus {
  running,           // not finished (or killed before it could say how it ended)
  ok,                // every stage that was asked for succeeded
  hardware_limited,  // every stage this machine can run succeeded; stages needing hardware it lacks (an
                     // NVIDIA GPU and driver: kernel selection, ncu) were skipped, each saying so
  incomplete,        // a requested stage failed or was skipped for another reason (the run kept what it could)
  failed,            // the workload itself failed (bare run), so nothing was measured
  environment,       // only the machine was lacking: a profiler missing, too little free space
  timeout,           // a stage ran past its timeout; its process tree was killed
  interrupted,       // SIGINT/SIGTERM (request_stop) stopped the run
  bad_input,         // an input the run needs is missing: the workload program does not exist (README exit 4)
};
LLMPROF_API const char* to_string(RunStatus status) noexcept;

}  // namespace llmprof
