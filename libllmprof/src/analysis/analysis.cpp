// The analysis: per-kernel aggregates joined across nsys and ncu, device peaks, top-kernel
// selection, and reading a run directory.
#include "llmprof/analysis.hpp"

#include <algorithm>
#include <set>

#include "analysis/analysis_model.hpp"
#include "llmprof/run_layout.hpp"

namespace llmprof {
namespace detail {
std::string qualified_range(const NvtxRangeName& range) {
  return range.domain.empty() ? range.name : range.domain + ":" + range.name;
}
}  // namespace detail

namespace {

// Finds the nsys row of an ncu kernel name: exact, then the spelling-independent join key, then
// the bare function name when only one nsys kernel has it.
class NsysKernelIndex {
 public:
  explicit NsysKernelIndex(const std::vector<KernelSummaryRow>& rows) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      exact_.emplace(rows[i].name, i);
      by_key_[kernel_name_join_key(rows[i].name)].push_back(i);
      by_function_[kernel_function_name(rows[i].name)].push_back(i);
    }
  }
  std::optional<std::pair<std::size_t, std::string>> find(const std::string& ncu_name) const {
    if (auto it = exact_.find(ncu_name); it != exact_.end()) return std::pair{it->second, std::string("exact")};
    if (auto it = by_key_.find(kernel_name_join_key(ncu_name)); it != by_key_.end() && it->second.size() == 1) {
      return std::pair{it->second.front(), std::string("join key")};
    }
    if (auto it = by_function_.find(kernel_function_name(ncu_name));
        it != by_function_.end() && it->second.size() == 1) {
      return std::pair{it->second.front(), std::string("function name")};
    }
    return std::nullopt;
  }

 private:
  std::map<std::string, std::size_t> exact_;
  std::map<std::string, std::vector<std::size_t>> by_key_;
  std::map<std::string, std::vector<std::size_t>> by_function_;
};

struct LaunchTotals {
  std::int64_t launches = 0;
  double duration_ns = 0;
  double flop = 0;
  std::int64_t flop_launches = 0;
  double dram_bytes = 0;
  std::int64_t dram_launches = 0;
  double compute_weighted = 0, compute_weight = 0;
  double dram_weighted = 0, dram_weight = 0;
  std::map<std::string, double> flop_by_precision;
  std::set<std::string> stages;
  std::string ncu_name;
  std::string join;
};

void add_launch(LaunchTotals& totals, const LaunchRoofline& launch) {
  ++totals.launches;
  const double duration = launch.duration_ns.value_or(0);
  totals.duration_ns += duration;
  if (launch.flop) {
    totals.flop += *launch.flop;
    ++totals.flop_launches;
    for (const auto& [key, flop] : launch.flop_by_precision) totals.flop_by_precision[key] += flop;
  }
  if (launch.dram_bytes) {
    totals.dram_bytes += *launch.dram_bytes;
    ++totals.dram_launches;
  }
  if (launch.pct_peak_compute) {
    totals.compute_weighted += *launch.pct_peak_compute * duration;
    totals.compute_weight += duration;
  }
  if (launch.pct_peak_dram) {
    totals.dram_weighted += *launch.pct_peak_dram * duration;
    totals.dram_weight += duration;
  }
  for (const auto& range : launch.nvtx_stack) totals.stages.insert(detail::qualified_range(range));
  if (totals.ncu_name.empty()) totals.ncu_name = launch.kernel_name;
}

void fill_efficiency(KernelAnalysis& kernel, const LaunchTotals& totals, const AnalysisOptions& options) {
  kernel.profiled_launches = totals.launches;
  kernel.ncu_name = totals.ncu_name;
  kernel.join = totals.join;
  if (totals.flop_launches > 0) kernel.flop_per_launch = totals.flop / static_cast<double>(totals.flop_launches);
  if (totals.dram_launches > 0) {
    kernel.dram_bytes_per_launch = totals.dram_bytes / static_cast<double>(totals.dram_launches);
  }
  if (totals.flop_launches > 0 && totals.dram_launches > 0 && totals.dram_bytes > 0) {
    kernel.arithmetic_intensity = totals.flop / totals.dram_bytes;
  }
  if (totals.flop_launches > 0 && totals.duration_ns > 0) {
    kernel.achieved_flop_per_s = totals.flop / (totals.duration_ns * 1e-9);
  }
  if (totals.compute_weight > 0) kernel.pct_peak_compute = totals.compute_weighted / totals.compute_weight;
  if (totals.dram_weight > 0) kernel.pct_peak_dram = totals.dram_weighted / totals.dram_weight;
  kernel.bound = classify_bound(kernel.pct_peak_compute, kernel.pct_peak_dram, options.thresholds);
  double most = 0;
  for (const auto& [key, flop] : totals.flop_by_precision) {
    if (flop > most) {
      most = flop;
      kernel.dominant_precision = key;
    }
  }
  kernel.stages.insert(kernel.stages.end(), totals.stages.begin(), totals.stages.end());
}

detail::FlopPerLaunch mean_flop_per_launch(const std::map<std::string, LaunchTotals>& totals) {
  detail::FlopPerLaunch means;
  for (const auto& [name, entry] : totals) {
    if (entry.flop_launches == 0) continue;
    auto& mean = means[name];  // a profiled kernel with no FLOP still has a (zero) FLOP figure
    for (const auto& [key, flop] : entry.flop_by_precision) mean[key] = flop / static_cast<double>(entry.flop_launches);
  }
  return means;
}

void build_kernels(const AnalysisInputs& inputs, const AnalysisOptions& options, AnalysisReport& report,
                   detail::FlopByPrecisionPerLaunch& flop_per_launch) {
  const bool have_nsys_kernels = inputs.nsys && inputs.nsys->kernels;
  std::map<std::string, LaunchTotals> totals;  // by KernelAnalysis name
  std::vector<std::string> joined_name;  // per launch, in file order: its KernelAnalysis name
  std::vector<std::string> unmatched;
  if (inputs.ncu_launches) {
    std::optional<NsysKernelIndex> index;
    if (have_nsys_kernels) index.emplace(*inputs.nsys->kernels);
    for (const auto& launch : *inputs.ncu_launches) {
      std::string name = launch.kernel_name;
      std::string join;
      if (index) {
        if (auto found = index->find(launch.kernel_name)) {
          name = (*inputs.nsys->kernels)[found->first].name;
          join = found->second;
        } else if (std::find(unmatched.begin(), unmatched.end(), launch.kernel_name) == unmatched.end()) {
          unmatched.push_back(launch.kernel_name);
        }
      }
      joined_name.push_back(name);
      auto& entry = totals[name];
      entry.join = join;
      add_launch(entry, launch);
    }
  }
  for (const auto& name : unmatched) {
    report.warnings.push_back("ncu kernel '" + name + "' has no row in nsys cuda_gpu_kern_sum; its times come from "
                              "the ncu launches alone");
  }

  std::set<std::string> done;
  if (have_nsys_kernels) {
    std::map<std::string, std::set<std::string>> nsys_stages;
    if (inputs.nsys->range_kernels) {
      for (const auto& row : *inputs.nsys->range_kernels) {
        if (row.range) nsys_stages[row.kernel_name].insert(detail::qualified_range(*row.range));
      }
    }
    for (const auto& row : *inputs.nsys->kernels) {
      KernelAnalysis kernel;
      kernel.name = row.name;
      kernel.instances = row.time.count;
      kernel.total_time_ns = row.time.total_time_ns;
      kernel.avg_time_ns = row.time.average_ns;
      kernel.time_source = "nsys cuda_gpu_kern_sum";
      auto& stages = nsys_stages[row.name];
      if (auto it = totals.find(row.name); it != totals.end()) {
        stages.insert(it->second.stages.begin(), it->second.stages.end());
        auto copy = it->second;
        copy.stages = stages;
        fill_efficiency(kernel, copy, options);
        done.insert(row.name);
      } else {
        kernel.stages.assign(stages.begin(), stages.end());
      }
      report.kernels.push_back(std::move(kernel));
    }
  }
  for (const auto& [name, entry] : totals) {
    if (done.count(name)) continue;
    KernelAnalysis kernel;
    kernel.name = name;
    kernel.instances = entry.launches;
    kernel.total_time_ns = static_cast<std::int64_t>(entry.duration_ns + 0.5);
    kernel.avg_time_ns = entry.launches ? entry.duration_ns / static_cast<double>(entry.launches) : 0;
    kernel.time_source = "ncu gpu__time_duration.sum";
    fill_efficiency(kernel, entry, options);
    report.kernels.push_back(std::move(kernel));
  }
  flop_per_launch.any_stage = mean_flop_per_launch(totals);
  if (inputs.ncu_launches) {
    std::map<std::string, std::map<std::string, LaunchTotals>> by_stage;
    for (std::size_t i = 0; i < inputs.ncu_launches->size(); ++i) {
      const auto& launch = (*inputs.ncu_launches)[i];
      const auto& name = joined_name.at(i);
      if (!launch.nvtx_stack.empty()) flop_per_launch.kernels_with_stacks.insert(name);
      for (const auto& range : launch.nvtx_stack) add_launch(by_stage[detail::qualified_range(range)][name], launch);
    }
    for (const auto& [stage, stage_totals] : by_stage) flop_per_launch.by_stage[stage] = mean_flop_per_launch(stage_totals);
  }
  std::int64_t total = 0;
  for (const auto& kernel : report.kernels) total += kernel.total_time_ns;
  for (auto& kernel : report.kernels) {
    kernel.share_of_total = total > 0 ? static_cast<double>(kernel.total_time_ns) / static_cast<double>(total) : 0;
  }
  std::stable_sort(report.kernels.begin(), report.kernels.end(), [](const auto& a, const auto& b) {
    return a.total_time_ns > b.total_time_ns;
  });
}

void build_device(const AnalysisInputs& inputs, const AnalysisOptions& options, AnalysisReport& report) {
  auto& device = report.device;
  if (inputs.ncu_launches) {
    for (const auto& launch : *inputs.ncu_launches) {
      if (device.name.empty()) device.name = launch.device_name;
      for (const auto& [key, peak] : launch.peak_flop_per_s) {
        if (peak > device.peak_flop_per_s[key]) {
          device.peak_flop_per_s[key] = peak;
          device.sources[key] = launch.peak_sources.at(key);
        }
      }
      if (launch.peak_dram_bytes_per_s && *launch.peak_dram_bytes_per_s > device.peak_dram_bytes_per_s.value_or(0)) {
        device.peak_dram_bytes_per_s = launch.peak_dram_bytes_per_s;
        device.sources["dram"] = launch.peak_sources.at("dram");
      }
    }
    for (auto& [key, source] : device.sources) {
      source += " (highest of " + std::to_string(inputs.ncu_launches->size()) +
                " launches; at the clocks ncu profiled at)";
    }
  }
  if (device.name.empty() && inputs.workload) device.name = inputs.workload->device_name;
  if (device.name.empty()) device.name = options.device_name;
  report.datasheet = datasheet_peaks(device.name);
  if (report.datasheet) {
    for (const auto& [key, peak] : report.datasheet->peak_flop_per_s) {
      if (!device.peak_flop_per_s.count(key)) {
        device.peak_flop_per_s[key] = peak;
        device.sources[key] = "datasheet: " + report.datasheet->sources.at(key);
      }
    }
    if (!device.peak_dram_bytes_per_s) {
      device.peak_dram_bytes_per_s = report.datasheet->peak_dram_bytes_per_s;
      device.sources["dram"] = "datasheet: " + report.datasheet->sources.at("dram");
    }
  } else if (device.peak_flop_per_s.empty()) {
    report.skipped.push_back("device peaks: no ncu peak metrics and device '" + device.name +
                             "' is not in the datasheet table, so MFU and percent of peak cannot be computed");
  }
}

void build_selection(const AnalysisInputs& inputs, const AnalysisOptions& options, AnalysisReport& report) {
  if (!inputs.nsys) {
    report.skipped.push_back("top_kernel_selection: needs the nsys tables (nvtx_kern_sum), which are absent");
    return;
  }
  if (!options.name_base) {
    report.skipped.push_back("top_kernel_selection: ncu matches mangled kernel names (ncu.kernel_name_base = mangled), "
                             "and a kernel regex cannot be written in that form from the demangled names nsys prints");
    return;
  }
  TopKernelRequest request;
  request.stage = options.selection_stage;
  request.domain = options.selection_domain;
  request.n = options.top_n;
  request.name_base = *options.name_base;
  request.capture_gated_on_stage = options.capture_gated_on_stage;
  auto selection = select_top_kernels(*inputs.nsys, request);
  if (selection) {
    report.top_kernel_selection = std::move(selection).value();
  } else {
    report.skipped.push_back("top_kernel_selection: " + selection.error().describe());
  }
}

}  // namespace

Result<AnalysisReport> analyze(const AnalysisInputs& inputs, const AnalysisOptions& options) {
  if (!inputs.nsys && !inputs.ncu_launches && !inputs.workload && !inputs.timeline) {
    return make_error(ErrorCode::invalid_argument, "nothing to analyse: no nsys tables, ncu launches or workload metrics",
                      "profile the run first (deep-profile run)");
  }
  AnalysisReport report;
  report.sources = inputs.sources;
  report.warnings = inputs.warnings;
  report.workload = inputs.workload;
  if (inputs.ncu_launches) report.launches = *inputs.ncu_launches;
  // A metric withheld for its unit is named once per distinct reason, not once per launch.
  std::set<std::string> withheld;
  for (const auto& launch : report.launches) {
    for (const auto& missing : launch.missing) {
      if (missing.find(": withheld") != std::string::npos && withheld.insert(missing).second) {
        report.warnings.push_back("ncu launch " + std::to_string(launch.launch_id) + ": " + missing);
      }
    }
  }
  if (!inputs.nsys) report.skipped.push_back("whole-run kernel times, stage wall and GPU projection times: no nsys tables");
  if (!inputs.ncu_launches) report.skipped.push_back("FLOP, DRAM bytes, percent of peak, bound: no ncu launches");
  if (!inputs.workload) report.skipped.push_back("mfu_workload: no workload metrics (stage1/metrics.json)");

  detail::FlopByPrecisionPerLaunch flop_per_launch;
  build_kernels(inputs, options, report, flop_per_launch);
  for (auto& kernel : report.kernels) detail::withhold_impossible_figures(kernel, report.warnings);
  build_device(inputs, options, report);
  detail::build_stages(inputs, options, flop_per_launch, report);
  detail::build_range_timings(inputs, report);
  build_selection(inputs, options, report);
  if (inputs.timeline) detail::apply_timeline(*inputs.timeline, report);
  else report.skipped.push_back("timeline (per-instance figures, CUDA graphs, capture losses): no nsys/profile.sqlite");
  return report;
}

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
      return make_error(ErrorCode::parse_error, ncu_csv.string() + ": " + missing,
                        "export with ncu --import REPORT --page raw --csv --print-units base, whose durations are in ns",
                        ncu_csv.string());
    }
  }
  return make_error(ErrorCode::parse_error,
                    ncu_csv.string() + ": missing column gpu__time_duration.sum (the details page's \"Duration\"); "
                                       "the analysis needs each launch's duration",
                    "profile with a set or section that records it (ncu --set roofline, --section SpeedOfLight or "
                    "--metrics gpu__time_duration.sum) and export with ncu --import REPORT --page raw --csv",
                    ncu_csv.string());
}

}  // namespace

Result<AnalysisReport> analyze_run_directory(const std::filesystem::path& main_directory,
                                             const AnalysisOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(main_directory, ec)) {
    return make_error(ErrorCode::not_found, "run directory " + main_directory.string() + " does not exist",
                      "pass the MAIN directory a deep-profile run created", main_directory.string());
  }
  AnalysisInputs inputs;
  const RunLayout layout(main_directory);
  const auto nsys_prefix = layout.resolve(RunLayout::nsys_stats_prefix());
  bool any_nsys = false;
  for (const auto& report : nsys_stats_report_names()) {
    const auto file = find_nsys_stats_report(nsys_prefix, report);  // either spelling (nsys 2022.4 / 2025.3)
    any_nsys = any_nsys || (file && std::filesystem::is_regular_file(*file, ec));
  }
  if (any_nsys) {
    auto stats = load_nsys_stats(nsys_prefix);
    if (!stats) return stats.error();
    inputs.nsys = std::move(stats).value();
    inputs.sources["nsys"] = nsys_prefix.string() + "_<report>.csv";
  }
  const auto sqlite_export = layout.resolve(RunLayout::nsys_sqlite());
  std::optional<std::string> timeline_problem;
  if (std::filesystem::exists(sqlite_export, ec)) {
    auto timeline = analyze_timeline(sqlite_export);
    if (timeline) {
      inputs.timeline = std::move(timeline).value();
      inputs.sources["timeline"] = sqlite_export.string();
    } else {
      timeline_problem = "timeline: " + timeline.error().describe();  // the other inputs still stand
    }
  }
  const auto ncu_csv = layout.resolve(RunLayout::ncu_raw_csv());
  if (std::filesystem::exists(ncu_csv, ec)) {
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
    const auto without_duration = std::count_if(launches.begin(), launches.end(),
                                                [](const LaunchRoofline& launch) { return !launch.duration_ns; });
    if (without_duration > 0) {
      inputs.warnings.push_back(std::to_string(without_duration) + " of " + std::to_string(launches.size()) +
                                " launches in " + ncu_csv.string() + " have no gpu__time_duration.sum value; kernel "
                                "times taken from the ncu launches leave them out");
    }
    inputs.ncu_launches = std::move(launches);
    inputs.sources["ncu"] = ncu_csv.string();
  }
  const auto metrics_json = layout.resolve(RunLayout::stage1_metrics());
  if (std::filesystem::exists(metrics_json, ec)) {
    auto metrics = load_workload_metrics(metrics_json);
    if (!metrics) return metrics.error();
    inputs.workload = std::move(metrics).value();
    inputs.sources["workload"] = metrics_json.string();
  }
  if (!inputs.nsys && !inputs.ncu_launches && !inputs.workload && !inputs.timeline) {
    if (timeline_problem) return make_error(ErrorCode::parse_error, *timeline_problem, "", sqlite_export.string());
    return make_error(ErrorCode::not_found,
                      "run directory " + main_directory.string() + " holds nothing to analyse: none of " +
                          nsys_stats_report_path(nsys_prefix, "cuda_gpu_kern_sum").string() + " (and the other nsys "
                          "reports), " + ncu_csv.string() + ", " + metrics_json.string() + " exists",
                      "run the nsys and/or ncu stages first", main_directory.string());
  }
  auto report = analyze(inputs, options);
  if (report && timeline_problem) report->skipped.push_back(*timeline_problem);
  return report;
}

}  // namespace llmprof
