// The index of a sweep whose points ran as separate processes (SWEEP/point-<I>/), see sweep.hpp.
#include <fstream>
#include <sstream>

#include "core/file_text.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/sweep.hpp"
#include "rundir/run_lock.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace {

fs::path task_log(const fs::path& sweep_directory, std::size_t index) {
  return sweep_directory / "logs" / ("point-" + std::to_string(index) + ".out");
}

// What SWEEP/point-<I>/ says about point I: its directory when a run is there, an error when the
// point did not leave a finished run.
SweepPointOutcome point_outcome(const SweepPoint& point, const fs::path& sweep_directory, std::size_t index) {
  SweepPointOutcome outcome{point, std::nullopt, std::nullopt};
  const fs::path main = sweep_point_directory(sweep_directory, index);
  const std::string rerun = "see " + task_log(sweep_directory, index).string() +
                            "; run the point again with `deep-profile sweep --plan PLAN --point-index " +
                            std::to_string(index) + "`";
  auto manifest = read_manifest(main);
  if (!manifest && manifest.error().code == ErrorCode::not_found) {
    outcome.error = make_error(ErrorCode::not_found,
                               "point " + std::to_string(index) + " left no run.json in " + main.string() +
                                   ": its task did not start, or failed before creating the run directory",
                               rerun, main.string());
    return outcome;
  }
  outcome.main_directory = main;
  if (!manifest) {
    outcome.error =
        make_error(ErrorCode::parse_error, "point " + std::to_string(index) + ": " + manifest.error().message, rerun,
                   main.string());
    return outcome;
  }
  if (manifest->status != RunStatus::running) return outcome;
  // run.json is rewritten after every stage, so "running" is also what a killed run leaves; the
  // flock tells the two apart (the kernel drops it when its holder dies, even on SIGKILL).
  detail::RunLock lock;
  if (detail::try_lock_finished_run(main, lock) == detail::RunLockState::held_elsewhere) return outcome;
  outcome.error =
      make_error(ErrorCode::interrupted,
                 "point " + std::to_string(index) +
                     " stopped without finishing: run.json still says running and "
                     "no process holds its run.lock (the task was killed: time limit, scancel or a node failure)",
                 rerun, main.string());
  return outcome;
}

}  // namespace

fs::path sweep_point_directory(const fs::path& sweep_directory, std::size_t index) {
  return sweep_directory / ("point-" + std::to_string(index));
}

fs::path default_sweep_directory(const fs::path& runs_root, const fs::path& plan_file) {
  return runs_root / ("sweep-" + plan_file.stem().string());
}

Result<SweepIndex> merge_sweep_points(const SweepPlan& plan, const fs::path& sweep_directory,
                                      const std::string& stage) {
  std::vector<SweepPointOutcome> outcomes;
  for (std::size_t index = 0; index < plan.points.size(); ++index) {
    outcomes.push_back(point_outcome(plan.points[index], sweep_directory, index));
  }
  SweepIndex index = build_sweep_index(outcomes, stage);
  if (auto written = write_sweep_index(index, sweep_directory); !written) return written.error();
  return index;
}

}  // namespace llmprof
