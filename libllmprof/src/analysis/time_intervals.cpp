#include "analysis/time_intervals.hpp"

#include <algorithm>

namespace llmprof::detail {

std::vector<TimeInterval> merge_intervals(std::vector<TimeInterval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<TimeInterval> merged;
  for (const auto& interval : intervals) {
    if (!merged.empty() && interval.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, interval.second);
    else
      merged.push_back(interval);
  }
  return merged;
}

}  // namespace llmprof::detail
