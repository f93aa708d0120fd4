// Stretches of time on one clock and their union: the stage's range instances the ncu plan counts launches in, the
// NVTX windows whose GPU metric samples count once, the collective and compute kernels of one rank.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace llmprof::detail {

// [first, second] in nanoseconds on the capture's clock.
using TimeInterval = std::pair<std::int64_t, std::int64_t>;

// The union of `intervals`, sorted by start and disjoint. Intervals that overlap or touch become one: two instances
// of a range that overlap (recorded twice, or open on two threads at once) cover one stretch of GPU time.
std::vector<TimeInterval> merge_intervals(std::vector<TimeInterval> intervals);

}  // namespace llmprof::detail
