// A meeting point for tasks that must run side by side: each arrives, then waits for the others. Run one after
// another, none would meet the rest; each gives up after a while rather than hang the suite (no time is asserted).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace llmprof::testing {

class Rendezvous {
 public:
  explicit Rendezvous(int expected) : expected_(expected) {}

  // True when all `expected` tasks arrived while this one waited (at most a minute).
  bool arrive_and_wait() {
    std::unique_lock lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    return changed_.wait_for(lock, std::chrono::minutes(1), [&] { return arrived_ >= expected_; });
  }

 private:
  const int expected_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
};

}  // namespace llmprof::testing
