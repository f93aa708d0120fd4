// Range discovery from an ungated capture's timeline: names, counts, nesting, the workload's own profiling
// window, and the settings that would profile it (llmprof/range_discovery.hpp).
#include "llmprof/range_discovery.hpp"

#include <algorithm>
#include <set>

#include "analysis/step_rule.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

// cudaProfilerStart/Stop and the driver's cuProfilerStart/Stop; nsys names runtime calls with a version
// suffix ("cudaProfilerStart_v4000"), hence the prefix match.
Result<void> count_profiler_calls(const std::filesystem::path& sqlite_export, RangeDiscovery& discovery) {
  auto database = detail::SqliteDatabase::open_read_only(sqlite_export);
  if (!database) return database.error();
  if (!database->has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) return {};  // no CUDA call traced at all
  auto statement = database->prepare(
      "SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON r.nameId = s.id "
      "WHERE s.value LIKE 'cudaProfilerSt%' OR s.value LIKE 'cuProfilerSt%' GROUP BY s.value");
  if (!statement) return statement.error();
  while (true) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    const std::string name(statement->text(0));
    const std::int64_t count = statement->integer(1);
    if (name.find("ProfilerStart") != std::string::npos) discovery.profiler_start_calls += count;
    if (name.find("ProfilerStop") != std::string::npos) discovery.profiler_stop_calls += count;
  }
  return {};
}

const DiscoveredRange* find_range(const RangeDiscovery& discovery, const std::string& qualified) {
  for (const auto& range : discovery.ranges)
    if (range.qualified_name() == qualified) return &range;
  return nullptr;
}

// The stage to select, and why.
void choose_stage(RangeDiscovery& discovery) {
  if (discovery.steps && !discovery.steps->kinds.empty()) {
    const auto& kinds = discovery.steps->kinds;  // by GPU time, then count
    const bool gpu = kinds.front().gpu_time_ns > 0;
    const auto chosen =
        gpu ? kinds.begin()
            : std::max_element(kinds.begin(), kinds.end(), [](auto& a, auto& b) { return a.count < b.count; });
    discovery.stage = chosen->name;
    discovery.why = "`" + chosen->name + "` is the step kind (under `" + discovery.steps->step_range + "`) with " +
                    (gpu ? "the most GPU time (" + detail::format_fraction_percent(chosen->gpu_time_share) + ")"
                         : "the most steps (" + std::to_string(chosen->count) + " of " +
                               std::to_string(discovery.steps->steps) + "; no GPU work was recorded)");
    return;
  }
  const DiscoveredRange* best = nullptr;
  for (const auto& range : discovery.ranges) {
    if (!range.parent) continue;
    if (best == nullptr || range.gpu_time_ns > best->gpu_time_ns ||
        (range.gpu_time_ns == best->gpu_time_ns && range.count > best->count))
      best = &range;
  }
  if (best == nullptr) best = &discovery.ranges.front();
  discovery.stage = best->name;
  discovery.why = "`" + best->qualified_name() + "` is the nested range with the most " +
                  (best->gpu_time_ns > 0 ? std::string("GPU time") : "instances (" + std::to_string(best->count) + ")");
}

// Whether `outer` occurs once and its instance holds every instance of `inner` (on its thread, start to end).
bool encloses_every(const TimelineReport& timeline, const DiscoveredRange& outer, const std::string& inner) {
  const TimelineStage* up = timeline.find_stage(outer.qualified_name());
  const TimelineStage* chosen = timeline.find_stage(inner);
  if (up == nullptr || chosen == nullptr || up->instances.size() != 1) return false;
  const TimelineInstance& once = up->instances.front();
  return std::all_of(chosen->instances.begin(), chosen->instances.end(), [&](const TimelineInstance& instance) {
    return instance.thread == once.thread && once.cpu_start_ns <= instance.cpu_start_ns &&
           instance.cpu_end_ns <= once.cpu_end_ns;
  });
}

// The capture: the workload's own window, else an enclosing range emitted once that holds every instance of the
// chosen stage (not only its first, nor only most), else none.
void choose_capture(RangeDiscovery& discovery, const TimelineReport& timeline) {
  if (discovery.profiler_start_calls > 0) {
    discovery.capture_range = "cudaProfilerApi";
    discovery.why += "; the workload calls cudaProfilerStart (" + std::to_string(discovery.profiler_start_calls) +
                     "x), so the suggested capture follows its window";
    return;
  }
  const DiscoveredRange* chosen = nullptr;
  for (const auto& range : discovery.ranges)
    if (range.name == discovery.stage) chosen = &range;
  for (const DiscoveredRange* up = chosen; up != nullptr && up->parent;) {
    up = find_range(discovery, *up->parent);
    if (up != nullptr && encloses_every(timeline, *up, chosen->qualified_name())) {
      discovery.capture_range = "nvtx";
      discovery.nvtx_capture = up->domain.empty() ? up->name : up->name + "@" + up->domain;
      discovery.why +=
          "; `" + up->qualified_name() + "` encloses it and occurs once, so the suggested capture is gated on it";
      return;
    }
  }
  discovery.capture_range = "none";
  discovery.why +=
      "; no range encloses every step once and the workload opens no profiling window, so the suggested capture "
      "is ungated";
}

}  // namespace

std::string RangeDiscovery::set_line() const {
  std::string line;
  for (const auto& argument : set_arguments) line += (line.empty() ? "" : " ") + ("--set " + argument);
  return line;
}

Result<RangeDiscovery> discover_ranges(const TimelineReport& timeline, const std::filesystem::path& sqlite_export) {
  RangeDiscovery discovery;
  const detail::EnclosingCounts nesting = detail::enclosing_stages(timeline);
  for (const auto& stage : timeline.stages) {
    DiscoveredRange range;
    range.name = stage.name;
    range.domain = stage.domain;
    range.parent = detail::main_enclosing_stage(nesting, stage.qualified_name());
    if (const auto found = nesting.find(stage.qualified_name()); found != nesting.end())
      range.parents.assign(found->second.begin(), found->second.end());
    std::stable_sort(range.parents.begin(), range.parents.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    range.count = static_cast<std::int64_t>(stage.instances.size());
    range.gpu_time_ns = stage.gpu_time_ns;
    discovery.ranges.push_back(std::move(range));
  }
  // Indented under the range that holds most instances, as `parent` says, not under the first instance's.
  for (auto& range : discovery.ranges) {
    range.level = 0;
    for (const DiscoveredRange* up = &range; up->parent && range.level < static_cast<int>(discovery.ranges.size());
         ++range.level) {
      up = find_range(discovery, *up->parent);
      if (up == nullptr) break;
    }
  }
  if (discovery.ranges.empty()) {
    return make_error(ErrorCode::no_report, "the discovery capture holds no NVTX range",
                      "the workload emits no NVTX push/pop range: add ranges (llmprof::nvtx::ScopedRange, "
                      "torch.cuda.nvtx.range_push) or profile it ungated with --set nsys.capture_range=none",
                      sqlite_export.string());
  }
  if (auto counted = count_profiler_calls(sqlite_export, discovery); !counted) return counted.error();
  discovery.steps = analyze_step_kinds(timeline);
  choose_stage(discovery);
  choose_capture(discovery, timeline);
  discovery.set_arguments.push_back("nsys.capture_range=" + discovery.capture_range);
  if (discovery.capture_range == "nvtx")
    discovery.set_arguments.push_back("nsys.nvtx_capture=" + discovery.nvtx_capture);
  discovery.set_arguments.push_back("run.stage=" + discovery.stage);
  discovery.set_arguments.push_back("ncu.nvtx_include=[\"" + discovery.stage + "/\"]");
  return discovery;
}

std::string describe_discovery(const RangeDiscovery& discovery) {
  std::string text = "The workload emitted these NVTX ranges (count, nesting):";
  for (const auto& range : discovery.ranges) {
    text += "\n  " + std::string(static_cast<std::size_t>(2 * range.level), ' ') + range.qualified_name() + " x" +
            std::to_string(range.count);
    if (range.parents.size() == 1) text += " (in " + range.parents.front().first + ")";
    for (std::size_t i = 0; range.parents.size() > 1 && i < range.parents.size(); ++i)
      text += (i == 0 ? " (in " : ", ") + range.parents[i].first + " x" + std::to_string(range.parents[i].second) +
              (i + 1 == range.parents.size() ? ")" : "");
    if (range.gpu_time_ns > 0) text += ", GPU " + detail::format_duration_ns(static_cast<double>(range.gpu_time_ns));
  }
  text += "\ncudaProfilerStart/Stop calls: " + std::to_string(discovery.profiler_start_calls) + "/" +
          std::to_string(discovery.profiler_stop_calls) +
          (discovery.profiler_start_calls > 0 ? " (the workload opens its own profiling window)"
                                              : " (the workload opens no profiling window)");
  if (discovery.steps) text += "\nEngine steps: " + discovery.steps->verdict + ".";
  text += "\nBest choice: " + discovery.why + ".\nTo profile it: " + discovery.set_line();
  return text;
}

}  // namespace llmprof
