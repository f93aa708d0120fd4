// nvtx_kern_sum and nvtx_gpu_proj_sum from the SQLite export: GPU work attributed to the NVTX ranges that
// enclose the CUDA API call which launched it.
//
// The rule (nsys 2022.4 reports/nvtxkernsum.py and nvtxgpuproj.py; the 2025.3.1 CSVs of the H100 captures
// agree row for row): a range encloses a call when it runs on the call's thread (globalTid) and
// start <= call start, call end <= end. Every enclosing range counts, not only the innermost. Ranges that end
// on another thread (endGlobalTid set) are left out; an unclosed one ends at the last NVTX timestamp.
// - nvtx_kern_sum: per (process, thread, range, style, kernel), the kernel executions, their distinct count
//   and the distinct range instances; kernels whose call no range encloses form range-less rows. Rows of
//   several threads are then folded as load_nsys_stats folds the CSV.
// - nvtx_gpu_proj_sum: per range instance that launched any kernel, copy or set (not a graph execution:
//   2025.3 leaves CUPTI_ACTIVITY_KIND_GRAPH_TRACE out, 63 ops in the graphtrace capture), the projection is
//   last end - first start of that work (a span, not the union of busy time), the ops are its distinct
//   correlation ids, the level is the depth under the tightest enclosing range of the same thread, and the
//   children are those child ranges that have a projection themselves.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "parse/nsys_sqlite_stats.hpp"
#include "parse/nvtx_kernel_merger.hpp"

namespace llmprof::detail {
namespace {

// The ranges that enclose calls visited in (thread, start) order: per thread, ranges enter when the
// calls reach their start and leave once the calls pass their end, so a visit costs the nesting depth.
class EnclosingRangeSweep {
 public:
  explicit EnclosingRangeSweep(const std::vector<NvtxRangeInstance>& ranges) : ranges_(ranges) {
    for (std::size_t i = 0; i < ranges.size(); ++i)
      if (ranges[i].ends_on_start_thread) by_thread_[ranges[i].thread].push_back(i);
    for (auto& [thread, order] : by_thread_) {
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(ranges[a].start_ns, ranges[b].end_ns) < std::tie(ranges[b].start_ns, ranges[a].end_ns);
      });
    }
  }

  const std::vector<std::size_t>& enclosing(std::int64_t thread, std::int64_t start_ns, std::int64_t end_ns) {
    if (thread != thread_ || order_ == nullptr) {
      thread_ = thread;
      const auto found = by_thread_.find(thread);
      order_ = found != by_thread_.end() ? &found->second : &no_ranges_;
      next_ = 0;
      active_.clear();
    }
    while (next_ < order_->size() && ranges_[(*order_)[next_]].start_ns <= start_ns)
      active_.push_back((*order_)[next_++]);
    std::erase_if(active_, [&](std::size_t i) { return ranges_[i].end_ns < start_ns; });
    found_.clear();
    for (const auto i : active_)
      if (ranges_[i].end_ns >= end_ns) found_.push_back(i);
    return found_;
  }

 private:
  const std::vector<NvtxRangeInstance>& ranges_;
  std::map<std::int64_t, std::vector<std::size_t>> by_thread_;
  std::vector<std::size_t> no_ranges_;
  std::int64_t thread_ = 0;
  const std::vector<std::size_t>* order_ = nullptr;
  std::size_t next_ = 0;
  std::vector<std::size_t> active_;
  std::vector<std::size_t> found_;
};

std::int64_t process_of(std::int64_t thread) { return (thread >> 24) & 0xFFFFFF; }
std::int64_t thread_of(std::int64_t thread) { return thread & 0xFFFFFF; }

// One nvtx_kern_sum group before its statistics: keyed by process, thread, range (index of its first
// instance, or none), style and kernel name id.
struct KernelGroup {
  std::set<std::int64_t> range_ids;
  std::unordered_set<std::int64_t> kernel_ids;
  std::vector<std::int64_t> durations_ns;  // one per (kernel, call, range), as the script's join repeats them
};
using KernelGroupKey = std::tuple<std::int64_t, std::int64_t, std::string, std::string, int, std::int64_t>;

NvtxKernelRow kernel_row(const KernelGroupKey& key, KernelGroup& group, const NsysSqliteReader& reader,
                         std::unordered_map<std::int64_t, std::string>& names) {
  const auto& [process, thread, domain, name, style, name_id] = key;
  NvtxKernelRow row;
  if (style != 0) row.range = NvtxRangeName{domain, name};
  row.style = style == 1 ? "PushPop" : style == 2 ? "StartEnd" : "";
  row.process_id = process;
  row.thread_id = thread;
  row.range_instances = static_cast<std::int64_t>(group.range_ids.size());
  row.kernel_instances = static_cast<std::int64_t>(group.kernel_ids.size());
  row.time = summarize_durations(group.durations_ns);
  row.time.count = row.kernel_instances;  // "Kern Inst" is the count column load_nsys_stats reads
  auto [found, inserted] = names.try_emplace(name_id);
  if (inserted) found->second = reader.string_value(name_id);
  row.kernel_name = found->second;
  return row;
}

}  // namespace

Result<std::vector<NvtxKernelRow>> read_nvtx_kernel_summary(const NsysSqliteReader& reader,
                                                            const std::vector<NvtxRangeInstance>& ranges) {
  EnclosingRangeSweep sweep(ranges);
  std::map<KernelGroupKey, KernelGroup> groups;
  auto read = reader.for_each_launched_gpu_operation(true, [&](const LaunchedGpuOperation& kernel) {
    const std::int64_t thread = kernel.call_thread.value_or(0);
    const auto add = [&](const NvtxRangeInstance* range) {
      KernelGroupKey key{process_of(thread),
                         thread_of(thread),
                         range ? range->range.domain : "",
                         range ? range->range.name : "",
                         range ? (range->push_pop ? 1 : 2) : 0,
                         kernel.name_id};
      KernelGroup& group = groups[key];
      if (range) group.range_ids.insert(range->id);
      group.kernel_ids.insert(kernel.row_id);
      group.durations_ns.push_back(kernel.end_ns - kernel.start_ns);
    };
    if (!kernel.call_thread) return add(nullptr);
    const auto& enclosing = sweep.enclosing(thread, kernel.call_start_ns, kernel.call_end_ns);
    if (enclosing.empty()) return add(nullptr);
    for (const auto i : enclosing) add(&ranges[i]);
  });
  if (!read) return read.error();
  std::vector<NvtxKernelRow> rows;
  std::unordered_map<std::int64_t, std::string> names;
  for (auto& [key, group] : groups) rows.push_back(kernel_row(key, group, reader, names));
  // The script's order (range, process, thread, total time descending) decides which row the fold keeps first.
  std::stable_sort(rows.begin(), rows.end(), [](const NvtxKernelRow& a, const NvtxKernelRow& b) {
    const auto name = [](const NvtxKernelRow& row) { return row.range ? row.range->qualified() : std::string(); };
    return std::make_tuple(name(a), a.process_id, a.thread_id, -a.time.total_time_ns) <
           std::make_tuple(name(b), b.process_id, b.thread_id, -b.time.total_time_ns);
  });
  NvtxKernelMerger merger;
  for (auto& row : rows) merger.add(std::move(row));
  return merger.take();
}

namespace {

// Per range instance: the first start and last end of its GPU work, and that work's correlation ids.
struct Projection {
  std::int64_t first_start_ns = 0;
  std::int64_t last_end_ns = 0;
  std::unordered_set<std::int64_t> correlation_ids;
};

// The tightest enclosing range of each range on its thread (nvtxgpuproj.py's NVTX_PARENT), as indices.
std::vector<std::optional<std::size_t>> find_parents(const std::vector<NvtxRangeInstance>& ranges) {
  std::vector<std::optional<std::size_t>> parents(ranges.size());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < ranges.size(); ++i)
    if (ranges[i].ends_on_start_thread) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(ranges[a].thread, ranges[a].start_ns) < std::tie(ranges[b].thread, ranges[b].start_ns);
  });
  EnclosingRangeSweep sweep(ranges);
  for (const auto child : order) {
    const auto& c = ranges[child];
    std::optional<std::int64_t> tightest;
    for (const auto candidate : sweep.enclosing(c.thread, c.start_ns, c.end_ns)) {
      if (candidate == child) continue;
      const auto& p = ranges[candidate];
      const std::int64_t tightness = (c.start_ns - p.start_ns) + (p.end_ns - c.end_ns);
      if (!tightest || tightness < *tightest) {
        tightest = tightness;
        parents[child] = candidate;
      }
    }
  }
  return parents;
}

// Depth below the outermost range; a cycle (two identical ranges are each other's tightest) stops the walk.
std::int64_t level_of(std::size_t range, const std::vector<std::optional<std::size_t>>& parents) {
  std::int64_t level = 0;
  for (auto at = parents[range]; at && level <= static_cast<std::int64_t>(parents.size()); at = parents[*at]) ++level;
  return level;
}

struct ProjectionSums {
  NvtxGpuProjectionRow row;
  std::int64_t levels = 0;
  std::int64_t children = 0;
};

}  // namespace

Result<std::vector<NvtxGpuProjectionRow>> read_nvtx_gpu_projection(const NsysSqliteReader& reader,
                                                                   const std::vector<NvtxRangeInstance>& ranges) {
  EnclosingRangeSweep sweep(ranges);
  std::map<std::size_t, Projection> projections;
  auto read = reader.for_each_launched_gpu_operation(false, [&](const LaunchedGpuOperation& operation) {
    if (!operation.call_thread) return;
    for (const auto i : sweep.enclosing(*operation.call_thread, operation.call_start_ns, operation.call_end_ns)) {
      auto [found, inserted] = projections.try_emplace(i);
      Projection& projection = found->second;
      if (inserted || operation.start_ns < projection.first_start_ns) projection.first_start_ns = operation.start_ns;
      if (inserted || operation.end_ns > projection.last_end_ns) projection.last_end_ns = operation.end_ns;
      projection.correlation_ids.insert(operation.correlation_id);
    }
  });
  if (!read) return read.error();
  const auto parents = find_parents(ranges);
  std::map<std::size_t, std::int64_t> projected_children;
  for (const auto& [i, projection] : projections)
    if (parents[i]) ++projected_children[*parents[i]];
  std::map<std::tuple<std::string, std::string, bool>, ProjectionSums> sums;
  for (const auto& [i, projection] : projections) {
    const auto& range = ranges[i];
    ProjectionSums& into = sums[{range.range.domain, range.range.name, range.push_pop}];
    into.row.range = range.range;
    into.row.style = range.push_pop ? "PushPop" : "StartEnd";
    into.row.total_projection_ns += projection.last_end_ns - projection.first_start_ns;
    into.row.total_range_ns += range.end_ns - range.start_ns;
    into.row.range_instances += 1;
    into.row.total_gpu_operations += static_cast<std::int64_t>(projection.correlation_ids.size());
    into.levels += level_of(i, parents);
    const auto children = projected_children.find(i);
    into.children += children != projected_children.end() ? children->second : 0;
  }
  std::vector<NvtxGpuProjectionRow> rows;
  for (auto& [key, sum] : sums) {
    const auto instances = static_cast<double>(sum.row.range_instances);
    sum.row.average_range_level = round_to_tenth(static_cast<double>(sum.levels) / instances);
    sum.row.average_children = round_to_tenth(static_cast<double>(sum.children) / instances);
    rows.push_back(std::move(sum.row));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.total_projection_ns > b.total_projection_ns; });
  return rows;
}

}  // namespace llmprof::detail
