// The ncu CSV parser (raw and long layouts) over arbitrary bytes: for_each_ncu_launch keeping all
// metrics, the same with a narrow keep_metric filter, and parse_ncu_csv.
//
// Invariants: no crash / leak / UB; errors name the input; success means at least one launch and
// launch_count equals the visitor calls; the filter changes only which metrics are kept (same
// success, same launches, kept values equal to the unfiltered ones); parse_ncu_csv agrees.
#include <vector>

#include "fuzz_support.hpp"
#include "llmprof/ncu_metrics.hpp"

namespace {

using llmprof::fuzz::as_stream;
using llmprof::fuzz::kSourceName;

struct LaunchDigest {
  std::int64_t id = 0;
  std::string kernel_name;
  std::size_t nvtx_depth = 0;
  std::vector<std::pair<std::string, double>> kept;  // metrics the filter keeps, with their values
};

bool kept_by_filter(std::string_view name) {
  return name.starts_with("gpu__time_duration") || name.starts_with("sm__ops_path_tensor") ||
         name.starts_with("dram__bytes") || name == "Duration";
}

LaunchDigest digest(const llmprof::NcuKernelLaunch& launch) {
  LaunchDigest out{launch.id, launch.kernel_name, launch.nvtx_stack.size(), {}};
  for (const auto& [name, value] : launch.metrics) {
    if (kept_by_filter(name)) out.kept.emplace_back(name, value.value);
  }
  return out;
}

bool same_value(double a, double b) { return a == b || (a != a && b != b); }  // NaN equals NaN here

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<LaunchDigest> all;
  auto in_all = as_stream(data, size);
  const auto info_all = llmprof::for_each_ncu_launch(in_all, kSourceName, {}, [&](const llmprof::NcuKernelLaunch& l) {
    all.push_back(digest(l));
    return true;
  });
  LLMPROF_FUZZ_CHECK_ERROR(info_all);
  if (info_all) {
    LLMPROF_FUZZ_CHECK(info_all->launch_count > 0, "success with no launch");
    LLMPROF_FUZZ_CHECK(info_all->launch_count == all.size(), "launch_count equals visitor calls");
  }

  std::vector<LaunchDigest> filtered;
  llmprof::NcuParseOptions narrow;
  narrow.keep_metric = kept_by_filter;
  auto in_narrow = as_stream(data, size);
  const auto info_narrow =
      llmprof::for_each_ncu_launch(in_narrow, kSourceName, narrow, [&](const llmprof::NcuKernelLaunch& l) {
        LaunchDigest d = digest(l);
        for (const auto& [name, value] : l.metrics)
          LLMPROF_FUZZ_CHECK(kept_by_filter(name), "filter dropped '" + name + "'");
        filtered.push_back(std::move(d));
        return true;
      });
  LLMPROF_FUZZ_CHECK_ERROR(info_narrow);
  LLMPROF_FUZZ_CHECK(info_all.has_value() == info_narrow.has_value(),
                     "the metric filter changed success: " +
                         (info_all ? info_narrow.error().describe() : info_all.error().describe()));
  if (info_all) {
    LLMPROF_FUZZ_CHECK(filtered.size() == all.size(), "the metric filter changed the launch count");
    for (std::size_t i = 0; i < all.size(); ++i) {
      LLMPROF_FUZZ_CHECK(filtered[i].id == all[i].id && filtered[i].kernel_name == all[i].kernel_name &&
                             filtered[i].nvtx_depth == all[i].nvtx_depth,
                         "launch identity differs with the filter");
      LLMPROF_FUZZ_CHECK(filtered[i].kept.size() == all[i].kept.size(), "kept metric count differs with the filter");
      for (std::size_t k = 0; k < all[i].kept.size(); ++k)
        LLMPROF_FUZZ_CHECK(filtered[i].kept[k].first == all[i].kept[k].first &&
                               same_value(filtered[i].kept[k].second, all[i].kept[k].second),
                           "metric '" + all[i].kept[k].first + "' differs with the filter");
    }
  }

  auto in_report = as_stream(data, size);
  const auto report = llmprof::parse_ncu_csv(in_report, kSourceName);
  LLMPROF_FUZZ_CHECK_ERROR(report);
  LLMPROF_FUZZ_CHECK(report.has_value() == info_all.has_value(), "parse_ncu_csv and for_each_ncu_launch disagree");
  if (report) LLMPROF_FUZZ_CHECK(report->launches.size() == all.size(), "parse_ncu_csv launch count");
  return 0;
}
