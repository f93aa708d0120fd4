// Gaps between consecutive CUDA graph replays (see GraphReplayGaps in llmprof/timeline.hpp). Under graphs a
// step's kernels cost one launch call, so what is left between replays is the host's own work per step (sampling,
// bookkeeping, the replay call) and the replay's launch latency; the recorded H100 graph decode
// (tests/data/nsys-sqlite/graphtrace.sqlite, nsys 2025.3) shows the GPU 16 µs apart between replays while the
// host called each next replay long before the GPU reached it.
#include <algorithm>

#include "analysis/timeline_model.hpp"
#include "core/format.hpp"

namespace llmprof::detail {

void GraphReplayTracker::add(const GpuActivityRow& activity, const std::vector<std::int64_t>* unrecorded_launches) {
  if (!activity.launch_thread) return;
  const Replay next{activity.launch_start_ns, activity.launch_end_ns, activity.start_ns, activity.end_ns};
  auto [latest, first] = latest_.try_emplace(*activity.launch_thread, next);
  if (first) {
    ++replays_;
    return;
  }
  Replay& current = latest->second;
  if (activity.launch_start_ns == current.launch_start_ns) {  // another node of the same replay
    current.gpu_end_ns = std::max(current.gpu_end_ns, activity.end_ns);
    return;
  }
  // A node of an earlier replay starting after the next replay began (work on a second stream): that replay
  // is closed already, its gap measured.
  if (activity.launch_start_ns < current.launch_start_ns) return;
  ++replays_;
  close(current, next, unrecorded_launches);
  current = next;
}

void GraphReplayTracker::close(const Replay& previous, const Replay& next,
                               const std::vector<std::int64_t>* unrecorded_launches) {
  replay_gpu_.push_back(previous.gpu_end_ns - previous.gpu_start_ns);
  if (unrecorded_launches != nullptr) {
    // A graph launch between the two whose GPU work was lost: the recorded two are not neighbours.
    const auto lost = std::upper_bound(unrecorded_launches->begin(), unrecorded_launches->end(),
                                       previous.launch_start_ns);
    if (lost != unrecorded_launches->end() && *lost < next.launch_start_ns) return;
  }
  const std::int64_t gap = std::max<std::int64_t>(0, next.gpu_start_ns - previous.gpu_end_ns);
  gaps_.push_back(gap);
  if (gap > 0) {
    gap_before_launch_ns_ +=
        std::clamp(next.launch_start_ns, previous.gpu_end_ns, next.gpu_start_ns) - previous.gpu_end_ns;
  }
  host_between_.push_back(std::max<std::int64_t>(0, next.launch_start_ns - previous.launch_end_ns));
}

std::optional<GraphReplayGaps> GraphReplayTracker::finish() {
  for (const auto& [thread, replay] : latest_) replay_gpu_.push_back(replay.gpu_end_ns - replay.gpu_start_ns);
  latest_.clear();
  if (gaps_.empty()) return std::nullopt;
  GraphReplayGaps figures;
  figures.replays = replays_;
  figures.gap = summarize_durations(std::move(gaps_));
  figures.gap_before_launch_ns = gap_before_launch_ns_;
  figures.host_between_launches = summarize_durations(std::move(host_between_));
  figures.replay_gpu = summarize_durations(std::move(replay_gpu_));
  return figures;
}

std::string graph_replay_sentence(const GraphReplayGaps& replays) {
  const auto& gap = replays.gap;
  std::string text = "between consecutive graph replays (" + std::to_string(gap.count) +
                     (gap.count == 1 ? " pair" : " pairs") + ") the GPU waited " + format_duration_ns(gap.mean_ns) +
                     " per replay (median " + format_duration_ns(static_cast<double>(gap.p50_ns)) + ", max " +
                     format_duration_ns(static_cast<double>(gap.max_ns)) + ")";
  if (gap.total_ns > 0) {
    const double before = static_cast<double>(replays.gap_before_launch_ns);
    text += before > 0 ? ", " + format_fraction_percent(before / static_cast<double>(gap.total_ns)) +
                             " of that time before the host called the next replay"
                       : ", none of it for the host to call the next replay";
  }
  text += "; the host took " + format_duration_ns(replays.host_between_launches.mean_ns) +
          " per step between one replay's launch call and the next, against " +
          format_duration_ns(replays.replay_gpu.mean_ns) + " of GPU time per replay";
  return text;
}

}  // namespace llmprof::detail
