// analyze_run_directory: the analysis inputs read from a run directory by their RunLayout names
// (nsys stats tables, the SQLite export's timeline, ncu's raw CSV, stage-1 metrics), then analyze().
#include <algorithm>
#include <map>

#include <boost/json/parse.hpp>

#include "analysis/analysis_model.hpp"
#include "rundir/kernel_selection_json.hpp"
#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/run_layout.hpp"
#include "llmprof/sync_steps.hpp"
#include "rundir/run_records.hpp"

namespace llmprof {
namespace {

// Kernel and stage times from ncu are sums of each launch's duration: a CSV without the duration
// column would report every kernel at 0 ns under a time source it does not have.
std::optional<Error> check_launch_durations(const std::filesystem::path& ncu_csv,
                                            const std::vector<LaunchRoofline>& launches) {
  const bool any_duration = std::any_of(launches.begin(), launches.end(),
                                        [](const LaunchRoofline& launch) { return launch.duration_ns.has_value(); });
  if (any_duration) return std::nullopt;
  // The column is there but in a unit that is not a time (roofline.cpp withholds it): say that, not "missing".
  for (const auto& missing : launches.front().missing) {
    if (missing.rfind("gpu__time_duration.sum is in ", 0) == 0 || missing.rfind("Duration is in ", 0) == 0) {
      return make_error(
          ErrorCode::parse_error, ncu_csv.string() + ": " + missing,
          "export with ncu --import REPORT --page raw --csv --print-units base, whose durations are in ns",
          ncu_csv.string());
    }
  }
  return make_error(ErrorCode::parse_error,
                    ncu_csv.string() +
                        ": missing column gpu__time_duration.sum (the details page's \"Duration\"); "
                        "the analysis needs each launch's duration",
                    "profile with a set or section that records it (ncu --set roofline, --section SpeedOfLight or "
                    "--metrics gpu__time_duration.sum) and export with ncu --import REPORT --page raw --csv",
                    ncu_csv.string());
}

// The capture's tables: the nsys stats CSVs when any exists, else computed from the SQLite export (the default
// since nsys stats runs only for the CSVs a user asks for), else none.
Result<void> load_nsys_tables(const std::filesystem::path& nsys_prefix, const std::filesystem::path& sqlite_export,
                              AnalysisInputs& inputs) {
  std::error_code ec;
  const bool csv = has_nsys_stats_csv(nsys_prefix);
  if (!csv && !std::filesystem::exists(sqlite_export, ec)) return {};
  auto stats = load_capture_tables(nsys_prefix, sqlite_export);
  if (!stats) return stats.error();
  inputs.nsys = std::move(stats).value();
  inputs.sources["nsys"] = csv ? nsys_prefix.string() + "_<report>.csv" : sqlite_export.string();
  return {};
}

std::string qualified_range(const NvtxRangeName& range) {
  return range.domain.empty() ? range.name : range.domain + ":" + range.name;
}

// The same ranges' total CPU time in both captures (each name once, summed over styles).
std::vector<ReportNodeCapture::RangeWall> range_walls(const NsysStats& first, const NsysStats& node) {
  std::vector<ReportNodeCapture::RangeWall> walls;
  if (!first.ranges || !node.ranges) return walls;
  std::map<std::string, std::int64_t> node_totals;
  for (const auto& row : *node.ranges) node_totals[qualified_range(row.range)] += row.time.total_time_ns;
  for (const auto& row : *first.ranges) {
    const std::string name = qualified_range(row.range);
    const auto found = node_totals.find(name);
    if (found == node_totals.end()) continue;
    auto same = std::find_if(walls.begin(), walls.end(), [&](const auto& wall) { return wall.range == name; });
    if (same == walls.end()) same = walls.insert(walls.end(), {name, 0, found->second});
    same->first_capture_ns += row.time.total_time_ns;
  }
  return walls;
}

// The node-traced capture's kernel tables in place of the first capture's, when nsys/node/ holds them.
Result<void> load_node_kernel_tables(const std::filesystem::path& node_prefix,
                                     const std::filesystem::path& node_sqlite, AnalysisInputs& inputs) {
  std::error_code ec;
  const bool csv = find_nsys_stats_report(node_prefix, "cuda_gpu_kern_sum").has_value();
  if (!inputs.nsys || (!csv && !std::filesystem::exists(node_sqlite, ec))) return {};
  auto node = load_capture_tables(node_prefix, node_sqlite);
  if (!node) return node.error();
  ReportNodeCapture capture;
  // Relative: the report shows it.
  capture.kernel_tables =
      csv ? RunLayout::nsys_node_stats_prefix().string() + "_*.csv" : RunLayout::nsys_node_sqlite().string();
  capture.range_walls = range_walls(*inputs.nsys, node.value());
  inputs.nsys = with_kernel_tables_of(std::move(*inputs.nsys), node.value());
  inputs.node_capture = std::move(capture);
  inputs.sources["nsys_kernels"] = csv ? node_prefix.string() + "_<report>.csv" : node_sqlite.string();
  return {};
}

// The timeline of the SQLite export; a problem with it is returned, not raised: the other inputs still stand.
std::optional<std::string> load_timeline(const std::filesystem::path& sqlite_export, const AnalysisOptions& options,
                                         AnalysisInputs& inputs) {
  std::error_code ec;
  if (!std::filesystem::exists(sqlite_export, ec)) return std::nullopt;
  TimelineOptions timeline_options;
  timeline_options.cuda_traced = options.cuda_traced;
  timeline_options.library_ranges = options.library_ranges;
  auto timeline = analyze_timeline(sqlite_export, timeline_options);
  if (!timeline) return "timeline: " + timeline.error().describe();
  inputs.timeline = std::move(timeline).value();
  inputs.sources["timeline"] = sqlite_export.string();
  if (options.attributed_samples) {
    inputs.gpu_metrics = options.attributed_samples->samples;
    inputs.gpu_metrics_origin = options.attributed_samples->origin;
    inputs.gpu_metrics_other_capture = options.attributed_samples->other_capture;
    if (inputs.gpu_metrics) inputs.sources["gpu_metrics"] = options.attributed_samples->origin;
    return std::nullopt;
  }
  auto samples = read_gpu_metric_samples(sqlite_export, options.gpu_metrics_expectation);
  if (!samples) {
    // The panel says why there are no figures, not that there were no samples.
    inputs.gpu_metrics_origin = "withheld: " + samples.error().describe();
    return "GPU-metrics samples: " + samples.error().describe();
  }
  if (samples->has_value()) {
    inputs.gpu_metrics = std::move(**samples);
    inputs.sources["gpu_metrics"] = sqlite_export.string();
  }
  return std::nullopt;
}

// Every launch of ncu's raw CSV, through the roofline, when the file exists.
Result<void> load_ncu_launches(const std::filesystem::path& ncu_csv, const AnalysisOptions& options,
                               AnalysisInputs& inputs) {
  std::error_code ec;
  if (!std::filesystem::exists(ncu_csv, ec)) return {};
  std::vector<LaunchRoofline> launches;
  NcuParseOptions parse_options;
  parse_options.keep_metric = keep_metrics_with_prefixes(roofline_metric_prefixes());
  auto info = for_each_ncu_launch(ncu_csv, parse_options, [&](const NcuKernelLaunch& launch) {
    launches.push_back(analyze_launch(launch, options.thresholds));
    return true;
  });
  if (!info) return info.error();
  if (launches.empty()) {
    return make_error(ErrorCode::parse_error, ncu_csv.string() + ": the ncu CSV holds a header but no kernel launch",
                      "check the ncu log: its filters may have matched no kernel", ncu_csv.string());
  }
  if (auto missing = check_launch_durations(ncu_csv, launches)) return *missing;
  const auto without_duration =
      std::count_if(launches.begin(), launches.end(), [](const LaunchRoofline& launch) { return !launch.duration_ns; });
  if (without_duration > 0) {
    inputs.warnings.push_back(std::to_string(without_duration) + " of " + std::to_string(launches.size()) +
                              " launches in " + ncu_csv.string() +
                              " have no gpu__time_duration.sum value; kernel "
                              "times taken from the ncu launches leave them out");
  }
  inputs.ncu_launches = std::move(launches);
  inputs.sources["ncu"] = ncu_csv.string();
  return {};
}

Result<void> load_workload(const std::filesystem::path& metrics_json, AnalysisInputs& inputs) {
  std::error_code ec;
  if (!std::filesystem::exists(metrics_json, ec)) return {};
  auto metrics = load_workload_metrics(metrics_json);
  if (!metrics) return metrics.error();
  inputs.warnings.insert(inputs.warnings.end(), metrics->warnings.begin(), metrics->warnings.end());
  inputs.workload = std::move(metrics).value();
  inputs.sources["workload"] = metrics_json.string();
  return {};
}

// ncu/plan.json, read by its field table (read_ncu_plan_file): the plan's launch-configuration groups, for carrying
// DRAM bytes per configuration, and the check's measured / extrapolated split of ncu's coverage. A plan that does not
// read (a value of the wrong type, a check without the split, as plans written before it have) is left out with a
// warning: the bytes are carried per kernel and nothing is made up for the split.
void load_ncu_plan(const std::filesystem::path& plan_json, AnalysisInputs& inputs) {
  std::error_code ec;
  if (!std::filesystem::exists(plan_json, ec)) return;
  auto file = read_ncu_plan_file(plan_json);
  if (!file) {
    inputs.warnings.push_back(file.error().message +
                              ": DRAM bytes are carried per kernel, not per launch configuration, and the measured / "
                              "extrapolated split of ncu's coverage is left out");
    return;
  }
  inputs.warnings.insert(inputs.warnings.end(), file->warnings.begin(), file->warnings.end());
  NcuPlanGroups groups;
  groups.stage = file->plan.stage;
  for (auto& config : file->plan.configs)
    if (config.stage_launches > 0) groups.configs.push_back(std::move(config));
  if (!groups.configs.empty()) {
    inputs.ncu_plan_groups = std::move(groups);
    inputs.sources["ncu_plan_groups"] = plan_json.string();
  }
  if (!file->check) return;
  inputs.ncu_coverage = ReportNcuCoverage{file->plan.stage, file->check->coverage_measured, file->check->coverage_extrapolated};
  inputs.sources["ncu_coverage"] = plan_json.string();
}

// The select stage's choice (nsys/selection.json): the kernels ncu was filtered to. A file that does not read is a
// warning, and the analysis selects again from the tables (and says it did, in top_kernel_selection's source).
void load_recorded_selection(const std::filesystem::path& selection_json, AnalysisInputs& inputs) {
  std::error_code ec;
  if (!std::filesystem::exists(selection_json, ec)) return;
  auto selection = detail::read_kernel_selection(selection_json);
  if (!selection) {
    inputs.warnings.push_back(selection.error().message + ": the analysis selected the kernels again from the nsys "
                              "tables, which may not be the kernels ncu profiled");
    return;
  }
  inputs.selection = std::move(selection).value();
  inputs.sources["top_kernel_selection"] = selection_json.string();
}

}  // namespace

Result<AnalysisReport> analyze_run_directory(const std::filesystem::path& main_directory,
                                             const AnalysisOptions& options) {
  if (auto checked = check_main_directory(main_directory, "to analyse"); !checked) return checked.error();
  AnalysisInputs inputs;
  const RunLayout layout(main_directory);
  const auto nsys_prefix = layout.resolve(RunLayout::nsys_stats_prefix());
  const auto sqlite_export = layout.resolve(RunLayout::nsys_sqlite());
  if (auto loaded = load_nsys_tables(nsys_prefix, sqlite_export, inputs); !loaded) return loaded.error();
  if (auto loaded = load_node_kernel_tables(layout.resolve(RunLayout::nsys_node_stats_prefix()),
                                            layout.resolve(RunLayout::nsys_node_sqlite()), inputs);
      !loaded)
    return loaded.error();
  const std::optional<std::string> timeline_problem = load_timeline(sqlite_export, options, inputs);
  const auto ncu_csv = layout.resolve(RunLayout::ncu_raw_csv());
  if (auto loaded = load_ncu_launches(ncu_csv, options, inputs); !loaded) return loaded.error();
  if (inputs.ncu_launches) load_ncu_plan(layout.resolve(RunLayout::ncu_plan()), inputs);
  const auto metrics_json = layout.resolve(RunLayout::stage1_metrics());
  if (auto loaded = load_workload(metrics_json, inputs); !loaded) return loaded.error();
  load_recorded_selection(layout.resolve(RunLayout::kernel_selection()), inputs);
  if (!inputs.nsys && !inputs.ncu_launches && !inputs.workload && !inputs.timeline) {
    if (timeline_problem) return make_error(ErrorCode::parse_error, *timeline_problem, "", sqlite_export.string());
    return make_error(ErrorCode::not_found,
                      "run directory " + main_directory.string() + " holds nothing to analyse: none of " +
                          nsys_stats_report_path(nsys_prefix, "cuda_gpu_kern_sum").string() +
                          " (and the other nsys "
                          "reports), " +
                          ncu_csv.string() + ", " + metrics_json.string() + " exists",
                      "run the nsys and/or ncu stages first", main_directory.string());
  }
  auto report = analyze(inputs, options);
  // A range with GPU work and no step known inside it: the steps inferred from the same export may be its steps.
  // Inferring reads the export again, so only then, and the analysis runs again with them.
  if (report && detail::wants_inferred_steps(*report, options.selection_stage)) {
    auto inferred = infer_sync_steps(sqlite_export);
    if (!inferred) {
      report->warnings.push_back("steps inferred without NVTX: " + inferred.error().describe());
    } else if (inferred->has_value()) {
      inputs.inferred_steps = std::move(**inferred);
      report = analyze(inputs, options);
    }
  }
  if (report && timeline_problem) report->skipped.push_back(*timeline_problem);
  return report;
}

}  // namespace llmprof
