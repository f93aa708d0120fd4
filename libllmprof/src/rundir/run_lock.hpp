// The lock a run holds on MAIN/run.lock for its whole lifetime, so that retention (another
// deep-profile process, or this one) can tell an unfinished run from a finished one without
// trusting timestamps: the kernel drops a flock when its holder exits, even on SIGKILL.
#pragma once

#include <filesystem>
#include <memory>

#include "llmprof/result.hpp"

namespace llmprof::detail {

inline constexpr const char* kRunLockName = "run.lock";

enum class RunLockState { free, held_elsewhere, absent };
class RunLock;
RunLockState try_lock_finished_run(const std::filesystem::path& main, RunLock& lock);

// An exclusive flock on a file; released when the last copy is destroyed (or the process ends).
class RunLock {
 public:
  // Creates (if needed) and locks `path`, blocking never: a lock held elsewhere is an error.
  static Result<RunLock> acquire(const std::filesystem::path& path);
  bool held() const { return descriptor_ != nullptr; }

 private:
  friend RunLockState try_lock_finished_run(const std::filesystem::path& main, RunLock& lock);

  struct Descriptor;
  std::shared_ptr<Descriptor> descriptor_;
};

// Tries the lock of run directory `main` without blocking. `free`: the run is finished (or was
// killed) and `lock` now holds it for the caller; `held_elsewhere`: the run is still going;
// `absent`: no run.lock (a run written before locks existed).
RunLockState try_lock_finished_run(const std::filesystem::path& main, RunLock& lock);

}  // namespace llmprof::detail
