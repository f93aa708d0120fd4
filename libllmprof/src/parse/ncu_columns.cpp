// The names of Nsight Compute's CSV columns (see ncu_columns.hpp).
#include "parse/ncu_columns.hpp"

#include <algorithm>
#include <array>

namespace llmprof::detail {
namespace {

// Columns describing the launch rather than a metric (raw page) or the metric row (long form).
constexpr std::array<std::string_view, 22> kNonMetricColumns{"ID",
                                                             "Process ID",
                                                             "Process Name",
                                                             "Host Name",
                                                             kNvtxPushPopColumn,
                                                             kNvtxStartEndColumn,
                                                             "Kernel Name",
                                                             "Context",
                                                             "Stream",
                                                             "Block Size",
                                                             "Grid Size",
                                                             "Device",
                                                             "CC",
                                                             "Section Name",
                                                             "Metric Name",
                                                             "Metric Unit",
                                                             "Metric Value",
                                                             "Rule Name",
                                                             "Rule Type",
                                                             "Rule Description",
                                                             "Estimated Speedup Type",
                                                             "Estimated Speedup"};

}  // namespace

bool is_ncu_non_metric_column(std::string_view name) {
  return std::find(kNonMetricColumns.begin(), kNonMetricColumns.end(), name) != kNonMetricColumns.end();
}

// The details page prints Speed Of Light metrics by display name; these are the raw metrics
// behind them (checked value for value on nc1_details.csv against nc1_raw.csv, same report), stored
// under both names so analysis finds e.g. the duration whatever page it was given.
const std::unordered_map<std::string_view, std::string_view>& ncu_display_name_aliases() {
  static const std::unordered_map<std::string_view, std::string_view> aliases{
      {"Duration", "gpu__time_duration.sum"},
      {"Elapsed Cycles", "gpc__cycles_elapsed.max"},
      {"SM Active Cycles", "sm__cycles_active.avg"},
      {"SM Frequency", "gpc__cycles_elapsed.avg.per_second"},
      {"DRAM Frequency", "dram__cycles_elapsed.avg.per_second"},
      {"Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
      {"DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
      {"Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
      {"L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"},
      {"L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"},
  };
  return aliases;
}

}  // namespace llmprof::detail
