// Profiling under a launcher: `deep-profile run --launcher 'srun -n 2' [--ranks 0,1] -- CMD`.
//
// For each stage that runs the workload (stage1, nsys, ncu) the pipeline runs
// `<launcher> deep-profile rank-exec --run-directory MAIN --stage S [--ranks LIST] -- CMD` once. Every
// rank-exec resolves its rank from the launcher's variables (rank.hpp), runs the profiler on the
// ranks selected for the stage and the workload bare on the others, and writes only under
// MAIN/ranks/r<rank>/<stage>/ (output.log, status.json): nothing is shared between ranks. The
// pipeline then reads every rank's status.json into run.json and post-processes the reports.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/export.hpp"
#include "llmprof/process.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// The launcher words a user gave, checked.
struct LLMPROF_API Launcher {
  std::vector<std::string> words;  // e.g. {"srun", "-n", "2"}; torchrun gains --no-python when absent
  std::string family;              // srun | mpirun | torchrun (mpiexec/orterun count as mpirun)
  std::optional<int> world_size;   // from -n/-np/--ntasks or --nproc-per-node x --nnodes, when given
};

// Splits and checks launcher words: the first word must be a known launcher (srun, mpirun,
// mpiexec, orterun, torchrun); anything else is invalid_argument naming the known ones.
LLMPROF_API Result<Launcher> parse_launcher(std::string_view words);

// "0,3" or "0-3" pieces, comma-separated, distinct, non-negative, sorted on return.
LLMPROF_API Result<std::vector<int>> parse_rank_list(std::string_view text);
LLMPROF_API std::string format_rank_list(const std::vector<int>& ranks);  // "0,3"

// How deep-profile run launches its workload stages (DeepProfilerEnvironment::rank_launch).
struct LLMPROF_API RankLaunch {
  Launcher launcher;
  // Ranks profiled by nsys and ncu. nullopt: every rank under nsys, rank 0 under ncu.
  std::optional<std::vector<int>> ranks;
};

// One rank's share of a stage, as `deep-profile rank-exec` runs it.
struct RankExecRequest;
// The rank a launcher gave this process (llmprof/rank.hpp, which run_rank_exec's callers include).
struct RankIdentity;

// The words after the deep-profile executable that start `request` under a launcher, up to and
// including the "--" before CMD: {"rank-exec", "--run-directory", MAIN, "--stage", S, ["--ranks", L,] "--"}.
// They must pass through every launcher's own parser untouched. torchrun's (Python argparse) reads
// every option-like word, even after its program, as an abbreviation of its own options: a word
// that is a prefix of one is taken or refused (torchrun 2.11 refused `--run`, a prefix of
// `--run-path` and `--run_path`), so none of these option names may be a prefix of a
// launcher option (tests/unit/rank_launch_test.cpp checks them against recorded `--help` output).
LLMPROF_API std::vector<std::string> rank_exec_arguments(const RankExecRequest& request);

struct LLMPROF_API RankExecRequest {
  std::filesystem::path main_directory;
  std::string stage;                      // stage1 | nsys | ncu
  std::optional<std::vector<int>> ranks;  // ranks that run the profiler; nullopt: every rank
  std::vector<std::string> workload;      // CMD
  // The rank's CUDA_VISIBLE_DEVICES (the caller reads its environment; never a rank-exec option): a rank that
  // sees one GPU samples only that one's GPU metrics.
  std::optional<std::string> cuda_visible_devices;
};

// What rank-exec recorded in MAIN/ranks/r<rank>/<stage>/status.json; exit_code is what the
// rank-exec process should exit with (the workload's or profiler's, 124 after a timeout, 2 for a
// bad request, 130 when stopped).
struct LLMPROF_API RankExecResult {
  int exit_code = 0;
  std::string summary;  // one line for stderr
};

// Runs the rank's share: reads the stage plan the pipeline wrote (MAIN/ranks/<stage>.plan.json),
// runs the profiler or the workload bare with the plan's timeout (a timeout kills the rank's whole
// process tree), and writes status.json before and after. An Error only when MAIN or the plan
// cannot be read, so that nothing can be recorded (the caller prints it and exits 2).
LLMPROF_API Result<RankExecResult> run_rank_exec(const RankExecRequest& request, const RankIdentity& identity,
                                     ProcessRunner& runner);

}  // namespace llmprof
