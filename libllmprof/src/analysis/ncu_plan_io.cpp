// The ncu plan's inputs and outputs: the stage's launch table from the nsys SQLite export, and the plan as text
// for the log and the console (plan.json: ncu_plan_record.cpp).
#include <algorithm>
#include <map>
#include <sstream>

#include "analysis/time_intervals.hpp"
#include "core/format.hpp"
#include "llmprof/ncu_plan.hpp"
#include "parse/nsys_sqlite.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

std::string triple(const std::array<std::int64_t, 3>& values) {
  return "(" + std::to_string(values[0]) + ", " + std::to_string(values[1]) + ", " + std::to_string(values[2]) + ")";
}

// Instances of the stage range, merged where they overlap, in start order.
std::vector<detail::TimeInterval> stage_intervals(const std::vector<detail::NvtxRangeRow>& ranges,
                                                  const std::string& stage) {
  std::vector<detail::TimeInterval> intervals;
  for (const auto& range : ranges)
    if (range.name == stage) intervals.emplace_back(range.start_ns, range.end_ns);
  return detail::merge_intervals(std::move(intervals));
}

}  // namespace

namespace {

// Launches whose GPU execution starts inside one of `intervals` (sorted, disjoint); every launch when empty.
Result<std::vector<StageKernelLaunch>> read_launches_within(detail::NsysSqliteReader& reader,
                                                            const std::filesystem::path& sqlite_export,
                                                            const std::vector<detail::TimeInterval>& intervals,
                                                            bool every_launch) {
  std::vector<StageKernelLaunch> launches;
  std::map<std::int64_t, std::string> names;  // StringIds cache: a decode has ~10^5 launches of ~30 names
  const auto name_of = [&](std::int64_t id) -> const std::string& {
    auto name = names.find(id);
    if (name == names.end()) name = names.emplace(id, reader.string_value(id)).first;
    return name->second;
  };
  std::size_t next = 0;
  auto visited = reader.for_each_kernel_launch([&](const detail::KernelLaunchRow& row) {
    if (!every_launch) {
      while (next < intervals.size() && intervals[next].second < row.start_ns) ++next;
      if (next == intervals.size() || row.start_ns < intervals[next].first) return;
    }
    launches.push_back({name_of(row.name_id), triple(row.grid), triple(row.block), row.shared_memory_bytes,
                        row.end_ns - row.start_ns,
                        row.mangled_name_id >= 0 ? name_of(row.mangled_name_id) : std::string(), row.start_ns});
  });
  if (!visited) return visited.error();
  if (!visited.value())
    return make_error(ErrorCode::parse_error, sqlite_export.string() + " has no kernel launch configurations",
                      "export with Nsight Systems 2022.4 or later", sqlite_export.string());
  return launches;
}

}  // namespace

Result<std::vector<StageKernelLaunch>> read_stage_kernel_launches(const std::filesystem::path& sqlite_export,
                                                                  const std::string& stage) {
  auto reader = detail::NsysSqliteReader::open(sqlite_export);
  if (!reader) return reader.error();
  std::map<std::string, std::int64_t> unclosed;
  auto ranges = reader->read_nvtx_ranges(unclosed);
  if (!ranges) return ranges.error();
  const auto intervals = stage_intervals(ranges.value(), stage);
  if (intervals.empty())
    return make_error(ErrorCode::not_found, "no closed NVTX range '" + stage + "' in " + sqlite_export.string(),
                      "check run.stage against the ranges the workload emits", sqlite_export.string());
  // A kernel belongs to the stage when its GPU execution starts inside an instance: the decode range
  // of llmprof-decode and of torch workloads closes after a synchronize, so its kernels run within it.
  return read_launches_within(reader.value(), sqlite_export, intervals, false);
}

std::optional<double> stage_start_up_seconds(const std::filesystem::path& sqlite_export,
                                             const std::vector<StageKernelLaunch>& launches) {
  if (launches.empty()) return std::nullopt;
  auto database = detail::SqliteDatabase::open_read_only(sqlite_export);
  if (!database || !database->has_table("ANALYSIS_DETAILS")) return std::nullopt;
  auto statement = database->prepare("SELECT MIN(startTime) FROM ANALYSIS_DETAILS");
  if (!statement) return std::nullopt;
  auto row = statement->step();
  if (!row || !row.value() || statement->is_null(0)) return std::nullopt;
  const std::int64_t capture_start_ns = statement->integer(0);
  const std::int64_t first_ns = std::min_element(launches.begin(), launches.end(), [](const auto& a, const auto& b) {
                                  return a.start_ns < b.start_ns;
                                })->start_ns;
  if (capture_start_ns < 0 || first_ns < 0) return std::nullopt;  // a corrupt export, not a start-up
  return double(capture_start_ns + first_ns) / 1e9;
}

Result<std::vector<StageKernelLaunch>> read_capture_kernel_launches(const std::filesystem::path& sqlite_export) {
  auto reader = detail::NsysSqliteReader::open(sqlite_export);
  if (!reader) return reader.error();
  return read_launches_within(reader.value(), sqlite_export, {}, true);
}

namespace {

std::string representativeness_text(const NcuPlan& plan) {
  if (plan.extrapolated_time_ratio <= 0) return {};
  std::ostringstream text;
  text.precision(3);
  text << "  planned launches vs every launch of their configurations (nsys durations): the planned ones, "
          "extrapolated, give "
       << plan.extrapolated_time_ratio * 100 << "% of the configurations' kernel time\n";
  for (const std::size_t index : plan.unrepresentative_configs) {
    const PlannedConfig& config = plan.configs[index];
    text << "  unrepresentative: " << kernel_function_name(config.kernel);
    if (!config.config.empty()) text << "  " << config.config;
    text << ": planned launches average " << detail::format_duration_ns(config.planned_mean_ns) << " against "
         << detail::format_duration_ns(double(config.stage_time_ns) / double(config.stage_launches))
         << " over its " << config.stage_launches << " launches (" << planned_duration_ratio(config)
         << "x); its ncu figures describe those launches, not the stage\n";
  }
  return text.str();
}

}  // namespace

std::string ncu_plan_bound_text(const NcuPlan& plan) {
  if (plan.left_out_for_time.empty()) return {};
  std::ostringstream text;
  text.precision(3);
  text << "ncu.max_seconds = " << plan.max_seconds << " s: the plan of every selected kernel was estimated at "
       << plan.unbounded_estimated_seconds << " s for " << plan.unbounded_expected_coverage * 100
       << "% of the stage's kernel time; " << plan.left_out_for_time.size()
       << " kernel(s) left out, those giving up the least kernel time per second saved (";
  for (std::size_t i = 0; i < plan.left_out_for_time.size(); ++i) {
    if (i == 4) {
      text << " and " << plan.left_out_for_time.size() - 4 << " more";
      break;
    }
    text << (i ? ", " : "") << kernel_function_name(plan.left_out_for_time[i]);
  }
  text << ")";
  return text.str();
}

std::string ncu_plan_text(const NcuPlan& plan) {
  std::ostringstream text;
  text.precision(3);
  text << "ncu plan for " << plan.stage << ": " << plan.planned_launches << " launches in " << plan.passes.size()
       << " pass(es), estimated " << plan.estimated_seconds << " s (" << plan.seconds_per_launch << " s/launch, "
       << plan.seconds_per_launch_source << "; " << plan.seconds_per_pass << " s/pass, " << plan.seconds_per_pass_source << "), expected coverage "
       << (plan.expected_coverage + plan.expected_coverage_extrapolated) * 100 << "% of the stage's kernel time (measured "
       << plan.expected_coverage * 100 << "%, extrapolated " << plan.expected_coverage_extrapolated * 100 << "%)\n";
  if (const std::string bound = ncu_plan_bound_text(plan); !bound.empty()) text << "  " << bound << "\n";
  if (!plan.pass_choice.empty()) text << "  passes: " << plan.pass_choice << "\n";
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    const auto& pass = plan.passes[i];
    text << "  pass " << i + 1 << ": " << pass.kernels.size() << " kernel(s)"
         << (pass.by_mangled_name ? " by mangled name" : "") << ", --filter-mode per-launch-config --launch-skip " << pass.launch_skip << " --launch-count "
         << pass.launch_count << ": " << pass.profiled_launches << " launches, ends after stage launch "
         << pass.replayed_launches << " of " << plan.stage_launches << ", estimated " << pass.estimated_seconds << " s\n";
  }
  for (const auto& config : plan.configs) {
    text << "  " << config.ordinals.size() << " of " << config.stage_launches << "  "
         << kernel_function_name(config.kernel);
    if (!config.config.empty()) text << "  " << config.config;
    if (config.group_configs > 1) text << " (+" << config.group_configs - 1 << " more in " << config.group << ")";
    if (!config.ordinals.empty())
      text << "  (launch " << config.ordinals.front()
           << (config.ordinals.size() > 1 ? "..." + std::to_string(config.ordinals.back()) : "") << ", pass "
           << config.pass + 1 << ")";
    else if (!config.extrapolated_from.empty())
      text << "  extrapolated from " << config.extrapolated_from
           << (config.late ? " (first appears at stage launch " + std::to_string(config.first_launch) + ")" : "");
    text << "\n";
  }
  text << representativeness_text(plan);
  for (const auto& kernel : plan.kernels_without_launches) text << "  not in the launch table: " << kernel << "\n";
  for (const auto& kernel : plan.kernels_unreached)
    text << "  not planned (no launch past --launch-skip, or namesakes share its configurations beyond "
            "ncu.plan_max_launch_count): "
         << kernel << "\n";
  return text.str();
}

}  // namespace llmprof
