// The analysis of one run's inputs: device peaks, top-kernel selection, and analyze() putting the
// kernels (analysis_kernels.cpp), stages (analysis_stages.cpp) and timeline together.
#include "llmprof/analysis.hpp"
#include "llmprof/sampled_utilisation.hpp"

#include <set>

#include "analysis/analysis_model.hpp"
#include "rundir/report_ncu_records.hpp"

namespace llmprof {
namespace detail {
std::string qualified_range(const NvtxRangeName& range) {
  return range.domain.empty() ? range.name : range.domain + ":" + range.name;
}
}  // namespace detail

namespace {

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
      source +=
          " (highest of " + std::to_string(inputs.ncu_launches->size()) + " launches; at the clocks ncu profiled at)";
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
  // One selection: the kernels the select stage chose are the kernels ncu profiled, so the report shows those.
  if (inputs.selection) {
    const bool same_stage = inputs.selection->stage == options.selection_stage &&
                            (!options.selection_domain || *options.selection_domain == inputs.selection->domain);
    if (same_stage) {
      report.top_kernel_selection = *inputs.selection;
      return;
    }
    report.warnings.push_back("top_kernel_selection is of stage " + options.selection_stage +
                              ", as asked; the kernels ncu profiled were selected from stage " +
                              inputs.selection->stage + " (nsys/selection.json)");
    report.sources.erase("top_kernel_selection");
  }
  if (!inputs.nsys) {
    report.skipped.push_back("top_kernel_selection: needs the nsys tables (nvtx_kern_sum), which are absent");
    return;
  }
  if (!options.name_base) {
    report.skipped.push_back(
        "top_kernel_selection: ncu matches mangled kernel names (ncu.kernel_name_base = mangled), "
        "and a kernel regex cannot be written in that form from the demangled names nsys prints");
    return;
  }
  // Field by field: the request is the selector's own type, which the select stage fills from the config too
  // (copies between two types look alike to the duplicates tool by shape only).
  TopKernelRequest request;
  request.stage = options.selection_stage;
  request.domain = options.selection_domain;
  request.n = options.top_n;
  request.coverage = options.kernel_coverage;
  request.max_kernels = options.max_kernels;
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
    return make_error(ErrorCode::invalid_argument,
                      "nothing to analyse: no nsys tables, ncu launches or workload metrics",
                      "profile the run first (deep-profile run)");
  }
  AnalysisReport report;
  report.sources = inputs.sources;
  report.node_capture = inputs.node_capture;
  report.warnings = inputs.warnings;
  report.workload = inputs.workload;
  report.ncu_coverage = inputs.ncu_coverage;
  // The rule the report applies reading report.json back: the rows of ncu_coverage's table.
  detail::withhold_impossible_figures(report.ncu_coverage, report.warnings, "ncu/plan.json's coverage");
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
  if (!inputs.nsys)
    report.skipped.push_back("whole-run kernel times, stage wall and GPU projection times: no nsys tables");
  if (!inputs.ncu_launches) report.skipped.push_back("FLOP, DRAM bytes, percent of peak, bound: no ncu launches");
  if (!inputs.workload) report.skipped.push_back("mfu_workload: no workload metrics (stage1/metrics.json)");

  detail::PerLaunchMeans flop_per_launch;
  detail::build_kernels(inputs, options, report, flop_per_launch);
  for (auto& kernel : report.kernels) {
    detail::FigureChecker check(report.warnings, "kernel '" + kernel.name.substr(0, 80) + "'");
    detail::withhold_impossible_figures(kernel, check);
    // A bound judged on a withheld percentage is no longer supported by anything.
    if (!kernel.pct_peak_compute || !kernel.pct_peak_dram) kernel.bound.reset();
  }
  build_device(inputs, options, report);
  detail::build_stages(inputs, options, flop_per_launch, report);
  detail::build_nvtx_ranges(inputs, report);
  build_selection(inputs, options, report);
  if (inputs.timeline)
    detail::apply_timeline(*inputs.timeline, report);
  else
    report.skipped.push_back("timeline (per-instance figures, CUDA graphs, capture losses): no nsys/profile.sqlite");
  detail::assign_step_units(inputs.inferred_steps, report);
  detail::fill_stage_limits(report);
  if (inputs.timeline)
    attach_sampled_utilisation(*inputs.timeline, inputs.gpu_metrics, report, inputs.gpu_metrics_origin,
                               inputs.gpu_metrics_other_capture);
  return report;
}

}  // namespace llmprof
