// The timeline report as JSON: the "timeline" object of analysis/report.json. Per-instance rows are
// kept (the report draws the per-step chart and histogram from them), capped per InstanceCap in report.json;
// times are integer ns.
#include "analysis/timeline_json.hpp"

#include <boost/json.hpp>

#include <algorithm>

#include "core/json_pretty.hpp"
#include "core/json_values.hpp"

namespace llmprof {
namespace {

using detail::json_array;
using detail::json_or_null;
using detail::InstanceCap;

boost::json::object json_summary(const DurationSummary& summary) {
  return {{"count", summary.count},   {"total_ns", summary.total_ns}, {"mean_ns", summary.mean_ns},
          {"p50_ns", summary.p50_ns}, {"p90_ns", summary.p90_ns},     {"p99_ns", summary.p99_ns},
          {"max_ns", summary.max_ns}};
}

boost::json::object json_idle(const IdleAttribution& idle) {
  return {{"host_launching_ns", idle.host_launching_ns},
          {"host_in_sync_ns", idle.host_in_sync_ns},
          {"nothing_launched_ns", idle.nothing_launched_ns}};
}

boost::json::object json_loss(const CaptureLoss& loss) {
  return {{"launches", loss.launches},
          {"launches_without_record", loss.launches_without_record},
          {"graph_launches", loss.graph_launches},
          {"graph_launches_without_record", loss.graph_launches_without_record}};
}

boost::json::object json_instance(const TimelineInstance& instance) {
  return {{"cpu_start_ns", instance.cpu_start_ns},
          {"cpu_end_ns", instance.cpu_end_ns},
          {"gpu_start_ns", json_or_null(instance.gpu_start_ns)},
          {"gpu_end_ns", json_or_null(instance.gpu_end_ns)},
          {"gpu_busy_ns", instance.gpu_busy_ns},
          {"gpu_activities", instance.gpu_activities},
          {"graph_executions", instance.graph_executions},
          {"launch_api_ns", instance.launch_api_ns},
          {"sync_api_ns", instance.sync_api_ns},
          {"partial", instance.partial()}};
}

std::size_t instances_kept(const TimelineStage& stage, const std::optional<InstanceCap>& cap) {
  if (!cap) return stage.instances.size();
  const bool charted = !cap->loop_stage.empty() && (stage.name == cap->loop_stage || stage.parent == cap->loop_stage);
  return charted ? stage.instances.size() : std::min(stage.instances.size(), cap->kept);
}

boost::json::object json_stage(const TimelineStage& stage, const std::optional<InstanceCap>& cap) {
  boost::json::object object;
  object["name"] = stage.name;
  object["domain"] = stage.domain;
  object["parent"] = json_or_null(stage.parent);
  object["level"] = stage.level;
  object["cpu_duration"] = json_summary(stage.cpu_duration);
  object["steady_cpu_duration"] = json_summary(stage.steady_cpu_duration);
  object["steady_gpu_busy"] = json_summary(stage.steady_gpu_busy);
  boost::json::array warmup;
  for (auto index : stage.warmup_instances) warmup.emplace_back(index);
  object["warmup_instances"] = std::move(warmup);
  object["steady_state"] = stage.steady_state_note;
  object["span_ns"] = stage.span_ns;
  object["active_ns"] = stage.active_ns;
  object["gpu_busy_ns"] = stage.gpu_busy_ns;
  object["gpu_span_ns"] = stage.gpu_span_ns;
  object["gpu_time_ns"] = stage.gpu_time_ns;
  object["graph_time_ns"] = stage.graph_time_ns;
  object["collective_time_ns"] = stage.collective_time_ns;
  object["graph_executions"] = stage.graph_executions;
  object["launch_api_ns"] = stage.launch_api_ns;
  object["sync_api_ns"] = stage.sync_api_ns;
  object["gpu_busy_fraction"] = json_or_null(stage.gpu_busy_fraction);
  object["idle"] = json_idle(stage.idle);
  object["capture_loss"] = json_loss(stage.loss);
  object["partial"] = stage.partial();
  if (stage.headroom) {
    object["headroom"] = {{"current_step_ns", stage.headroom->current_step_ns},
                          {"predicted_step_ns", stage.headroom->predicted_step_ns},
                          {"speedup", stage.headroom->speedup},
                          {"predicted_steps_per_s", stage.headroom->predicted_steps_per_s}};
  } else {
    object["headroom"] = nullptr;
  }
  if (stage.graph_replays) {
    object["graph_replays"] = {{"replays", stage.graph_replays->replays},
                               {"gap", json_summary(stage.graph_replays->gap)},
                               {"gap_before_launch_ns", stage.graph_replays->gap_before_launch_ns},
                               {"host_between_launches", json_summary(stage.graph_replays->host_between_launches)},
                               {"replay_gpu", json_summary(stage.graph_replays->replay_gpu)}};
  } else {
    object["graph_replays"] = nullptr;
  }
  boost::json::array kernels;
  for (const auto& kernel : stage.kernels)
    kernels.emplace_back(boost::json::object{{"name", kernel.name},
                                             {"count", kernel.count},
                                             {"total_ns", kernel.total_ns},
                                             {"from_graph", kernel.from_graph}});
  object["kernels"] = std::move(kernels);
  object["verdict"] = stage.verdict;
  boost::json::array instances;
  const std::size_t kept = instances_kept(stage, cap);
  for (std::size_t i = 0; i < kept; ++i) instances.emplace_back(json_instance(stage.instances[i]));
  object["instances"] = std::move(instances);
  if (kept < stage.instances.size()) {
    object["instances_omitted"] = stage.instances.size() - kept;  // the last ones; all are in instances.csv
  }
  return object;
}

}  // namespace

namespace detail {

boost::json::object timeline_json_object(const TimelineReport& report, const std::optional<InstanceCap>& cap) {
  boost::json::object object;
  object["source"] = report.source;
  object["nsys_version"] = report.nsys_version;
  object["schema_version"] = report.schema_version;
  object["graph_trace"] = report.graph_trace;
  object["gpu_activities"] = report.gpu_activities;
  object["unattributed_gpu_activities"] = report.unattributed_gpu_activities;
  object["unclosed_ranges"] = report.unclosed_ranges;
  boost::json::object validity;
  validity["capture_losses"] = json_array(report.validity.capture_losses);
  validity["graph_hidden"] = json_or_null(report.validity.graph_hidden);
  validity["empty_capture"] = report.validity.empty_capture;
  validity["partial_capture"] = report.validity.partial_capture;
  validity["notes"] = json_array(report.validity.notes);
  object["validity"] = std::move(validity);
  boost::json::array stages;
  for (const auto& stage : report.stages) stages.emplace_back(json_stage(stage, cap));
  object["stages"] = std::move(stages);
  object["warnings"] = json_array(report.warnings);
  return object;
}

}  // namespace detail

std::string timeline_json(const TimelineReport& report) {
  return detail::pretty_json(detail::timeline_json_object(report));
}

}  // namespace llmprof
