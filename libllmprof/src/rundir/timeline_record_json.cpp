// The timeline's field tables (see timeline_record_json.hpp). Per-instance rows are kept (the report draws
// the per-step chart and histogram from them), capped per InstanceCap; times are integer ns.
#include "rundir/timeline_record_json.hpp"

#include <algorithm>

#include "core/record_fields.hpp"
#include "rundir/timeline_record_tables.hpp"

namespace llmprof::detail {

// Field rows stay literal, one per figure, and each record has its own table: a table is read, not computed, so
// these tables look like those of the other record files by design (the duplicates tool pairs them by shape).
template <>
struct RecordTable<IdleAttribution> {
  static constexpr RecordField<IdleAttribution> fields[] = {
      field<&IdleAttribution::host_launching_ns>("host_launching_ns"),
      field<&IdleAttribution::host_in_sync_ns>("host_in_sync_ns"),
      field<&IdleAttribution::nothing_launched_ns>("nothing_launched_ns"),
  };
};

template <>
struct RecordTable<CaptureLoss> {
  static constexpr RecordField<CaptureLoss> fields[] = {
      field<&CaptureLoss::launches>("launches"),
      field<&CaptureLoss::launches_without_record>("launches_without_record"),
      field<&CaptureLoss::graph_launches>("graph_launches"),
      field<&CaptureLoss::graph_launches_without_record>("graph_launches_without_record"),
  };
};

// An instance's capture loss is not written (it would double report.json on long runs): `partial` says
// whether it had any, and a reader needs no more.
template <>
struct RecordTable<TimelineInstance> {
  static constexpr RecordField<TimelineInstance> fields[] = {
      field<&TimelineInstance::cpu_start_ns>("cpu_start_ns"),
      field<&TimelineInstance::cpu_end_ns>("cpu_end_ns"),
      field<&TimelineInstance::gpu_start_ns>("gpu_start_ns"),
      field<&TimelineInstance::gpu_end_ns>("gpu_end_ns"),
      field<&TimelineInstance::gpu_busy_ns>("gpu_busy_ns"),
      field<&TimelineInstance::gpu_activities>("gpu_activities"),
      field<&TimelineInstance::graph_executions>("graph_executions"),
      field<&TimelineInstance::launch_api_ns>("launch_api_ns"),
      field<&TimelineInstance::sync_api_ns>("sync_api_ns"),
      computed_field<&TimelineInstance::partial>("partial"),
  };
};

template <>
struct RecordTable<Headroom> {
  static constexpr RecordField<Headroom> fields[] = {
      field<&Headroom::current_step_ns>("current_step_ns"),
      field<&Headroom::predicted_step_ns>("predicted_step_ns"),
      field<&Headroom::speedup>("speedup"),
      field<&Headroom::predicted_steps_per_s>("predicted_steps_per_s"),
  };
};

template <>
struct RecordTable<GraphReplayGaps> {
  static constexpr RecordField<GraphReplayGaps> fields[] = {
      field<&GraphReplayGaps::replays>("replays"),
      field<&GraphReplayGaps::gap>("gap"),
      field<&GraphReplayGaps::gap_before_launch_ns>("gap_before_launch_ns"),
      field<&GraphReplayGaps::host_between_launches>("host_between_launches"),
      field<&GraphReplayGaps::replay_gpu>("replay_gpu"),
  };
};

// `instances` and `instances_omitted` follow the table: the writer caps the first (InstanceCap).
template <>
struct RecordTable<TimelineStage> {
  using Stage = TimelineStage;
  static constexpr RecordField<Stage> fields[] = {
      name_field<&Stage::name>("name"),
      field<&Stage::domain>("domain"),
      field<&Stage::parent>("parent"),
      field<&Stage::level>("level"),
      field<&Stage::library>("library"),
      field<&Stage::cpu_duration>("cpu_duration"),
      field<&Stage::steady_cpu_duration>("steady_cpu_duration"),
      field<&Stage::steady_gpu_busy>("steady_gpu_busy"),
      field<&Stage::warmup_instances>("warmup_instances"),
      field<&Stage::steady_state_note>("steady_state"),
      field<&Stage::span_ns>("span_ns"),
      field<&Stage::active_ns>("active_ns"),
      field<&Stage::gpu_busy_ns>("gpu_busy_ns"),
      field<&Stage::gpu_span_ns>("gpu_span_ns"),
      field<&Stage::gpu_time_ns>("gpu_time_ns"),
      field<&Stage::graph_time_ns>("graph_time_ns"),
      field<&Stage::collective_time_ns>("collective_time_ns"),
      field<&Stage::graph_executions>("graph_executions"),
      field<&Stage::launch_api_ns>("launch_api_ns"),
      field<&Stage::sync_api_ns>("sync_api_ns"),
      field<&Stage::gpu_busy_fraction>("gpu_busy_fraction"),
      field<&Stage::idle>("idle"),
      field<&Stage::loss>("capture_loss"),
      computed_field<&Stage::partial>("partial"),
      field<&Stage::headroom>("headroom"),
      field<&Stage::graph_replays>("graph_replays"),
      field<&Stage::kernels>("kernels"),
      field<&Stage::verdict>("verdict"),
  };
};

template <>
struct RecordTable<MeasurementValidity> {
  static constexpr RecordField<MeasurementValidity> fields[] = {
      field<&MeasurementValidity::capture_losses>("capture_losses"),
      field<&MeasurementValidity::graph_hidden>("graph_hidden"),
      field<&MeasurementValidity::empty_capture>("empty_capture"),
      field<&MeasurementValidity::partial_capture>("partial_capture"),
      field<&MeasurementValidity::notes>("notes"),
  };
};

// `stages` follow the table, each with its capped instances.
template <>
struct RecordTable<TimelineReport> {
  static constexpr RecordField<TimelineReport> fields[] = {
      field<&TimelineReport::source>("source"),
      field<&TimelineReport::nsys_version>("nsys_version"),
      field<&TimelineReport::schema_version>("schema_version"),
      field<&TimelineReport::graph_trace>("graph_trace"),
      field<&TimelineReport::cuda_untraced>("cuda_untraced"),
      field<&TimelineReport::gpu_activities>("gpu_activities"),
      field<&TimelineReport::gpu_time_ns>("gpu_time_ns"),
      field<&TimelineReport::unattributed_gpu_activities>("unattributed_gpu_activities"),
      field<&TimelineReport::unclosed_ranges>("unclosed_ranges"),
      field<&TimelineReport::unclosed_range_names>("unclosed_range_names"),
      field<&TimelineReport::validity>("validity"),
      field<&TimelineReport::warnings>("warnings"),
  };
};

namespace {

std::size_t instances_kept(const TimelineStage& stage, const std::optional<InstanceCap>& cap) {
  if (!cap) return stage.instances.size();
  const bool charted = !cap->loop_stage.empty() && (stage.name == cap->loop_stage || stage.parent == cap->loop_stage);
  return charted ? stage.instances.size() : std::min(stage.instances.size(), cap->kept);
}

boost::json::object stage_json(const TimelineStage& stage, const std::optional<InstanceCap>& cap) {
  boost::json::object object = write_record(stage);
  boost::json::array instances;
  const std::size_t kept = instances_kept(stage, cap);
  for (std::size_t i = 0; i < kept; ++i) instances.emplace_back(write_record(stage.instances[i]));
  object["instances"] = std::move(instances);
  const auto omitted = static_cast<std::int64_t>(stage.instances.size() - kept) + stage.instances_omitted;
  if (omitted > 0) object["instances_omitted"] = omitted;
  return object;
}

}  // namespace

boost::json::object timeline_json_object(const TimelineReport& report, const std::optional<InstanceCap>& cap) {
  boost::json::object object = write_record(report);
  boost::json::array stages;
  for (const auto& stage : report.stages) stages.emplace_back(stage_json(stage, cap));
  object["stages"] = std::move(stages);
  return object;
}

std::string instances_csv(const TimelineReport& timeline) {
  std::string text = "stage,instance," + csv_header<TimelineInstance>() + "\n";
  for (const auto& stage : timeline.stages) {
    for (std::size_t i = 0; i < stage.instances.size(); ++i)
      text += csv_cell(stage.name) + "," + std::to_string(i + 1) + "," + csv_line(stage.instances[i]) + "\n";
  }
  return text;
}

TimelineReport read_timeline_record(const boost::json::object& object, const std::string& where) {
  TimelineReport report;
  read_record(object, where, report);
  std::size_t index = 0;
  for (const auto& element : json_objects(object, "stages", where + "stages")) {
    const std::string stage_where = where + "stages[" + std::to_string(index++) + "].";
    auto& stage = report.stages.emplace_back();
    read_record(element, stage_where, stage);
    read_field(element, "instances", stage_where + "instances", stage.instances);
    read_field(element, "instances_omitted", stage_where + "instances_omitted", stage.instances_omitted);
  }
  return report;
}

}  // namespace llmprof::detail
