// SweepPointJob: one point of a sweep into SWEEP/point-<I>/, run once (see sweep_batch.hpp).
#include <fstream>
#include <sstream>

#include "core/file_text.hpp"
#include "llmprof/sweep.hpp"
#include "llmprof/sweep_batch.hpp"
#include "rundir/run_lock.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace {

// A run that said how it ended is not run again; one still `running` was killed, and an interrupted one was
// stopped on purpose: both run again.
bool finished(RunStatus status) { return status != RunStatus::running && status != RunStatus::interrupted; }

// run.json of `main`: nullopt when there is none (an attempt killed before it wrote one left nothing
// to keep); an Error when one is there but cannot be read, since it may belong to a finished point
// whose data (nsys report, SQLite) is intact, and that is never a reason to delete the directory.
Result<std::optional<RunManifest>> read_existing_manifest(const fs::path& main, std::size_t index) {
  auto manifest = read_manifest(main);
  if (manifest) return std::optional<RunManifest>(std::move(manifest.value()));
  if (manifest.error().code == ErrorCode::not_found) return std::optional<RunManifest>();
  const fs::path file = RunLayout(main).resolve(RunLayout::manifest());
  return make_error(ErrorCode::invalid_argument,
                    "point " + std::to_string(index) + ": " + file.string() + " cannot be read (" +
                        manifest.error().message + "); the point directory is kept, not deleted and run again",
                    "repair or move " + main.string() + " by hand, then run the point again", file.string());
}

// run.json when it can be read (an unfinished or broken attempt counts as no run).
std::optional<RunManifest> readable_manifest(const fs::path& main) {
  auto manifest = read_manifest(main);
  if (!manifest) return std::nullopt;
  return manifest.value();
}

// The finished run already in `main`, if there is one; otherwise `main` is made free for a new run:
// whatever an unfinished attempt left is removed. already_exists while another process runs it.
Result<std::optional<RunManifest>> finished_run_or_clear(const fs::path& main, std::size_t index) {
  std::error_code error;
  if (!fs::exists(main, error)) return std::optional<RunManifest>();
  // Locked first: a run that holds its run.lock is going on in another process (a second task of
  // the same point), and its directory must not be touched.
  detail::RunLock lock;
  if (detail::try_lock_finished_run(main, lock) == detail::RunLockState::held_elsewhere) {
    return make_error(ErrorCode::already_exists,
                      "point " + std::to_string(index) + " is being run by another process in " + main.string(),
                      "wait for it to end (squeue lists its task), or stop it (scancel) and run this point again",
                      main.string());
  }
  auto manifest = read_existing_manifest(main, index);
  if (!manifest) return manifest.error();
  if (*manifest && finished((*manifest)->status)) return *manifest;
  fs::remove_all(main, error);
  if (error) {
    return make_error(ErrorCode::io_error,
                      "could not remove the unfinished attempt of point " + std::to_string(index) + " in " +
                          main.string() + ": " + error.message(),
                      "remove the directory by hand and run the point again", main.string());
  }
  return std::optional<RunManifest>();
}

}  // namespace

ExitCode SweepPointResult::exit_code() const noexcept {
  if (outcome) return exit_code_for(*outcome);
  return status == RunStatus::ok ? exit_ok : exit_incomplete;
}

SweepPointJob::SweepPointJob(DeepProfileConfig config, fs::path sweep_directory, std::size_t index,
                             ProcessRunner& runner, const Clock& clock, ProgressCallback progress,
                             DeepProfilerEnvironment environment)
    : config_(std::move(config)),
      sweep_directory_(std::move(sweep_directory)),
      index_(index),
      runner_(runner),
      clock_(clock),
      progress_(std::move(progress)),
      environment_(std::move(environment)) {}

void SweepPointJob::request_stop() noexcept {
  stop_requested_.store(true);
  std::lock_guard<std::mutex> lock(mutex_);
  if (profiler_ != nullptr) profiler_->request_stop();
}

Result<SweepPointResult> SweepPointJob::run() {
  SweepPointResult result;
  result.main_directory = sweep_point_directory(sweep_directory_, index_);
  std::error_code error;
  fs::create_directories(sweep_directory_, error);
  if (error) {
    return make_error(ErrorCode::io_error,
                      "could not create the sweep directory " + sweep_directory_.string() + ": " + error.message(),
                      "choose a writable --sweep-dir (on a cluster: a file system every node shares)",
                      sweep_directory_.string());
  }
  auto existing = finished_run_or_clear(result.main_directory, index_);
  if (!existing) return existing.error();
  if (existing->has_value()) {
    result.already_finished = true;
    result.status = (*existing)->status;
    return result;
  }
  if (stop_requested_.load())
    return make_error(ErrorCode::interrupted, "point " + std::to_string(index_) + " not run: stopped");
  config_.run.runs_root = sweep_directory_;
  config_.run.run_id = result.main_directory.filename().string();
  config_.run.keep_newest_runs = 0;
  DeepProfiler profiler(config_, runner_, clock_, progress_, environment_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    profiler_ = &profiler;
    if (stop_requested_.load()) profiler.request_stop();  // a stop that came while the profiler was made
  }
  auto summary = profiler.run();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    profiler_ = nullptr;
  }
  if (!summary) return summary.error();
  result.outcome = summary->outcome;
  auto manifest = readable_manifest(result.main_directory);
  result.status = manifest ? manifest->status : RunStatus::failed;
  return result;
}

}  // namespace llmprof
