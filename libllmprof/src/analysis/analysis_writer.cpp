// Writes the analysis: report.json (schema llmprof.report/2), and kernels.csv and stages.csv from the same records
// and field tables (rundir/report_model_json.cpp), so the files cannot list different figures.
#include <cmath>
#include <cstdio>
#include <sstream>

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

namespace llmprof {
namespace {

using detail::format_data_number;
using detail::json_array;
using detail::json_or_null;

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

boost::json::object json_launch(const LaunchRoofline& launch) {
  boost::json::object object;
  object["id"] = launch.launch_id;
  object["kernel_name"] = launch.kernel_name;
  boost::json::array stack;
  // Spelled like stages[] and kernels[].stages ("decode", "llm:decode"), so a stack entry can be
  // looked up among the stages as written.
  for (const auto& range : launch.nvtx_stack) stack.emplace_back(detail::qualified_range(range));
  object["nvtx_stack"] = std::move(stack);
  object["duration_ns"] = json_or_null(launch.duration_ns);
  object["flop"] = json_or_null(launch.flop);
  boost::json::object by_precision;
  for (const auto& [key, value] : launch.flop_by_precision) by_precision[key] = value;
  object["flop_by_precision"] = std::move(by_precision);
  object["dram_bytes"] = json_or_null(launch.dram_bytes);
  object["achieved_flop_per_s"] = json_or_null(launch.achieved_flop_per_s);
  object["dram_bytes_per_s"] = json_or_null(launch.dram_bytes_per_s);
  object["arithmetic_intensity"] = json_or_null(launch.arithmetic_intensity);
  object["pct_peak_compute"] = json_or_null(launch.pct_peak_compute);
  object["pct_peak_dram"] = json_or_null(launch.pct_peak_dram);
  object["bound"] = launch.bound ? boost::json::value(to_string(*launch.bound)) : boost::json::value(nullptr);
  object["dominant_precision"] = launch.dominant_precision;
  object["missing"] = json_array(launch.missing);
  return object;
}

boost::json::value json_selection(const std::optional<KernelSelection>& selection) {
  if (!selection) return nullptr;
  return detail::kernel_selection_json(*selection);
}

boost::json::value json_workload_mfu(const AnalysisReport& report) {
  if (!report.workload) return nullptr;
  boost::json::object object;
  object["dtype"] = report.workload->dtype;
  const auto peak = report.device.peak_flop_per_s.find(report.workload->dtype);
  object["peak_flop_per_s"] =
      peak == report.device.peak_flop_per_s.end() ? boost::json::value(nullptr) : boost::json::value(peak->second);
  for (const auto& stage : report.stages) {
    if (!stage.model_flop_per_s) continue;
    object[stage.name] = boost::json::object{{"model_flop_per_s", *stage.model_flop_per_s},
                                             {"mfu", json_or_null(stage.mfu_workload)},
                                             {"mfu_ncu", json_or_null(stage.mfu)}};
  }
  return object;
}

// "node_capture": null, or where the kernel tables came from and each range's CPU time in both captures.
boost::json::value json_node_capture(const std::optional<NodeTracedCapture>& capture) {
  if (!capture) return nullptr;
  ReportNodeCapture record;
  record.kernel_tables = capture->kernel_tables;
  for (const auto& wall : capture->range_walls)
    record.range_walls.push_back({wall.range, wall.first_capture_ns, wall.node_capture_ns});
  return detail::report_json(record);
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
  if (report.ncu_coverage)
    root["ncu_coverage"] = boost::json::object{{"stage", report.ncu_coverage->stage},
                                               {"measured", report.ncu_coverage->measured},
                                               {"extrapolated", report.ncu_coverage->extrapolated},
                                               {"reached", report.ncu_coverage->measured + report.ncu_coverage->extrapolated}};
  else
    root["ncu_coverage"] = nullptr;
  root["mfu_workload"] = json_workload_mfu(report);
  root["bare_run"] = json_bare_run(report);
  root["nvtx_ranges"] = json_range_timings(report);
  boost::json::array launches;
  for (const auto& launch : report.launches) launches.emplace_back(json_launch(launch));
  root["ncu_launches"] = std::move(launches);
  detail::InstanceCap cap;
  if (report.top_kernel_selection) cap.loop_stage = report.top_kernel_selection->stage;
  root["timeline"] = report.timeline ? boost::json::value(detail::timeline_json_object(*report.timeline, cap))
                                     : boost::json::value(nullptr);
  root["node_capture"] = json_node_capture(report.node_capture);
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
