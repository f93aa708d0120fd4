// The ncu plan's inputs and outputs: the stage's launch table from the nsys SQLite export, plan.json,
// and the plan as text for the log and the console.
#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <sstream>

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
std::vector<std::pair<std::int64_t, std::int64_t>> stage_intervals(const std::vector<detail::NvtxRangeRow>& ranges,
                                                                   const std::string& stage) {
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
  for (const auto& range : ranges)
    if (range.name == stage) intervals.emplace_back(range.start_ns, range.end_ns);
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> merged;
  for (const auto& interval : intervals) {
    if (!merged.empty() && interval.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, interval.second);
    else
      merged.push_back(interval);
  }
  return merged;
}

}  // namespace

namespace {

// Launches whose GPU execution starts inside one of `intervals` (sorted, disjoint); every launch when empty.
Result<std::vector<StageKernelLaunch>> read_launches_within(
    detail::NsysSqliteReader& reader, const std::filesystem::path& sqlite_export,
    const std::vector<std::pair<std::int64_t, std::int64_t>>& intervals, bool every_launch) {
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

boost::json::array passes_json(const NcuPlan& plan) {
  boost::json::array passes;
  for (const auto& pass : plan.passes) {
    boost::json::array kernels;
    for (const auto& kernel : pass.kernels) kernels.emplace_back(kernel);
    passes.emplace_back(boost::json::object{{"kernel_regex", pass.kernel_regex},
                                            {"by_mangled_name", pass.by_mangled_name},
                                            {"launch_skip", pass.launch_skip},
                                            {"launch_count", pass.launch_count},
                                            {"profiled_launches", pass.profiled_launches},
                                            {"replayed_launches", pass.replayed_launches},
                                            {"estimated_seconds", pass.estimated_seconds},
                                            {"kernels", std::move(kernels)}});
  }
  return passes;
}

// 0 stands for "not known" in the plan's figures; JSON says null.
boost::json::value known_or_null(double value) {
  if (value > 0) return value;
  return nullptr;
}

boost::json::array configs_json(const NcuPlan& plan) {
  boost::json::array configs;
  for (const auto& config : plan.configs) {
    boost::json::array ordinals;
    for (auto ordinal : config.ordinals) ordinals.emplace_back(ordinal);
    configs.emplace_back(boost::json::object{{"kernel", config.kernel},
                                             {"config", config.config},
                                             {"grid", config.grid},
                                             {"block", config.block},
                                             {"group", config.group},
                                             {"group_configs", config.group_configs},
                                             {"first_launch", config.first_launch},
                                             {"late", config.late},
                                             {"measured", !config.ordinals.empty()},
                                             {"extrapolated_from", config.extrapolated_from.empty()
                                                                       ? boost::json::value(nullptr)
                                                                       : boost::json::value(config.extrapolated_from)},
                                             {"stage_launches", config.stage_launches},
                                             {"stage_time_ns", config.stage_time_ns},
                                             {"ordinals", std::move(ordinals)},
                                             {"pass", config.pass},
                                             {"planned_mean_ns", known_or_null(config.planned_mean_ns)},
                                             {"duration_ratio", known_or_null(planned_duration_ratio(config))},
                                             {"unrepresentative", is_unrepresentative(config)}});
  }
  return configs;
}

}  // namespace

std::string ncu_plan_json(const NcuPlan& plan, const std::optional<NcuPlanCheck>& check,
                          std::optional<double> measured_seconds_per_launch) {
  boost::json::object document;
  document["schema"] = "llmprof.ncu_plan/1";
  document["stage"] = plan.stage;
  document["configs_known"] = plan.configs_known;
  document["planned_launches"] = plan.planned_launches;
  document["stage_kernel_time_ns"] = plan.stage_kernel_time_ns;
  document["selection_coverage"] = plan.selection_coverage;
  document["expected_coverage"] = plan.expected_coverage;
  document["coverage_measured"] = plan.expected_coverage;
  document["coverage_extrapolated"] = plan.expected_coverage_extrapolated;
  document["start_up_seconds"] = known_or_null(plan.start_up_seconds);
  document["pass_choice"] = plan.pass_choice;
  if (plan.max_seconds > 0) {
    boost::json::array left_out;
    for (const auto& kernel : plan.left_out_for_time) left_out.emplace_back(kernel);
    document["max_seconds"] = plan.max_seconds;
    document["left_out_for_time"] = std::move(left_out);
    document["unbounded_estimated_seconds"] = plan.unbounded_estimated_seconds;
    document["unbounded_expected_coverage"] = plan.unbounded_expected_coverage;
  }
  document["stage_launches"] = plan.stage_launches;
  document["seconds_per_intercepted_launch"] = plan.seconds_per_intercepted_launch;
  document["seconds_per_launch"] = plan.seconds_per_launch;
  document["seconds_per_launch_source"] = plan.seconds_per_launch_source;
  document["seconds_per_pass_source"] = plan.seconds_per_pass_source;
  document["seconds_per_pass"] = plan.seconds_per_pass;
  document["estimated_seconds"] = plan.estimated_seconds;
  document["extrapolated_time_ratio"] = known_or_null(plan.extrapolated_time_ratio);
  document["representative_tolerance"] = kRepresentativeTolerance;
  document["passes"] = passes_json(plan);
  document["configs"] = configs_json(plan);
  const auto strings = [](const std::vector<std::string>& values) {
    boost::json::array array;
    for (const auto& value : values) array.emplace_back(value);
    return array;
  };
  document["kernels_without_launches"] = strings(plan.kernels_without_launches);
  document["kernels_unreached"] = strings(plan.kernels_unreached);
  if (check) {
    boost::json::array missing;
    for (const auto& shortfall : check->not_profiled)
      missing.emplace_back(boost::json::object{{"kernel", shortfall.kernel},
                                               {"config", shortfall.config},
                                               {"planned", shortfall.planned},
                                               {"profiled", shortfall.profiled}});
    document["check"] = boost::json::object{{"rows", check->rows},
                                            {"planned_launches", check->planned_launches},
                                            {"profiled_planned_launches", check->profiled_planned_launches},
                                            {"coverage_reached", check->coverage_reached},
                                            {"coverage_measured", check->coverage_measured},
                                            {"coverage_extrapolated", check->coverage_extrapolated},
                                            {"not_profiled", std::move(missing)},
                                            {"kernels_without_rows", strings(check->kernels_without_rows)},
                                            {"workload_endings", strings(check->workload_endings)},
                                            {"stage_seconds", known_or_null(check->stage_seconds)}};
    boost::json::array timings;
    for (const auto& timing : check->pass_timings)
      timings.emplace_back(boost::json::object{
          {"estimated_seconds", timing.estimated_seconds},
          {"measured_seconds", timing.measured_seconds},
          {"first_launch_seconds",
           timing.first_launch_seconds ? boost::json::value(*timing.first_launch_seconds) : boost::json::value(nullptr)}});
    document["check"].as_object()["pass_timings"] = std::move(timings);
  }
  if (measured_seconds_per_launch) document["measured_seconds_per_launch"] = *measured_seconds_per_launch;
  return boost::json::serialize(document);
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
