// merge_intervals, the one union of time intervals the ncu plan (stage instances), the sampled utilisation (NVTX
// windows) and the cross-rank overlap use.
#include <catch2/catch.hpp>

#include "analysis/time_intervals.hpp"

using llmprof::detail::merge_intervals;
using llmprof::detail::TimeInterval;

TEST_CASE("merge_intervals joins overlapping and touching intervals and returns them in start order") {
  // Out of order; [10, 20] overlaps [15, 30], which touches [30, 35]; [50, 60] stands alone; [12, 14] lies inside.
  const std::vector<TimeInterval> merged = merge_intervals({{50, 60}, {15, 30}, {10, 20}, {30, 35}, {12, 14}});
  CHECK(merged == std::vector<TimeInterval>{{10, 35}, {50, 60}});
}

TEST_CASE("merge_intervals keeps disjoint intervals apart and an empty list empty") {
  CHECK(merge_intervals({{5, 6}, {1, 2}}) == std::vector<TimeInterval>{{1, 2}, {5, 6}});
  CHECK(merge_intervals({}).empty());
  // A zero-length instance (a range opened and closed at one timestamp) is kept, not dropped.
  CHECK(merge_intervals({{7, 7}}) == std::vector<TimeInterval>{{7, 7}});
}
