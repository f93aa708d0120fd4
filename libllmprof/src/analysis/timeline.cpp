// The timeline engine's passes over the nsys SQLite export: NVTX ranges into instances, then API
// calls (launch and synchronise time, launches without a GPU record), then GPU activities in start
// order (union busy, idle gaps, kernel totals). Each pass streams; what stays in memory is one entry
// per range instance, per synchronise call and per distinct kernel name.
#include "llmprof/timeline.hpp"

#include <algorithm>

#include "analysis/timeline_model.hpp"
#include "core/enum_table.hpp"
#include "core/json_pretty.hpp"
#include "core/saturating.hpp"
#include "parse/nsys_sqlite.hpp"
#include "rundir/timeline_record_json.hpp"

namespace llmprof {
namespace detail {

RangeIndex::RangeIndex(std::vector<NvtxRangeRow> ranges) : ranges_(std::move(ranges)) {
  // Outer ranges first when two start together, so the inner one finds its parent on the stack.
  std::stable_sort(ranges_.begin(), ranges_.end(), [](const NvtxRangeRow& a, const NvtxRangeRow& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  parent_.assign(ranges_.size(), kNoRange);
  std::unordered_map<std::int64_t, std::vector<std::size_t>> open;  // thread -> stack of ranges
  for (std::size_t range = 0; range < ranges_.size(); ++range) {
    const auto& row = ranges_[range];
    by_thread_[row.thread].push_back(range);
    auto& stack = open[row.thread];
    while (!stack.empty() && ranges_[stack.back()].end_ns < row.start_ns) stack.pop_back();
    // Innermost open range that contains this one whole; a start/end range that only overlaps is
    // not a parent (its enclosure of later calls is then missed: NVTX gives no nesting for those).
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (ranges_[*it].end_ns >= row.end_ns) {
        parent_[range] = *it;
        break;
      }
    }
    stack.push_back(range);
  }
}

void SyncIntervals::add(std::int64_t start_ns, std::int64_t end_ns) {
  if (!intervals_.empty() && start_ns <= intervals_.back().second) {
    intervals_.back().second = std::max(intervals_.back().second, end_ns);  // a driver call inside a runtime call
    return;
  }
  intervals_.emplace_back(start_ns, end_ns);
}

std::int64_t SyncIntervals::overlap_ns(std::int64_t start_ns, std::int64_t end_ns) const {
  if (end_ns <= start_ns) return 0;
  auto it = std::upper_bound(intervals_.begin(), intervals_.end(), start_ns,
                             [](std::int64_t time, const auto& interval) { return time < interval.second; });
  std::int64_t total = 0;
  for (; it != intervals_.end() && it->first < end_ns; ++it)
    add_saturating(total, std::max<std::int64_t>(0, std::min(end_ns, it->second) - std::max(start_ns, it->first)));
  return total;
}

std::pair<std::int64_t, std::int64_t> BusyAccumulator::add(std::int64_t start_ns, std::int64_t end_ns) {
  std::pair<std::int64_t, std::int64_t> gap{start_ns, start_ns};
  if (start_ns > merged_end_ns) gap.first = merged_end_ns;
  if (end_ns > merged_end_ns) {
    add_saturating(busy_ns, end_ns - std::max(start_ns, merged_end_ns));
    merged_end_ns = end_ns;
  }
  return gap;
}

namespace {

// Pass 1: ranges become instances and stages (keyed by domain and name).
void gather_ranges(TimelineGathered& gathered) {
  const auto& ranges = gathered.index.ranges();
  std::map<std::pair<std::string, std::string>, std::size_t> stage_ids;
  gathered.instances.resize(ranges.size());
  gathered.stage_of.resize(ranges.size());
  for (std::size_t range = 0; range < ranges.size(); ++range) {
    const auto& row = ranges[range];
    auto [it, added] = stage_ids.try_emplace({row.domain, row.name}, gathered.stage_keys.size());
    if (added) gathered.stage_keys.emplace_back(row.domain, row.name);
    gathered.stage_of[range] = it->second;
    auto& instance = gathered.instances[range];
    instance.cpu_start_ns = row.start_ns;
    instance.cpu_end_ns = row.end_ns;
    instance.thread = row.thread;
  }
  const std::size_t stages = gathered.stage_keys.size();
  gathered.stage_busy.resize(stages);
  gathered.stage_gpu_start.assign(stages, std::numeric_limits<std::int64_t>::max());
  gathered.stage_kernels.resize(stages);
  gathered.stage_replays.resize(stages);
}

// Pass 2: API calls, attributed to the instances open on their thread when they start.
Result<void> gather_api_calls(const NsysSqliteReader& reader, TimelineGathered& gathered,
                              std::unordered_map<std::int64_t, SyncIntervals>& sync_by_thread) {
  return reader.for_each_api_call([&](const ApiCallRow& call) {
    const std::int64_t duration = call.end_ns - call.start_ns;
    const bool sync = call.kind == ApiCallKind::synchronize;
    if (sync) sync_by_thread[call.thread].add(call.start_ns, call.end_ns);
    if (call.kind == ApiCallKind::graph_launch && !call.has_gpu_record)
      gathered.unrecorded_graph_launches[call.thread].push_back(call.start_ns);
    gathered.index.for_each_enclosing(call.thread, call.start_ns, [&](std::size_t range) {
      auto& instance = gathered.instances[range];
      if (sync) {
        add_saturating(instance.sync_api_ns, duration);
        return;
      }
      add_saturating(instance.launch_api_ns, duration);
      ++instance.loss.launches;
      if (!call.has_gpu_record) ++instance.loss.launches_without_record;
      if (call.kind == ApiCallKind::graph_launch) {
        ++instance.loss.graph_launches;
        if (!call.has_gpu_record) ++instance.loss.graph_launches_without_record;
      }
    });
  });
}

// The name id of an activity that has no kernel name of its own, one row per GpuActivityKind in declaration order
// (a kernel's row is never read: its id is the activity's).
constexpr detail::EnumRow<GpuActivityKind, std::int64_t> kActivityNameIds[] = {
    {GpuActivityKind::kernel, kGraphNameId},
    {GpuActivityKind::memory_copy, kMemcpyNameId},
    {GpuActivityKind::memory_set, kMemsetNameId},
    {GpuActivityKind::graph_execution, kGraphNameId}};
static_assert(detail::rows_in_enum_order(kActivityNameIds));

std::int64_t kernel_name_id(const GpuActivityRow& activity) {
  if (activity.kind == GpuActivityKind::kernel) return activity.name_id;
  return detail::enum_value(kActivityNameIds, activity.kind, kGraphNameId);
}

// GPU work cannot start before the call that launched it; a GPU start stamped earlier is the skew
// between CPU and GPU clocks (or a damaged file), and taken as is it would put busy time before the
// instance's window, outside the span its busy fraction is measured over.
GpuActivityRow started_after_launch(const GpuActivityRow& activity) {
  GpuActivityRow clipped = activity;
  if (activity.launch_thread && clipped.start_ns < activity.launch_start_ns) {
    clipped.start_ns = activity.launch_start_ns;
    clipped.end_ns = std::max(clipped.end_ns, clipped.start_ns);
  }
  return clipped;
}

// Idle gap [gap_start, gap_end) of an instance closed by an activity launched at [launch_start, ...).
void attribute_gap(IdleAttribution& idle, std::int64_t gap_start, std::int64_t gap_end, std::int64_t launch_start,
                   const SyncIntervals* sync) {
  if (gap_end <= gap_start) return;
  const std::int64_t launching_from = std::clamp(launch_start, gap_start, gap_end);
  add_saturating(idle.host_launching_ns, gap_end - launching_from);
  const std::int64_t waited = sync != nullptr ? sync->overlap_ns(gap_start, launching_from) : 0;
  add_saturating(idle.host_in_sync_ns, waited);
  add_saturating(idle.nothing_launched_ns, launching_from - gap_start - waited);
}

}  // namespace
}  // namespace detail

namespace detail {
namespace {

struct GpuPassTotals {
  std::int64_t activities = 0;
  std::int64_t gpu_time_ns = 0;  // summed duration of every activity, attributed or not
  std::int64_t unattributed = 0;
  bool saw_graph_execution = false;
  bool saw_graph_node = false;
};

// Pass 3: GPU activities in start order; each feeds the union busy of every instance (and stage) of
// its launching call, and the gap it closes is attributed to what that thread was doing.
Result<GpuPassTotals> gather_gpu_activities(const NsysSqliteReader& reader, TimelineGathered& gathered,
                                            const std::unordered_map<std::int64_t, SyncIntervals>& sync_by_thread,
                                            std::vector<BusyAccumulator>& instance_busy) {
  GpuPassTotals totals;
  std::vector<std::size_t> touched_stages;
  auto visited = reader.for_each_gpu_activity([&](const GpuActivityRow& recorded) {
    const GpuActivityRow activity = started_after_launch(recorded);
    ++totals.activities;
    totals.saw_graph_execution |= activity.kind == GpuActivityKind::graph_execution;
    totals.saw_graph_node |= activity.kind != GpuActivityKind::graph_execution && activity.in_graph;
    const std::int64_t duration = activity.end_ns - activity.start_ns;
    add_saturating(totals.gpu_time_ns, duration);
    bool attributed = false;
    touched_stages.clear();
    if (activity.launch_thread) {
      const auto found = sync_by_thread.find(*activity.launch_thread);
      const SyncIntervals* sync = found != sync_by_thread.end() ? &found->second : nullptr;
      gathered.index.for_each_enclosing(*activity.launch_thread, activity.launch_start_ns, [&](std::size_t range) {
        attributed = true;
        auto& instance = gathered.instances[range];
        if (!instance.gpu_start_ns) instance.gpu_start_ns = activity.start_ns;
        instance.gpu_end_ns = std::max(instance.gpu_end_ns.value_or(activity.end_ns), activity.end_ns);
        ++instance.gpu_activities;
        add_saturating(instance.gpu_time_ns, duration);
        if (activity.in_graph) add_saturating(instance.graph_time_ns, duration);
        if (activity.kind == GpuActivityKind::graph_execution) ++instance.graph_executions;
        auto [gap_start, gap_end] = instance_busy[range].add(activity.start_ns, activity.end_ns);
        attribute_gap(instance.idle, gap_start, gap_end, activity.launch_start_ns, sync);
        const std::size_t stage = gathered.stage_of[range];
        // A stage nested in itself (recursion) counts the activity once.
        if (std::find(touched_stages.begin(), touched_stages.end(), stage) != touched_stages.end()) return;
        touched_stages.push_back(stage);
        gathered.stage_busy[stage].add(activity.start_ns, activity.end_ns);
        gathered.stage_gpu_start[stage] = std::min(gathered.stage_gpu_start[stage], activity.start_ns);
        auto& kernel = gathered.stage_kernels[stage][kernel_name_id(activity)];
        ++kernel.count;
        add_saturating(kernel.total_ns, duration);
        kernel.from_graph |= activity.in_graph;
        if (activity.in_graph) {
          const auto lost = gathered.unrecorded_graph_launches.find(*activity.launch_thread);
          gathered.stage_replays[stage].add(
              activity, lost != gathered.unrecorded_graph_launches.end() ? &lost->second : nullptr);
        }
      });
    }
    if (!attributed) ++totals.unattributed;
  });
  if (!visited) return visited.error();
  return totals;
}

// After the GPU pass: the idle tail of each instance (its last GPU work ended before its CPU end).
void close_instances(TimelineGathered& gathered, const std::vector<BusyAccumulator>& instance_busy,
                     const std::unordered_map<std::int64_t, SyncIntervals>& sync_by_thread) {
  for (std::size_t range = 0; range < gathered.instances.size(); ++range) {
    auto& instance = gathered.instances[range];
    instance.gpu_busy_ns = instance_busy[range].busy_ns;
    const std::int64_t window_end = instance.cpu_start_ns + instance.window_ns();
    const std::int64_t tail_start = instance_busy[range].merged_end_ns;
    if (tail_start >= window_end) continue;
    const auto found = sync_by_thread.find(instance.thread);
    const std::int64_t waited = found != sync_by_thread.end() ? found->second.overlap_ns(tail_start, window_end) : 0;
    add_saturating(instance.idle.host_in_sync_ns, waited);
    add_saturating(instance.idle.nothing_launched_ns, window_end - tail_start - waited);
  }
}

}  // namespace
}  // namespace detail

Result<TimelineReport> analyze_timeline(const std::filesystem::path& sqlite_export, const TimelineOptions& options) {
  using namespace detail;
  auto reader = NsysSqliteReader::open(sqlite_export);
  if (!reader) return reader.error();
  TimelineReport report;
  report.source = sqlite_export.string();
  report.nsys_version = reader->schema().product_version;
  report.schema_version = reader->schema().schema_version;
  report.cuda_untraced =
      !options.cuda_traced || (reader->schema().has_gpu_metrics && !reader->schema().has_runtime_api);
  std::map<std::string, std::int64_t> unclosed;
  auto ranges = reader->read_nvtx_ranges(unclosed);
  if (!ranges) return ranges.error();
  for (const auto& [name, count] : unclosed) {
    detail::add_saturating(report.unclosed_ranges, count);
    report.unclosed_range_names.push_back("`" + name + "` x" + std::to_string(count));
  }
  if (ranges->empty())
    return make_error(ErrorCode::no_report,
                      "no closed NVTX range in " + sqlite_export.string() + ": nothing to attribute time to",
                      "mark the stages with NVTX ranges (llmprof/nvtx.hpp, torch.cuda.nvtx.range) and trace with "
                      "`--trace=nvtx,...`; a capture gated on a range that never closed has none either",
                      sqlite_export.string());
  TimelineGathered gathered{RangeIndex(std::move(*ranges)), {}, {}, {}, {}, {}, {}, {}, {}, {}};
  gather_ranges(gathered);
  std::unordered_map<std::int64_t, SyncIntervals> sync_by_thread;
  if (auto calls = gather_api_calls(*reader, gathered, sync_by_thread); !calls) return calls.error();
  for (auto& [thread, starts] : gathered.unrecorded_graph_launches) std::sort(starts.begin(), starts.end());
  std::vector<BusyAccumulator> instance_busy(gathered.instances.size());
  for (std::size_t range = 0; range < instance_busy.size(); ++range)
    instance_busy[range].merged_end_ns = gathered.instances[range].cpu_start_ns;
  auto totals = gather_gpu_activities(*reader, gathered, sync_by_thread, instance_busy);
  if (!totals) return totals.error();
  close_instances(gathered, instance_busy, sync_by_thread);
  report.gpu_activities = totals->activities;
  report.gpu_time_ns = totals->gpu_time_ns;
  report.unattributed_gpu_activities = totals->unattributed;
  report.graph_trace = totals->saw_graph_execution ? "graph" : totals->saw_graph_node ? "node" : "none seen";
  for (const auto& kernels : gathered.stage_kernels)
    for (const auto& [id, totals_of_kernel] : kernels)
      if (id >= 0 && !gathered.names.contains(id)) gathered.names[id] = reader->string_value(id);
  build_stages(gathered, options, report);
  for (auto& stage : report.stages) stage.library = options.library_ranges.library_of(stage.name, stage.domain).value_or("");
  return report;
}

TimelineReport without_library_ranges(TimelineReport report) {
  std::erase_if(report.stages, [](const TimelineStage& stage) { return stage.is_library(); });
  return report;
}

bool has_own_ranges(const TimelineReport& report) {
  return std::any_of(report.stages.begin(), report.stages.end(),
                     [](const TimelineStage& stage) { return !stage.is_library(); });
}

std::string timeline_json(const TimelineReport& report) {
  return detail::pretty_json(detail::timeline_json_object(report));
}

}  // namespace llmprof
