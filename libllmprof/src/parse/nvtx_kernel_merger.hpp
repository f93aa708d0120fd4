// Folds nvtx_kern_sum rows that differ only in process and thread into one row per (range, style, kernel):
// the shape load_nsys_stats returns and nsys_stats_from_sqlite gives too, so the two compare row for row.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "llmprof/nsys_stats.hpp"

namespace llmprof::detail {

// A capture with many threads or ranks then costs memory per kernel and range, not per table row
// (holding every row took 5.1 GB for a 200 MB table).
class NvtxKernelMerger {
 public:
  void add(NvtxKernelRow&& row) {
    std::string key =
        (row.range ? row.range->qualified() : std::string("\x01")) + '\x00' + row.style + '\x00' + row.kernel_name;
    const auto [found, inserted] = index_.try_emplace(std::move(key), rows_.size());
    if (inserted) {
      rows_.push_back(std::move(row));
      return;
    }
    NvtxKernelRow& merged = rows_[found->second];
    if (merged.process_id != row.process_id) merged.process_id = 0;  // 0: several
    if (merged.thread_id != row.thread_id) merged.thread_id = 0;
    merged.range_instances += row.range_instances;
    merged.kernel_instances += row.kernel_instances;
    NsysTimeStatistics& time = merged.time;
    time.total_time_ns += row.time.total_time_ns;
    time.count += row.time.count;
    time.min_ns = std::min(time.min_ns, row.time.min_ns);
    time.max_ns = std::max(time.max_ns, row.time.max_ns);
    time.average_ns = time.count > 0 ? static_cast<double>(time.total_time_ns) / static_cast<double>(time.count) : 0;
    // The median and spread of a union cannot be had from the parts' summaries.
    time.median_ns = std::numeric_limits<double>::quiet_NaN();
    time.stddev_ns = std::numeric_limits<double>::quiet_NaN();
  }
  std::vector<NvtxKernelRow> take() { return std::move(rows_); }

 private:
  std::vector<NvtxKernelRow> rows_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace llmprof::detail
