// Private pieces of the timeline engine shared by its files: the range index (which NVTX range
// instances enclose a moment on a thread) and the per-instance accumulation state.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "llmprof/timeline.hpp"
#include "parse/nsys_sqlite.hpp"

namespace llmprof::detail {

inline constexpr std::size_t kNoRange = std::numeric_limits<std::size_t>::max();

// NVTX range instances by thread, with each one's innermost enclosing range, so the instances open
// on a thread at time t are found by one binary search and a walk up the parents.
class RangeIndex {
 public:
  explicit RangeIndex(std::vector<NvtxRangeRow> ranges);

  const std::vector<NvtxRangeRow>& ranges() const { return ranges_; }
  std::size_t parent(std::size_t range) const { return parent_[range]; }

  template <typename Visit>
  void for_each_enclosing(std::int64_t thread, std::int64_t time_ns, Visit visit) const {
    auto found = by_thread_.find(thread);
    if (found == by_thread_.end()) return;
    const auto& order = found->second;
    // The last range on the thread that started at or before `time_ns`.
    std::size_t low = 0, high = order.size();
    while (low < high) {
      const std::size_t middle = (low + high) / 2;
      if (ranges_[order[middle]].start_ns <= time_ns)
        low = middle + 1;
      else
        high = middle;
    }
    if (low == 0) return;
    // Properly nested ranges enclosing t are all ancestors of that range (or the range itself).
    for (std::size_t range = order[low - 1]; range != kNoRange; range = parent_[range]) {
      if (ranges_[range].end_ns >= time_ns) visit(range);
    }
  }

 private:
  std::vector<NvtxRangeRow> ranges_;  // in start order
  std::vector<std::size_t> parent_;
  std::unordered_map<std::int64_t, std::vector<std::size_t>> by_thread_;
};

// Synchronise calls of one thread, merged and in time order, to tell GPU idle time spent waiting.
class SyncIntervals {
 public:
  void add(std::int64_t start_ns, std::int64_t end_ns);
  std::int64_t overlap_ns(std::int64_t start_ns, std::int64_t end_ns) const;

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals_;
};

// Running state of one instance or stage while GPU activities stream by in start order.
struct BusyAccumulator {
  std::int64_t merged_end_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t busy_ns = 0;
  // Adds [start, end); returns the idle gap [gap_start, start) it closes (empty when none).
  std::pair<std::int64_t, std::int64_t> add(std::int64_t start_ns, std::int64_t end_ns);
};

// The graph replays of one stage as its GPU activities stream by in start order (see GraphReplayGaps).
class GraphReplayTracker {
 public:
  // One GPU activity of a graph (in_graph, with a launch thread). `unrecorded_launches`: the start times,
  // sorted, of that thread's graph launch calls without a GPU record; nullptr when none.
  void add(const GpuActivityRow& activity, const std::vector<std::int64_t>* unrecorded_launches);
  // The figures once every activity was added; nullopt without a pair of consecutive recorded replays.
  std::optional<GraphReplayGaps> finish();

 private:
  struct Replay {
    std::int64_t launch_start_ns = 0;
    std::int64_t launch_end_ns = 0;
    std::int64_t gpu_start_ns = 0;
    std::int64_t gpu_end_ns = 0;
  };
  void close(const Replay& previous, const Replay& next, const std::vector<std::int64_t>* unrecorded_launches);

  std::unordered_map<std::int64_t, Replay> latest_;  // launching thread -> its replay still receiving work
  std::int64_t replays_ = 0;
  std::int64_t gap_before_launch_ns_ = 0;
  std::vector<std::int64_t> gaps_, host_between_, replay_gpu_;
};

// The verdict's sentence on a stage's graph replays: the gaps per replay, how much of them the GPU waited for
// the host to call the next replay, and the host's time between launch calls against a replay's GPU time.
std::string graph_replay_sentence(const GraphReplayGaps& replays);

struct KernelTotals {
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
  bool from_graph = false;
};

// Everything the engine gathers before stage figures are derived (timeline_stages.cpp).
struct TimelineGathered {
  RangeIndex index;
  std::vector<TimelineInstance> instances;                      // parallel to index.ranges()
  std::vector<std::size_t> stage_of;                            // range -> stage
  std::vector<std::pair<std::string, std::string>> stage_keys;  // stage -> (domain, name)
  std::vector<BusyAccumulator> stage_busy;
  std::vector<std::int64_t> stage_gpu_start;                        // first GPU start per stage (max when none)
  std::vector<std::map<std::int64_t, KernelTotals>> stage_kernels;  // stage -> name id -> totals
  std::map<std::int64_t, std::string> names;                        // name id -> kernel name
  std::vector<GraphReplayTracker> stage_replays;                    // stage -> its graph replays
  // Launching thread -> start times (sorted) of its graph launch calls whose GPU work has no record.
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> unrecorded_graph_launches;
};

// Names for activities without a kernel name (negative ids in stage_kernels).
inline constexpr std::int64_t kMemcpyNameId = -2;
inline constexpr std::int64_t kMemsetNameId = -3;
inline constexpr std::int64_t kGraphNameId = -4;

// Stage figures, verdicts and measurement validity from the gathered instances.
void build_stages(TimelineGathered& gathered, const TimelineOptions& options, TimelineReport& report);

// Nearest-rank summary of values (sorted in place).
DurationSummary summarize_durations(std::vector<std::int64_t> values);

}  // namespace llmprof::detail
