// run.json ("llmprof.run/1") and inputs.json <-> JSON text, with Boost.JSON.
#include <algorithm>
#include <boost/json.hpp>
#include <limits>

#include "core/json_fields.hpp"

#include "core/json_pretty.hpp"
#include "core/json_values.hpp"
#include "core/utf8.hpp"
#include "llmprof/choice.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/tool_cost.hpp"
#include "rundir/run_records.hpp"

namespace llmprof {
namespace json = boost::json;

// StageStatus's one spelling table (choice.hpp): to_string writes with it, parse_choice reads with it.
std::span<const std::string_view> choice_names(StageStatus) noexcept {
  static constexpr std::string_view names[] = {"pending", "running", "ok", "skipped", "failed", "interrupted"};
  return names;
}

// The table holds string literals, so each entry's data() is NUL-terminated.
const char* to_string(StageStatus status) noexcept { return choice_name(status).data(); }

// RunStatus's one spelling table (choice.hpp): to_string writes with it, parse_choice reads with it.
std::span<const std::string_view> choice_names(RunStatus) noexcept {
  // Runs recorded before hardware_limited, environment and timeout existed said incomplete for those: they
  // still read, as what they said.
  static constexpr std::string_view names[] = {"running",     "ok",      "hardware_limited", "incomplete",
                                               "failed",      "environment", "timeout",       "interrupted",
                                               "bad_input"};
  return names;
}

// The table holds string literals, so each entry's data() is NUL-terminated.
const char* to_string(RunStatus status) noexcept { return choice_name(status).data(); }

namespace {

constexpr const char* kRunSchema = "llmprof.run/1";
constexpr const char* kInputsSchema = "llmprof.inputs/1";

// Reproducing the command needs its exact bytes, but JSON strings are UTF-8 (pretty_json repairs
// them): a field with bytes that are not UTF-8 also gets "<field>_base64" with the original bytes,
// and the reader prefers that.
bool any_invalid_utf8(const std::vector<std::string>& values) {
  return std::any_of(values.begin(), values.end(),
                     [](const std::string& value) { return !detail::is_valid_utf8(value); });
}

json::object workload_to_object(const WorkloadRecord& workload) {
  json::object env;
  json::object env_base64;
  for (const auto& [name, value] : workload.environment) {
    env[name] = value;
    if (!detail::is_valid_utf8(value)) env_base64[name] = detail::encode_base64(value);
  }
  const std::string cwd = workload.working_directory.string();
  json::object object = {{"argv", detail::json_array(workload.argv)}, {"cwd", cwd}, {"env", std::move(env)}};
  if (any_invalid_utf8(workload.argv)) {
    json::array encoded;
    for (const auto& argument : workload.argv) encoded.emplace_back(detail::encode_base64(argument));
    object["argv_base64"] = std::move(encoded);
  }
  if (!detail::is_valid_utf8(cwd)) object["cwd_base64"] = detail::encode_base64(cwd);
  if (!env_base64.empty()) object["env_base64"] = std::move(env_base64);
  if (workload.files) {
    json::array files;
    for (const auto& file : *workload.files)
      files.emplace_back(json::object{{"path", file.path}, {"size", file.size}, {"modified_ns", file.modified_ns}});
    object["files"] = std::move(files);
  }
  return object;
}

json::object resumption_to_object(const ResumptionRecord& resumption) {
  json::array previous;
  for (const auto& stage : resumption.previous)
    previous.emplace_back(
        json::object{{"name", stage.name}, {"status", to_string(stage.status)}, {"reason", stage.reason}});
  return {{"resumed_utc", resumption.resumed_utc},
          {"from_stage", resumption.from_stage},
          {"attempts_directory", resumption.attempts_directory},
          {"previous", std::move(previous)}};
}

json::object rank_to_object(const RankRecord& rank) {
  return {{"rank", rank.rank},
          {"local_rank", rank.local_rank},
          {"host", rank.host},
          {"role", rank.role},
          {"status", to_string(rank.status)},
          {"reason", rank.reason},
          {"exit_code", rank.exit_code ? json::value(*rank.exit_code) : json::value(nullptr)},
          {"duration_s", rank.duration_s},
          {"directory", rank.directory}};
}

json::object stage_to_object(const StageRecord& stage) {
  json::object object = {{"name", stage.name},
                         {"status", to_string(stage.status)},
                         {"reason", stage.reason},
                         {"started_utc", stage.started_utc},
                         {"duration_s", stage.duration_s},
                         {"exit_code", stage.exit_code ? json::value(*stage.exit_code) : json::value(nullptr)},
                         {"command", detail::json_or_null(stage.command)},
                         {"cmd_file", detail::json_or_null(stage.cmd_file)},
                         {"log_file", detail::json_or_null(stage.log_file)},
                         {"artifacts", detail::json_array(stage.artifacts)},
                         {"warnings", detail::json_array(stage.warnings)}};
  if (!stage.workload_endings.empty()) object["workload_endings"] = detail::json_array(stage.workload_endings);
  if (stage.ncu_set) object["ncu_set"] = *stage.ncu_set;
  if (stage.command && !detail::is_valid_utf8(*stage.command))
    object["command_base64"] = detail::encode_base64(*stage.command);
  if (!stage.ranks.empty()) {
    json::array ranks;
    for (const auto& rank : stage.ranks) ranks.emplace_back(rank_to_object(rank));
    object["ranks"] = std::move(ranks);
  }
  return object;
}

// Reading: the json_fields readers throw JsonFieldError on a wrong shape; manifest_from_json turns
// that into a parse_error naming the field.
using detail::json_integer;
using detail::json_string;
using detail::JsonFieldError;
using detail::required_field;

json::object capture_to_object(const CaptureRecord& capture) {
  json::array windows;
  for (const auto& window : capture.windows) windows.emplace_back(json::object{{"report", window.report}});
  return {{"gate", to_string(capture.gate)},
          {"range", capture.range},
          {"gate_opened", capture.gate_opened},
          {"ungated_rerun", capture.ungated_rerun},
          {"windows", std::move(windows)},
          {"graph_trace", capture.graph_trace},
          {"node_capture_directory",
           capture.node_capture_directory ? json::value(*capture.node_capture_directory) : json::value(nullptr)},
          {"discovered_stage",
           capture.discovered_stage ? json::value(*capture.discovered_stage) : json::value(nullptr)},
          {"stage_choice", capture.stage_choice},
          {"whole_window_selection", capture.whole_window_selection},
          {"scope", capture.scope},
          {"learned_nsys_arguments", json::array(capture.learned_nsys_arguments.begin(),
                                                 capture.learned_nsys_arguments.end())},
          {"restricted_window", capture.restricted_window
                                    ? json::value(json::object{{"start_ns", capture.restricted_window->start_ns},
                                                               {"end_ns", capture.restricted_window->end_ns}})
                                    : json::value(nullptr)}};
}

// A restricted window reads back only whole, with its end not before its start.
std::optional<CaptureSpan> restricted_window_from(const json::object& capture) {
  const json::object* window = detail::json_object_field(capture, "restricted_window", "capture.restricted_window");
  if (window == nullptr) return std::nullopt;
  const auto start = json_integer(*window, "start_ns", "capture.restricted_window.start_ns");
  const auto end = json_integer(*window, "end_ns", "capture.restricted_window.end_ns");
  if (!start || !end || *end < *start) throw JsonFieldError{"capture.restricted_window"};
  return CaptureSpan{*start, *end};
}

bool capture_flag(const json::object& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  if (value == nullptr) return false;
  if (!value->is_bool()) throw JsonFieldError{"capture." + std::string(key)};
  return value->get_bool();
}

CaptureRecord capture_from_object(const json::object& object) {
  CaptureRecord capture;
  const auto gate =
      parse_capture_gate_kind(required_field(json_string(object, "gate", "capture.gate"), "capture.gate"));
  if (!gate) throw JsonFieldError{"capture.gate"};
  capture.gate = *gate;
  capture.range = json_string(object, "range", "capture.range").value_or("");
  capture.gate_opened = capture_flag(object, "gate_opened");
  capture.ungated_rerun = capture_flag(object, "ungated_rerun");
  for (const auto& window : detail::json_objects(object, "windows", "capture.windows"))
    capture.windows.push_back({json_string(window, "report", "capture.windows.report").value_or("")});
  capture.graph_trace = json_string(object, "graph_trace", "capture.graph_trace").value_or("graph");
  capture.node_capture_directory = json_string(object, "node_capture_directory", "capture.node_capture_directory");
  capture.discovered_stage = json_string(object, "discovered_stage", "capture.discovered_stage");
  capture.stage_choice = json_string(object, "stage_choice", "capture.stage_choice").value_or("");
  capture.whole_window_selection = capture_flag(object, "whole_window_selection");
  capture.scope = json_string(object, "scope", "capture.scope").value_or("");
  capture.learned_nsys_arguments =
      detail::json_strings(object, "learned_nsys_arguments", "capture.learned_nsys_arguments");
  capture.restricted_window = restricted_window_from(object);
  return capture;
}

// The original bytes of a field whose readable form was repaired (see workload_to_object).
std::string decoded(const std::string& base64, const char* field) {
  auto bytes = detail::decode_base64(base64);
  if (!bytes) throw JsonFieldError{field};
  return std::move(*bytes);
}

WorkloadRecord workload_from_object(const json::object& object) {
  WorkloadRecord workload;
  workload.argv = detail::json_strings(object, "argv", "workload.argv");
  if (object.contains("argv_base64")) {
    const auto encoded = detail::json_strings(object, "argv_base64", "workload.argv_base64");
    if (encoded.size() != workload.argv.size()) throw JsonFieldError{"workload.argv_base64"};
    for (std::size_t i = 0; i < encoded.size(); ++i) workload.argv[i] = decoded(encoded[i], "workload.argv_base64");
  }
  workload.working_directory = json_string(object, "cwd", "workload.cwd").value_or("");
  if (auto cwd = json_string(object, "cwd_base64", "workload.cwd_base64"))
    workload.working_directory = decoded(*cwd, "workload.cwd_base64");
  workload.environment = detail::json_string_map(object, "env", "workload.env");
  for (const auto& [name, value] : detail::json_string_map(object, "env_base64", "workload.env_base64")) {
    workload.environment[name] = decoded(value, "workload.env_base64");
  }
  if (object.contains("files")) {
    workload.files.emplace();
    for (const auto& file : detail::json_objects(object, "files", "workload.files")) {
      FileFingerprint fingerprint;
      fingerprint.path = required_field(json_string(file, "path", "workload.files.path"), "workload.files.path");
      const auto size = required_field(json_integer(file, "size", "workload.files.size"), "workload.files.size");
      if (size < 0) throw JsonFieldError{"workload.files.size"};
      fingerprint.size = static_cast<std::uint64_t>(size);
      fingerprint.modified_ns =
          required_field(json_integer(file, "modified_ns", "workload.files.modified_ns"), "workload.files.modified_ns");
      workload.files->push_back(std::move(fingerprint));
    }
  }
  return workload;
}

// A rank record of a stage run under a launcher ("stages[].ranks[]").
RankRecord rank_from_object(const json::object& object) {
  auto integer = [&object](const char* key, const char* field) {
    const auto value = json_integer(object, key, field);
    if (!value || *value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max())
      throw JsonFieldError{field};
    return static_cast<int>(*value);
  };
  RankRecord rank;
  rank.rank = integer("rank", "stages.ranks.rank");
  rank.local_rank = integer("local_rank", "stages.ranks.local_rank");
  rank.host = json_string(object, "host", "stages.ranks.host").value_or("");
  rank.role = json_string(object, "role", "stages.ranks.role").value_or("");
  const auto status = parse_choice<StageStatus>(
      required_field(json_string(object, "status", "stages.ranks.status"), "stages.ranks.status"));
  if (!status) throw JsonFieldError{"stages.ranks.status"};
  rank.status = *status;
  rank.reason = json_string(object, "reason", "stages.ranks.reason").value_or("");
  if (object.if_contains("exit_code") && !object.at("exit_code").is_null())
    rank.exit_code = integer("exit_code", "stages.ranks.exit_code");
  rank.duration_s = detail::json_number(object, "duration_s", "stages.ranks.duration_s").value_or(0.0);
  rank.directory = json_string(object, "directory", "stages.ranks.directory").value_or("");
  return rank;
}

StageRecord stage_from_object(const json::object& object) {
  StageRecord stage;
  stage.name = required_field(json_string(object, "name", "stages.name"), "stages.name");
  const auto status =
      parse_choice<StageStatus>(required_field(json_string(object, "status", "stages.status"), "stages.status"));
  if (!status) throw JsonFieldError{"stages.status"};
  stage.status = *status;
  stage.reason = json_string(object, "reason", "stages.reason").value_or("");
  stage.started_utc = json_string(object, "started_utc", "stages.started_utc").value_or("");
  stage.duration_s = detail::json_number(object, "duration_s", "stages.duration_s").value_or(0.0);
  if (const auto code = json_integer(object, "exit_code", "stages.exit_code")) {
    if (*code < std::numeric_limits<int>::min() || *code > std::numeric_limits<int>::max()) {
      throw JsonFieldError{"stages.exit_code"};
    }
    stage.exit_code = static_cast<int>(*code);
  }
  stage.command = json_string(object, "command", "stages.command");
  if (auto bytes = json_string(object, "command_base64", "stages.command_base64"))
    stage.command = decoded(*bytes, "stages.command_base64");
  stage.cmd_file = json_string(object, "cmd_file", "stages.cmd_file");
  stage.log_file = json_string(object, "log_file", "stages.log_file");
  stage.artifacts = detail::json_strings(object, "artifacts", "stages.artifacts");
  stage.warnings = detail::json_strings(object, "warnings", "stages.warnings");
  stage.workload_endings = detail::json_strings(object, "workload_endings", "stages.workload_endings");
  stage.ncu_set = json_string(object, "ncu_set", "stages.ncu_set");
  for (const auto& rank : detail::json_objects(object, "ranks", "stages.ranks"))
    stage.ranks.push_back(rank_from_object(rank));
  return stage;
}

ResumptionRecord resumption_from_object(const json::object& object) {
  ResumptionRecord resumption;
  resumption.resumed_utc = json_string(object, "resumed_utc", "resumptions.resumed_utc").value_or("");
  resumption.from_stage = json_string(object, "from_stage", "resumptions.from_stage").value_or("");
  resumption.attempts_directory =
      json_string(object, "attempts_directory", "resumptions.attempts_directory").value_or("");
  for (const auto& stage : detail::json_objects(object, "previous", "resumptions.previous")) {
    const auto previous_status = parse_choice<StageStatus>(
        required_field(json_string(stage, "status", "resumptions.previous.status"), "resumptions.previous.status"));
    if (!previous_status) throw JsonFieldError{"resumptions.previous.status"};
    resumption.previous.push_back({json_string(stage, "name", "resumptions.previous.name").value_or(""),
                                   *previous_status,
                                   json_string(stage, "reason", "resumptions.previous.reason").value_or("")});
  }
  return resumption;
}

RunManifest manifest_from_object(const json::object& root) {
  if (required_field(json_string(root, "schema", "schema"), "schema") != kRunSchema) throw JsonFieldError{"schema"};
  RunManifest manifest;
  manifest.run_id = required_field(json_string(root, "run_id", "run_id"), "run_id");
  manifest.created_utc = json_string(root, "created_utc", "created_utc").value_or("");
  manifest.updated_utc = json_string(root, "updated_utc", "updated_utc").value_or("");
  const auto status = parse_choice<RunStatus>(required_field(json_string(root, "status", "status"), "status"));
  if (!status) throw JsonFieldError{"status"};
  manifest.status = *status;
  if (const auto* workload = root.if_contains("workload"); workload != nullptr && !workload->is_null()) {
    if (!workload->is_object()) throw JsonFieldError{"workload"};
    manifest.workload = workload_from_object(workload->get_object());
  }
  if (!root.contains("stages")) throw JsonFieldError{"stages"};
  for (const auto& stage : detail::json_objects(root, "stages", "stages")) {
    manifest.stages.push_back(stage_from_object(stage));
  }
  if (const auto bytes = json_integer(root, "total_bytes", "total_bytes")) {
    if (*bytes < 0) throw JsonFieldError{"total_bytes"};
    manifest.total_bytes = static_cast<std::uint64_t>(*bytes);
  }
  manifest.files = detail::json_strings(root, "files", "files");
  for (const auto& object : detail::json_objects(root, "resumptions", "resumptions"))
    manifest.resumptions.push_back(resumption_from_object(object));
  if (const auto* capture = root.if_contains("capture"); capture != nullptr && !capture->is_null()) {
    if (!capture->is_object()) throw JsonFieldError{"capture"};
    manifest.capture = capture_from_object(capture->get_object());
  }
  return manifest;
}

}  // namespace

namespace {

json::object tool_cost_to_object(const ToolCost& cost) {
  json::object object{{"summary", describe_tool_cost(cost)},
                      {"bare_s", cost.bare_s},
                      {"run_s", cost.run_s},
                      {"multiple", cost.multiple()}};
  if (cost.nsys_s) object["nsys_s"] = *cost.nsys_s;
  if (auto multiple = cost.nsys_multiple()) object["nsys_multiple"] = *multiple;
  if (cost.ncu_s) object["ncu_s"] = *cost.ncu_s;
  if (auto multiple = cost.ncu_multiple()) object["ncu_multiple"] = *multiple;
  return object;
}

}  // namespace

std::string manifest_to_json(const RunManifest& manifest) {
  json::array stages;
  for (const auto& stage : manifest.stages) stages.emplace_back(stage_to_object(stage));
  const json::object root = {{"schema", kRunSchema},
                             {"run_id", manifest.run_id},
                             {"created_utc", manifest.created_utc},
                             {"updated_utc", manifest.updated_utc},
                             {"status", to_string(manifest.status)},
                             {"workload", workload_to_object(manifest.workload)},
                             {"stages", std::move(stages)},
                             {"total_bytes", manifest.total_bytes},
                             {"files", detail::json_array(manifest.files)}};
  auto copy = root;
  // Derived from the stages above, for a reader that wants the figure without the arithmetic; not read back.
  if (const auto cost = tool_cost_of(manifest.stages)) copy["tool_cost"] = tool_cost_to_object(*cost);
  if (!manifest.resumptions.empty()) {
    json::array resumptions;
    for (const auto& resumption : manifest.resumptions) resumptions.emplace_back(resumption_to_object(resumption));
    copy["resumptions"] = std::move(resumptions);
  }
  if (manifest.capture) copy["capture"] = capture_to_object(*manifest.capture);
  return detail::pretty_json(copy);
}

Result<RunManifest> manifest_from_json(const std::string& json_text) {
  boost::system::error_code error;
  const json::value root = detail::parse_json_text(json_text, error);
  if (error) {
    return make_error(ErrorCode::parse_error, "run.json is not valid JSON: " + error.message(),
                      "restore it from a backup or re-run; a run.json written by llmprof is never partial");
  }
  if (!root.is_object()) return make_error(ErrorCode::parse_error, "run.json is not a JSON object");
  // A run written by another version of llmprof: name the schema it has, not a "wrong type".
  if (const auto* schema = root.get_object().if_contains("schema");
      schema != nullptr && schema->is_string() && schema->get_string() != kRunSchema &&
      schema->get_string().starts_with("llmprof.run/")) {
    return make_error(ErrorCode::parse_error,
                      "run.json has schema " + std::string(schema->get_string()) + "; this deep-profile reads " +
                          kRunSchema,
                      "open it with the deep-profile version that wrote it (its run.json names the tool's version)",
                      "schema");
  }
  try {
    return manifest_from_object(root.get_object());
  } catch (const JsonFieldError& field) {
    return make_error(ErrorCode::parse_error, "run.json field '" + field.field + "' is missing or has the wrong type",
                      std::string("the file must follow schema ") + kRunSchema, field.field);
  }
}

std::string inputs_to_json(const WorkloadRecord& workload) {
  json::object root = {{"schema", kInputsSchema}};
  for (auto& member : workload_to_object(workload)) root.emplace(member.key(), std::move(member.value()));
  return detail::pretty_json(root);
}

}  // namespace llmprof
