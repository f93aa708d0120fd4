// Clock: the one place libllmprof reads time, so tests can run the pipeline on fake time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "llmprof/export.hpp"

namespace llmprof {

class LLMPROF_API Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time for durations and timeouts.
  virtual std::chrono::steady_clock::time_point now() const = 0;
  // Wall-clock time for run ids and timestamps in manifests.
  virtual std::chrono::system_clock::time_point wall_now() const = 0;
};

// The real clocks of the machine.
class LLMPROF_API SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point wall_now() const override { return std::chrono::system_clock::now(); }
};

// A clock that moves only when told to; for tests.
class LLMPROF_API ManualClock final : public Clock {
 public:
  explicit ManualClock(std::chrono::system_clock::time_point wall_start = {}) : wall_start_(wall_start) {}
  std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::time_point{} + elapsed_;
  }
  std::chrono::system_clock::time_point wall_now() const override {
    return wall_start_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(elapsed_);
  }
  void advance(std::chrono::nanoseconds step) { elapsed_ += step; }

 private:
  std::chrono::system_clock::time_point wall_start_;
  std::chrono::nanoseconds elapsed_{0};
};

// "2026-11-22T15:31:22Z": ISO 8601 UTC with second precision, used in manifests.
LLMPROF_API std::string format_utc_iso8601(std::chrono::system_clock::time_point time);

}  // namespace llmprof
