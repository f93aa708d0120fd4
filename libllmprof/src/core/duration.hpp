// Durations from outside (config seconds, timeouts) turned into clock arithmetic without overflow:
// `workload.timeout_s = 1e10` once wrapped steady_clock's int64 nanoseconds and killed the workload
// at 0.0 s. Every conversion saturates instead.
#pragma once

#include <chrono>
#include <optional>

namespace llmprof::detail {

// The longest duration llmprof schedules: 100 years, far beyond any run, far below the ~292 years
// steady_clock's int64 nanoseconds hold from boot.
inline constexpr std::chrono::milliseconds kLongestDuration{std::chrono::hours(24 * 365 * 100)};

// Seconds as milliseconds: not positive or nan -> 0 (no limit), above kLongestDuration (inf
// included) -> kLongestDuration.
std::chrono::milliseconds seconds_to_milliseconds(double seconds);

// start + duration, or nullopt when that point lies beyond what the clock can represent (a deadline
// that far away is no deadline).
std::optional<std::chrono::steady_clock::time_point> deadline_after(std::chrono::steady_clock::time_point start,
                                                                    std::chrono::milliseconds duration);

}  // namespace llmprof::detail
