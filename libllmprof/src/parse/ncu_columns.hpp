// The columns of Nsight Compute's CSV exports that the parser knows by name: those that describe a
// launch or a metric row rather than a metric, and the details page's display names of raw metrics.
#pragma once

#include <string_view>
#include <unordered_map>

namespace llmprof::detail {

inline constexpr std::string_view kNvtxPushPopColumn =
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
inline constexpr std::string_view kNvtxStartEndColumn =
    "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";

// A column that describes the launch (raw page) or the metric row (long form), not a metric.
bool is_ncu_non_metric_column(std::string_view name);

// Display name (details page) -> raw metric name.
const std::unordered_map<std::string_view, std::string_view>& ncu_display_name_aliases();

}  // namespace llmprof::detail
