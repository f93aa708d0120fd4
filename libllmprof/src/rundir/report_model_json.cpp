// One field table per report.json record: the writer walks it to build the JSON object, the reader
// walks the same table to fill the record (see report_model_json.hpp).
#include "rundir/report_model_json.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <span>
#include <string_view>
#include <variant>

#include "core/json_fields.hpp"
#include "core/json_values.hpp"
#include "core/text.hpp"

namespace llmprof::detail {
namespace json = boost::json;
namespace {

// A record's member, by the JSON shape it has: the writer and the reader each handle every kind once.
template <class Record>
using RecordMember =
    std::variant<std::string Record::*, std::optional<std::string> Record::*, std::vector<std::string> Record::*,
                 int Record::*, std::int64_t Record::*, std::optional<std::int64_t> Record::*, double Record::*,
                 std::optional<double> Record::*>;

template <class Record>
struct RecordField {
  std::string_view key;
  RecordMember<Record> member;
  bool required = false;  // a name: absent or empty is an error
};

json::value field_value(const std::string& value) { return json::value(value); }
json::value field_value(const std::optional<std::string>& value) { return json_or_null(value); }
json::value field_value(const std::vector<std::string>& values) { return json_array(values); }
json::value field_value(int value) { return json::value(value); }
json::value field_value(std::int64_t value) { return json::value(value); }
json::value field_value(const std::optional<std::int64_t>& value) { return json_or_null(value); }
json::value field_value(double value) { return json::value(value); }
json::value field_value(const std::optional<double>& value) { return json_or_null(value); }

void read_field(const json::object& object, std::string_view key, const std::string& where, std::string& value) {
  if (auto text = json_string(object, key, where)) value = std::move(*text);
}
void read_field(const json::object& object, std::string_view key, const std::string& where,
                std::optional<std::string>& value) {
  value = json_string(object, key, where);
}
void read_field(const json::object& object, std::string_view key, const std::string& where,
                std::vector<std::string>& values) {
  values = json_strings(object, key, where);
}
void read_field(const json::object& object, std::string_view key, const std::string& where, int& value) {
  if (auto number = json_integer(object, key, where)) value = static_cast<int>(*number);
}
void read_field(const json::object& object, std::string_view key, const std::string& where, std::int64_t& value) {
  if (auto number = json_integer(object, key, where)) value = *number;
}
void read_field(const json::object& object, std::string_view key, const std::string& where,
                std::optional<std::int64_t>& value) {
  value = json_integer(object, key, where);
}
void read_field(const json::object& object, std::string_view key, const std::string& where, double& value) {
  if (auto number = json_number(object, key, where)) value = *number;
}
void read_field(const json::object& object, std::string_view key, const std::string& where,
                std::optional<double>& value) {
  value = json_number(object, key, where);
}

template <class Record>
json::object write_fields(const Record& record, std::span<const RecordField<Record>> table) {
  json::object object;
  for (const auto& field : table) {
    std::visit([&](auto member) { object[field.key] = field_value(record.*member); }, field.member);
  }
  return object;
}

template <class Record>
void read_fields(const json::object& object, const std::string& where, std::span<const RecordField<Record>> table,
                 Record& record) {
  for (const auto& field : table) {
    const std::string name = where + std::string(field.key);
    std::visit([&](auto member) { read_field(object, field.key, name, record.*member); }, field.member);
    if (field.required) {
      const auto* text = std::get_if<std::string Record::*>(&field.member);
      if (text != nullptr && (record.**text).empty()) throw JsonFieldError{name};
    }
  }
}

std::string csv_text(const std::string& value) { return csv_cell(value); }
std::string csv_text(const std::optional<std::string>& value) { return value ? csv_cell(*value) : std::string(); }
std::string csv_text(const std::vector<std::string>& values) { return csv_cell(join(values, ";")); }
std::string csv_text(int value) { return std::to_string(value); }
std::string csv_text(std::int64_t value) { return std::to_string(value); }
std::string csv_text(const std::optional<std::int64_t>& value) { return value ? std::to_string(*value) : std::string(); }
std::string csv_text(double value) { return format_data_number(value); }
std::string csv_text(const std::optional<double>& value) { return value ? format_data_number(*value) : std::string(); }

template <class Record>
std::string csv_rows(const std::vector<Record>& records, std::span<const RecordField<Record>> table) {
  std::string text;
  for (const auto& field : table) text += (text.empty() ? "" : ",") + std::string(field.key);
  text += "\n";
  for (const auto& record : records) {
    std::string row;
    bool first = true;
    for (const auto& field : table) {
      if (!first) row += ",";
      first = false;
      std::visit([&](auto member) { row += csv_text(record.*member); }, field.member);
    }
    text += row + "\n";
  }
  return text;
}

// The tables: report.json's fields, in the order the file lists them.
using Stage = ReportStage;
constexpr RecordField<Stage> kStageFields[] = {
    {"name", &Stage::name, true},
    {"domain", &Stage::domain},
    {"parent", &Stage::parent},
    {"level", &Stage::level},
    {"wall_ns", &Stage::wall_ns},
    {"gpu_projection_ns", &Stage::gpu_projection_ns},
    {"kernel_time_ns", &Stage::kernel_time_ns},
    {"kernel_instances", &Stage::kernel_instances},
    {"kernel_time_source", &Stage::kernel_time_source},
    {"gpu_busy_fraction", &Stage::gpu_busy_fraction},
    {"flop", &Stage::flop},
    {"flop_coverage", &Stage::flop_coverage},
    {"achieved_flop_per_s", &Stage::achieved_flop_per_s},
    {"flop_per_s_while_busy", &Stage::flop_per_s_while_busy},
    {"dominant_precision", &Stage::dominant_precision},
    {"mfu", &Stage::mfu},
    {"model_flop_per_s", &Stage::model_flop_per_s},
    {"mfu_workload", &Stage::mfu_workload},
    {"mfu_gap_reason", &Stage::mfu_gap_reason},
    {"rate_time_ns", &Stage::rate_time_ns},
    {"rate_time_source", &Stage::rate_time_source},
    {"rate_time_note", &Stage::rate_time_note},
    {"dram_bytes", &Stage::dram_bytes},
    {"dram_coverage", &Stage::dram_coverage},
    {"dram_coverage_extrapolated", &Stage::dram_coverage_extrapolated},
    {"steps", &Stage::steps},
    {"steps_source", &Stage::steps_source},
    {"dram_bytes_per_step", &Stage::dram_bytes_per_step},
    {"dram_bytes_per_s", &Stage::dram_bytes_per_s},
    {"dram_bytes_per_s_while_busy", &Stage::dram_bytes_per_s_while_busy},
    {"mbu", &Stage::mbu},
    {"model_bytes_per_step", &Stage::model_bytes_per_step},
    {"mbu_workload", &Stage::mbu_workload},
    {"bytes_comparison", &Stage::bytes_comparison},
    {"kernel_bound", &Stage::kernel_bound},
    {"step_ns", &Stage::step_ns},
    {"limit_step_ns", &Stage::limit_step_ns},
    {"share_of_limit", &Stage::share_of_limit},
    {"kernel_launches_per_s", &Stage::kernel_launches_per_s},
    {"headroom", &Stage::headroom},
    {"verdict", &Stage::verdict},
};  // then "top_kernels"

using Kernel = ReportKernel;
constexpr RecordField<Kernel> kKernelFields[] = {
    {"name", &Kernel::name, true},
    {"stages", &Kernel::stages},
    {"instances", &Kernel::instances},
    {"total_time_ns", &Kernel::total_time_ns},
    {"avg_time_ns", &Kernel::avg_time_ns},
    {"share_of_total", &Kernel::share_of_total},
    {"time_source", &Kernel::time_source},
    {"profiled_launches", &Kernel::profiled_launches},
    {"flop_per_launch", &Kernel::flop_per_launch},
    {"dram_bytes_per_launch", &Kernel::dram_bytes_per_launch},
    {"arithmetic_intensity", &Kernel::arithmetic_intensity},
    {"achieved_flop_per_s", &Kernel::achieved_flop_per_s},
    {"pct_peak_compute", &Kernel::pct_peak_compute},
    {"pct_peak_dram", &Kernel::pct_peak_dram},
    {"bound", &Kernel::bound},
    {"dominant_precision", &Kernel::precision},
    {"ncu_name", &Kernel::ncu_name},
    {"ncu_name_join", &Kernel::ncu_name_join},
};

using BareRun = ReportBareRun;
constexpr RecordField<BareRun> kBareRunFields[] = {
    {"device", &BareRun::device},
    {"device_name", &BareRun::device_name},
    {"dtype", &BareRun::dtype},
    {"batch", &BareRun::batch},
    {"prompt_tokens", &BareRun::prompt_tokens},
    {"new_tokens", &BareRun::new_tokens},
    {"parameters", &BareRun::parameters},
    {"prefill_s", &BareRun::prefill_s},
    {"decode_s", &BareRun::decode_s},
    {"tokens_per_s", &BareRun::tokens_per_s},
    {"time_per_output_token_s", &BareRun::time_per_output_token_s},
    {"flop_per_token", &BareRun::flop_per_token},
    {"flop_per_prefill", &BareRun::flop_per_prefill},
};

using Range = ReportRangeTiming;
constexpr RecordField<Range> kRangeFields[] = {
    {"name", &Range::name, true},
    {"domain", &Range::domain},
    {"style", &Range::style},
    {"instances", &Range::instances},
    {"total_ns", &Range::total_ns},
    {"mean_ns", &Range::mean_ns},
    {"p50_ns", &Range::p50_ns},
    {"p99_ns", &Range::p99_ns},
    {"min_ns", &Range::min_ns},
    {"max_ns", &Range::max_ns},
    {"stddev_ns", &Range::stddev_ns},
    {"source", &Range::source},
};

using RangeWall = ReportNodeCapture::RangeWall;
constexpr RecordField<RangeWall> kRangeWallFields[] = {
    {"range", &RangeWall::range},
    {"first_capture_ns", &RangeWall::first_capture_ns},
    {"node_capture_ns", &RangeWall::node_capture_ns},
};

using StageKernel = ReportStageKernel;
constexpr RecordField<StageKernel> kStageKernelFields[] = {
    {"name", &StageKernel::name},
    {"time_ns", &StageKernel::time_ns},
    {"share", &StageKernel::share},
};

// An array of records under `key`, each read by its table ("stages[0].top_kernels[1].name").
template <class Record>
std::vector<Record> read_records(const json::object& object, std::string_view key, const std::string& where,
                                 std::span<const RecordField<Record>> table) {
  std::vector<Record> records;
  const std::string field = where + std::string(key);
  for (const auto& element : json_objects(object, key, field)) {
    Record record;
    read_fields(element, field + "[" + std::to_string(records.size()) + "].", table, record);
    records.push_back(std::move(record));
  }
  return records;
}

template <class Record>
json::array write_records(const std::vector<Record>& records, std::span<const RecordField<Record>> table) {
  json::array array;
  for (const auto& record : records) array.emplace_back(write_fields(record, table));
  return array;
}

json::object peaks_json(const ReportDevicePeaks& peaks) {
  json::object object;
  object["name"] = peaks.name;
  json::object flop;
  for (const auto& [key, value] : peaks.peak_flop_per_s) flop[key] = value;
  object["peak_flop_per_s"] = std::move(flop);
  object["peak_dram_bytes_per_s"] = json_or_null(peaks.peak_dram_bytes_per_s);
  json::object sources;
  for (const auto& [key, value] : peaks.sources) sources[key] = value;
  object["sources"] = std::move(sources);
  return object;
}

void read_peaks(const json::object& object, const std::string& where, ReportDevicePeaks& peaks) {
  read_field(object, "name", where + "name", peaks.name);
  if (const auto* found = object.if_contains("peak_flop_per_s"); found != nullptr && !found->is_null()) {
    if (!found->is_object()) throw JsonFieldError{where + "peak_flop_per_s"};
    for (const auto& entry : found->get_object()) {
      if (entry.value().is_null()) continue;
      if (!entry.value().is_number()) throw JsonFieldError{where + "peak_flop_per_s." + std::string(entry.key())};
      peaks.peak_flop_per_s.emplace_back(std::string(entry.key()), entry.value().to_number<double>());
    }
  }
  read_field(object, "peak_dram_bytes_per_s", where + "peak_dram_bytes_per_s", peaks.peak_dram_bytes_per_s);
  for (auto& [key, value] : json_string_map(object, "sources", where + "sources")) peaks.sources.emplace_back(key, value);
}

}  // namespace

json::object report_json(const ReportDevice& device) {
  json::object object = peaks_json(device);
  if (device.datasheet) object["datasheet"] = peaks_json(*device.datasheet);
  return object;
}

json::object report_json(const ReportStage& stage) {
  json::object object = write_fields<Stage>(stage, kStageFields);
  object["top_kernels"] = write_records<StageKernel>(stage.top_kernels, kStageKernelFields);
  return object;
}

json::object report_json(const ReportKernel& kernel) { return write_fields<Kernel>(kernel, kKernelFields); }
json::object report_json(const ReportBareRun& run) { return write_fields<BareRun>(run, kBareRunFields); }
json::object report_json(const ReportRangeTiming& range) { return write_fields<Range>(range, kRangeFields); }

json::object report_json(const ReportNodeCapture& capture) {
  json::object object;
  object["kernel_tables"] = capture.kernel_tables;
  object["range_walls"] = write_records<RangeWall>(capture.range_walls, kRangeWallFields);
  return object;
}

void read_report_json(const json::object& object, const std::string& where, ReportDevice& device) {
  read_peaks(object, where, device);
  if (const auto* datasheet = object.if_contains("datasheet"); datasheet != nullptr && !datasheet->is_null()) {
    if (!datasheet->is_object()) throw JsonFieldError{where + "datasheet"};
    device.datasheet.emplace();
    read_peaks(datasheet->get_object(), where + "datasheet.", *device.datasheet);
  }
}

void read_report_json(const json::object& object, const std::string& where, ReportStage& stage) {
  read_fields<Stage>(object, where, kStageFields, stage);
  stage.top_kernels = read_records<StageKernel>(object, "top_kernels", where, kStageKernelFields);
}

void read_report_json(const json::object& object, const std::string& where, ReportKernel& kernel) {
  read_fields<Kernel>(object, where, kKernelFields, kernel);
}

void read_report_json(const json::object& object, const std::string& where, ReportBareRun& run) {
  read_fields<BareRun>(object, where, kBareRunFields, run);
}

void read_report_json(const json::object& object, const std::string& where, ReportRangeTiming& range) {
  read_fields<Range>(object, where, kRangeFields, range);
}

void read_report_json(const json::object& object, const std::string& where, ReportNodeCapture& capture) {
  read_field(object, "kernel_tables", where + "kernel_tables", capture.kernel_tables);
  capture.range_walls = read_records<RangeWall>(object, "range_walls", where, kRangeWallFields);
}

std::string report_csv(const std::vector<ReportStage>& stages) { return csv_rows<Stage>(stages, kStageFields); }
std::string report_csv(const std::vector<ReportKernel>& kernels) { return csv_rows<Kernel>(kernels, kKernelFields); }

}  // namespace llmprof::detail
