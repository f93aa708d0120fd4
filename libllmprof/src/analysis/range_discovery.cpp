// Range discovery from an ungated capture's timeline: names, counts, nesting, the workload's own profiling
// window, and the settings that would profile it (llmprof/range_discovery.hpp).
#include "llmprof/range_discovery.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <limits>
#include <set>

#include "analysis/step_rule.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "llmprof/shell_quote.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof {
namespace {

// The rows of an activity table (nsys writes no table for an activity the capture holds none of).
Result<std::int64_t> count_rows(detail::SqliteDatabase& database, const std::string& table) {
  if (!database.has_table(table)) return std::int64_t{0};
  auto statement = database.prepare("SELECT COUNT(*) FROM " + table);
  if (!statement) return statement.error();
  auto row = statement->step();
  if (!row) return row.error();
  return *row ? statement->integer(0) : 0;
}

// cudaProfilerStart/Stop and the driver's cuProfilerStart/Stop; nsys names runtime calls with a version
// suffix ("cudaProfilerStart_v4000"), hence the prefix match. And the kernels.
Result<void> count_cuda_activity(const std::filesystem::path& sqlite_export, RangeDiscovery& discovery) {
  auto database = detail::SqliteDatabase::open_read_only(sqlite_export);
  if (!database) return database.error();
  auto kernels = count_rows(*database, "CUPTI_ACTIVITY_KIND_KERNEL");
  if (!kernels) return kernels.error();
  discovery.kernels = kernels.value();
  auto calls = count_rows(*database, "CUPTI_ACTIVITY_KIND_RUNTIME");
  if (!calls) return calls.error();
  discovery.cuda_calls = calls.value();
  if (!database->has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) return {};  // no CUDA call traced at all
  auto statement = database->prepare(
      "SELECT s.value, r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON r.nameId = s.id "
      "WHERE s.value LIKE 'cudaProfilerSt%' OR s.value LIKE 'cuProfilerSt%' ORDER BY r.start");
  if (!statement) return statement.error();
  // A flag beside the start rather than std::optional: GCC 12.2 at -O2 takes the optional's value for maybe
  // uninitialized where the window is stored.
  bool window_open = false;
  std::int64_t opened_at = 0;
  while (true) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    const std::string name(statement->text(0));
    const std::int64_t at = statement->integer(1);
    if (name.find("ProfilerStart") != std::string::npos) {
      ++discovery.profiler_start_calls;
      if (!window_open) opened_at = at;
      window_open = true;
    }
    if (name.find("ProfilerStop") != std::string::npos) {
      ++discovery.profiler_stop_calls;
      if (window_open) discovery.profiler_windows.emplace_back(opened_at, at);
      window_open = false;
    }
  }
  if (window_open) discovery.profiler_windows.emplace_back(opened_at, std::numeric_limits<std::int64_t>::max());
  return {};
}

const DiscoveredRange* find_range(const RangeDiscovery& discovery, const std::string& qualified) {
  for (const auto& range : discovery.ranges)
    if (range.qualified_name() == qualified) return &range;
  return nullptr;
}

// What a candidate range holds, inside the workload's profiling windows when it opens any (else everywhere).
struct CandidateFigures {
  std::int64_t gpu_time_ns = 0;
  std::int64_t instances = 0;
};

bool inside_windows(const RangeDiscovery& discovery, const TimelineInstance& instance) {
  return std::any_of(discovery.profiler_windows.begin(), discovery.profiler_windows.end(), [&](const auto& window) {
    return window.first <= instance.cpu_start_ns && instance.cpu_start_ns <= window.second;
  });
}

CandidateFigures figures_of(const RangeDiscovery& discovery, const TimelineStage& stage, bool windowed) {
  CandidateFigures figures;
  for (const TimelineInstance* instance : detail::step_instances(stage).counted) {
    if (windowed && !inside_windows(discovery, *instance)) continue;
    ++figures.instances;
    figures.gpu_time_ns += instance->gpu_time_ns;
  }
  return figures;
}

// The stage to select, and why: among the step kinds when there are any, else among every range; by GPU time,
// else by instances, counted inside the profiling windows when the workload opens any.
void choose_stage(RangeDiscovery& discovery, const TimelineReport& timeline) {
  std::vector<const TimelineStage*> candidates;
  if (discovery.steps && !discovery.steps->kinds.empty()) {
    for (const auto& kind : discovery.steps->kinds)
      for (const auto& stage : timeline.stages)
        if (stage.name == kind.name) candidates.push_back(&stage);
  } else {
    for (const auto& stage : timeline.stages)
      if (!stage.is_library()) candidates.push_back(&stage);
  }
  // Inside the workload's profiling windows when it opens any and something falls inside them; else everywhere
  // (then the suggested capture cannot follow those windows: chosen_in_window).
  bool windowed = !discovery.profiler_windows.empty();
  const TimelineStage* best = nullptr;
  CandidateFigures best_figures, total;
  for (int attempt = 0; attempt < 2; ++attempt) {
    best = nullptr;
    best_figures = total = CandidateFigures{};
    for (const TimelineStage* stage : candidates) {
      const CandidateFigures figures = figures_of(discovery, *stage, windowed);
      total.gpu_time_ns += figures.gpu_time_ns;
      total.instances += figures.instances;
      if (best == nullptr || figures.gpu_time_ns > best_figures.gpu_time_ns ||
          (figures.gpu_time_ns == best_figures.gpu_time_ns && figures.instances > best_figures.instances)) {
        best = stage;
        best_figures = figures;
      }
    }
    if (!windowed || total.instances > 0) break;
    windowed = false;
  }
  if (best == nullptr) return;
  discovery.stage = best->name;
  const bool kinds = discovery.steps && !discovery.steps->kinds.empty();
  const std::string where = windowed ? " inside the workload's profiling windows" : "";
  std::string what = kinds ? "the step kind" : "the range";
  if (kinds) {
    const std::string& range = discovery.steps->step_range;
    what += range.empty() ? " (its ranges stand alone, each one step)" : " (under `" + range + "`)";
  }
  if (best_figures.gpu_time_ns > 0) {
    discovery.why = "`" + best->qualified_name() + "` is " + what + " with the most GPU time" + where + " (" +
                    detail::format_duration_ns(static_cast<double>(best_figures.gpu_time_ns)) + " of " +
                    detail::format_duration_ns(static_cast<double>(total.gpu_time_ns)) + " over " +
                    std::to_string(best_figures.instances) + " instances)";
  } else {
    discovery.why = "`" + best->qualified_name() + "` is " + what + " with the most instances" + where + " (" +
                    std::to_string(best_figures.instances) + " of " + std::to_string(total.instances) +
                    "; no GPU work was recorded)";
  }
  discovery.chosen_in_window = discovery.profiler_windows.empty() || windowed;
  if (!discovery.chosen_in_window) discovery.why += " (none of the candidates has an instance inside its profiling windows)";
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

// The library ranges the discovery lists, "CCCL:cub::DeviceScan::InclusiveScan x12 (CCCL)", at most three.
std::string library_ranges_text(const RangeDiscovery& discovery) {
  std::vector<std::string> listed;
  std::size_t more = 0;
  for (const auto& range : discovery.ranges) {
    if (range.library.empty()) continue;
    if (listed.size() == 3) {
      ++more;
      continue;
    }
    listed.push_back("`" + range.qualified_name() + "` x" + std::to_string(range.count) + " (" + range.library + ")");
  }
  return detail::join(listed, ", ") + (more > 0 ? " and " + std::to_string(more) + " more" : "");
}

// Without a range of the workload's own: the workload's window, else the whole run, and the steps inferred.
void choose_without_own_ranges(RangeDiscovery& discovery) {
  discovery.why = discovery.ranges.empty()
                      ? "the workload emits no NVTX range"
                      : "the workload emits no NVTX range of its own, only library ranges (" +
                            library_ranges_text(discovery) + "), which are never a stage";
  if (discovery.profiler_start_calls > 0) {
    discovery.capture_range = "cudaProfilerApi";
    discovery.why += "; it calls cudaProfilerStart (" + std::to_string(discovery.profiler_start_calls) +
                     "x), so the capture follows its window";
  } else {
    discovery.capture_range = "none";
    discovery.why += "; the capture recorded no cudaProfilerStart call (no window of its own), so the capture takes the "
                     "whole run";
  }
  discovery.why += ", its kernels are selected as a whole and its steps are inferred from the host's per-step "
                   "synchronisation";
}

// The capture: the workload's own window, else an enclosing range emitted once that holds every instance of the
// chosen stage (not only its first, nor only most), else none.
void choose_capture(RangeDiscovery& discovery, const TimelineReport& timeline) {
  if (discovery.profiler_start_calls > 0 && discovery.chosen_in_window) {
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
    // A library's range is never a gate: it opens wherever the library is called, not around the workload's steps.
    if (up != nullptr && up->library.empty() && encloses_every(timeline, *up, chosen->qualified_name())) {
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

bool RangeDiscovery::own_ranges() const {
  return std::any_of(ranges.begin(), ranges.end(), [](const DiscoveredRange& range) { return range.library.empty(); });
}

// Quoted for a POSIX shell: the line is printed to be pasted, and unquoted the shell took the double quotes out of
// ncu.nvtx_include=["decode/"] (which then failed as TOML) and split a range name at its blanks.
std::string RangeDiscovery::set_line() const {
  std::string line;
  for (const auto& argument : set_arguments)
    line += (line.empty() ? "" : " ") + ("--set " + quote_shell_argument(argument));
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
    range.library = stage.library;
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
  if (auto counted = count_cuda_activity(sqlite_export, discovery); !counted) return counted.error();
  if (!discovery.own_ranges()) {
    choose_without_own_ranges(discovery);
    discovery.set_arguments = {"nsys.capture_range=" + discovery.capture_range, "run.stage=auto"};
    return discovery;
  }
  // Step kinds and the choice among the workload's own ranges only: a library's range is listed, never chosen.
  const TimelineReport own = without_library_ranges(timeline);
  discovery.steps = analyze_step_kinds(own);
  choose_stage(discovery, own);
  choose_capture(discovery, own);
  discovery.set_arguments.push_back("nsys.capture_range=" + discovery.capture_range);
  if (discovery.capture_range == "nvtx")
    discovery.set_arguments.push_back("nsys.nvtx_capture=" + discovery.nvtx_capture);
  discovery.set_arguments.push_back("run.stage=" + discovery.stage);
  // A TOML array of one basic string (JSON's escapes are TOML's): a range name may hold a quote or a backslash.
  discovery.set_arguments.push_back("ncu.nvtx_include=[" +
                                    boost::json::serialize(boost::json::value(discovery.stage + "/")) + "]");
  return discovery;
}

Result<RangeDiscovery> discover_capture(const std::filesystem::path& sqlite_export,
                                        const LibraryRanges& library_ranges) {
  TimelineOptions options;
  options.library_ranges = library_ranges;
  auto timeline = analyze_timeline(sqlite_export, options);
  if (timeline) return discover_ranges(timeline.value(), sqlite_export);
  // analyze_timeline's no_report is "no closed NVTX range": a capture of a workload without NVTX.
  if (timeline.error().code != ErrorCode::no_report) return timeline.error();
  RangeDiscovery discovery;
  if (auto counted = count_cuda_activity(sqlite_export, discovery); !counted) return counted.error();
  choose_without_own_ranges(discovery);
  discovery.set_arguments = {"nsys.capture_range=" + discovery.capture_range, "run.stage=auto"};
  return discovery;
}

std::string describe_discovery(const RangeDiscovery& discovery) {
  std::string text = discovery.ranges.empty() ? "The workload emitted no NVTX range."
                                              : "The workload emitted these NVTX ranges (count, nesting):";
  for (const auto& range : discovery.ranges) {
    text += "\n  " + std::string(static_cast<std::size_t>(2 * range.level), ' ') + range.qualified_name() + " x" +
            std::to_string(range.count);
    if (!range.library.empty()) text += " [library range: " + range.library + "]";
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
