// Writes the analysis: report.json (schema llmprof.report/2), and kernels.csv and stages.csv from the same records
// and field tables (rundir/report_model_json.cpp), so the files cannot list different figures.
#include <optional>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "analysis/analysis_model.hpp"
#include "rundir/kernel_selection_json.hpp"
#include "rundir/timeline_record_json.hpp"
#include "core/atomic_file.hpp"
#include "core/json_pretty.hpp"
#include "core/json_values.hpp"
#include "core/text.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/run_layout.hpp"
#include "rundir/report_model_json.hpp"
#include "rundir/report_ncu_records.hpp"

namespace llmprof {
namespace {

using detail::json_array;

// The analysis's figures as report.json's records (report_model.hpp), whose one table writes them.
ReportDevicePeaks peaks_record(const DevicePeaks& peaks) {
  ReportDevicePeaks record;
  record.name = peaks.name;
  record.peak_flop_per_s.assign(peaks.peak_flop_per_s.begin(), peaks.peak_flop_per_s.end());
  record.peak_dram_bytes_per_s = peaks.peak_dram_bytes_per_s;
  record.sources.assign(peaks.sources.begin(), peaks.sources.end());
  return record;
}

ReportDevice device_record(const AnalysisReport& report) {
  ReportDevice record;
  static_cast<ReportDevicePeaks&>(record) = peaks_record(report.device);
  if (report.datasheet) record.datasheet = peaks_record(*report.datasheet);
  return record;
}

// An ncu launch as report.json's record: the analysis keeps more per launch (clocks' peaks, grid) than the file holds.
ReportNcuLaunch launch_record(const LaunchRoofline& launch) {
  ReportNcuLaunch record;
  record.id = launch.launch_id;
  record.kernel_name = launch.kernel_name;
  // Spelled like stages[] and kernels[].stages ("decode", "llm:decode"), so a stack entry can be
  // looked up among the stages as written.
  for (const auto& range : launch.nvtx_stack) record.nvtx_stack.push_back(detail::qualified_range(range));
  record.duration_ns = launch.duration_ns;
  record.flop = launch.flop;
  record.flop_by_precision.assign(launch.flop_by_precision.begin(), launch.flop_by_precision.end());
  // The figures the file holds, field by field
  // (copies between two types look alike to the duplicates tool by shape only).
  record.dram_bytes = launch.dram_bytes;
  record.achieved_flop_per_s = launch.achieved_flop_per_s;
  record.dram_bytes_per_s = launch.dram_bytes_per_s;
  record.arithmetic_intensity = launch.arithmetic_intensity;
  record.pct_peak_compute = launch.pct_peak_compute;
  record.pct_peak_dram = launch.pct_peak_dram;
  if (launch.bound) record.bound = to_string(*launch.bound);
  record.dominant_precision = launch.dominant_precision;
  record.missing = launch.missing;
  return record;
}

boost::json::value json_selection(const std::optional<KernelSelection>& selection) {
  if (!selection) return nullptr;
  return detail::kernel_selection_json(*selection);
}

// The workload's MFU at its dtype's peak, beside ncu's, for each stage with a model FLOP rate.
std::optional<ReportWorkloadMfu> workload_mfu_record(const AnalysisReport& report) {
  if (!report.workload) return std::nullopt;
  ReportWorkloadMfu record;
  record.dtype = report.workload->dtype;
  const auto peak = report.device.peak_flop_per_s.find(report.workload->dtype);
  if (peak != report.device.peak_flop_per_s.end()) record.peak_flop_per_s = peak->second;
  for (const auto& stage : report.stages)
    if (stage.model_flop_per_s)
      record.stages.push_back({stage.qualified_name(), *stage.model_flop_per_s, stage.mfu_workload, stage.mfu});
  return record;
}

// "nvtx_ranges": per-instance wall times of each range on the CPU timeline, the analysis's records as computed.
boost::json::array json_range_timings(const AnalysisReport& report) {
  boost::json::array ranges;
  for (const auto& range : report.nvtx_ranges) ranges.emplace_back(detail::report_json(range));
  return ranges;
}

// "bare_run": the workload's own figures from the bare stage-1 run, the ReportBareRun part of stage1/metrics.json's
// record as read.
boost::json::value json_bare_run(const AnalysisReport& report) {
  if (!report.workload) return nullptr;
  return detail::report_json(static_cast<const ReportBareRun&>(*report.workload));
}

}  // namespace

std::string analysis_report_json(const AnalysisReport& report) {
  boost::json::object root;
  root["schema"] = std::string(analysis_report_schema);
  root["device"] = detail::report_json(device_record(report));
  boost::json::array stages;
  // The analysis's own records (report_model.hpp): written as computed, no copy in between.
  for (const auto& stage : report.stages) stages.emplace_back(detail::report_json(stage));
  root["stages"] = std::move(stages);
  boost::json::array kernels;
  for (const auto& kernel : report.kernels) kernels.emplace_back(detail::report_json(kernel));
  root["kernels"] = std::move(kernels);
  root["top_kernel_selection"] = json_selection(report.top_kernel_selection);
  root["ncu_coverage"] = detail::report_json(report.ncu_coverage);
  root["mfu_workload"] = detail::report_json(workload_mfu_record(report));
  root["bare_run"] = json_bare_run(report);
  root["nvtx_ranges"] = json_range_timings(report);
  std::vector<ReportNcuLaunch> launches;
  for (const auto& launch : report.launches) launches.push_back(launch_record(launch));
  root["ncu_launches"] = detail::report_json(launches);
  detail::InstanceCap cap;
  if (report.top_kernel_selection) cap.loop_stage = report.top_kernel_selection->stage;
  root["timeline"] = report.timeline ? boost::json::value(detail::timeline_json_object(*report.timeline, cap))
                                     : boost::json::value(nullptr);
  root["node_capture"] =
      report.node_capture ? boost::json::value(detail::report_json(*report.node_capture)) : boost::json::value(nullptr);
  root["warnings"] = json_array(report.warnings);
  root["skipped"] = json_array(report.skipped);
  boost::json::object sources;
  for (const auto& [key, value] : report.sources) sources[key] = value;
  root["sources"] = std::move(sources);
  return detail::pretty_json(root);
}

Result<void> write_analysis(const AnalysisReport& report, const std::filesystem::path& analysis_directory) {
  std::error_code ec;
  std::filesystem::create_directories(analysis_directory, ec);
  if (ec) {
    return make_error(ErrorCode::io_error,
                      "cannot create analysis directory " + analysis_directory.string() + ": " + ec.message(),
                      "check the permissions of the run directory", analysis_directory.string());
  }
  for (const auto& [name, content] : {std::pair{RunLayout::analysis_kernels(), detail::report_csv(report.kernels)},
                                      std::pair{RunLayout::analysis_stages(), detail::report_csv(report.stages)},
                                      std::pair{RunLayout::analysis_report(), analysis_report_json(report)}}) {
    auto written = detail::write_file_atomically(analysis_directory / name.filename(), content);
    if (!written) return written;
  }
  if (report.timeline)
    return detail::write_file_atomically(analysis_directory / RunLayout::analysis_instances().filename(),
                                         detail::instances_csv(*report.timeline));
  return {};
}

}  // namespace llmprof
