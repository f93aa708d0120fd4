// run.json ("llmprof.run/1") and inputs.json <-> JSON text, with Boost.JSON.
#include <boost/json.hpp>

#include "core/json_pretty.hpp"
#include "llmprof/run_directory.hpp"

namespace llmprof {
namespace json = boost::json;
namespace {

constexpr const char* kRunSchema = "llmprof.run/1";
constexpr const char* kInputsSchema = "llmprof.inputs/1";

template <typename Enum, std::size_t N>
std::optional<Enum> parse_enum(std::string_view text, const Enum (&values)[N]) {
  for (Enum value : values) {
    if (text == to_string(value)) return value;
  }
  return std::nullopt;
}

constexpr StageStatus kStageStatuses[] = {StageStatus::pending, StageStatus::running, StageStatus::ok,
                                          StageStatus::skipped, StageStatus::failed, StageStatus::interrupted};
constexpr RunStatus kRunStatuses[] = {RunStatus::running, RunStatus::ok, RunStatus::incomplete, RunStatus::failed,
                                      RunStatus::interrupted};

json::value optional_string(const std::optional<std::string>& value) {
  return value ? json::value(*value) : json::value(nullptr);
}

json::array string_array(const std::vector<std::string>& values) {
  json::array array;
  for (const auto& value : values) array.emplace_back(value);
  return array;
}

json::object workload_to_object(const WorkloadRecord& workload) {
  json::object env;
  for (const auto& [name, value] : workload.environment) env[name] = value;
  return {{"argv", string_array(workload.argv)}, {"cwd", workload.working_directory.string()}, {"env", std::move(env)}};
}

json::object stage_to_object(const StageRecord& stage) {
  return {{"name", stage.name},
          {"status", to_string(stage.status)},
          {"reason", stage.reason},
          {"started_utc", stage.started_utc},
          {"duration_s", stage.duration_s},
          {"exit_code", stage.exit_code ? json::value(*stage.exit_code) : json::value(nullptr)},
          {"command", optional_string(stage.command)},
          {"cmd_file", optional_string(stage.cmd_file)},
          {"log_file", optional_string(stage.log_file)},
          {"artifacts", string_array(stage.artifacts)},
          {"warnings", string_array(stage.warnings)}};
}

// Reading: every accessor throws std::exception on a wrong shape; manifest_from_json turns that
// into a parse_error naming the field.
struct FieldError {
  std::string field;
};

const json::value& member(const json::object& object, const char* key) {
  const auto* found = object.if_contains(key);
  if (found == nullptr) throw FieldError{key};
  return *found;
}

std::string get_string(const json::object& object, const char* key, bool required = true) {
  const auto* found = object.if_contains(key);
  if (found == nullptr || found->is_null()) {
    if (required) throw FieldError{key};
    return {};
  }
  if (!found->is_string()) throw FieldError{key};
  return std::string(found->get_string());
}

std::optional<std::string> get_optional_string(const json::object& object, const char* key) {
  const auto* found = object.if_contains(key);
  if (found == nullptr || found->is_null()) return std::nullopt;
  if (!found->is_string()) throw FieldError{key};
  return std::string(found->get_string());
}

std::vector<std::string> get_strings(const json::object& object, const char* key) {
  std::vector<std::string> values;
  const auto* found = object.if_contains(key);
  if (found == nullptr || found->is_null()) return values;
  if (!found->is_array()) throw FieldError{key};
  for (const auto& element : found->get_array()) {
    if (!element.is_string()) throw FieldError{key};
    values.emplace_back(element.get_string());
  }
  return values;
}

WorkloadRecord workload_from_object(const json::object& object) {
  WorkloadRecord workload;
  workload.argv = get_strings(object, "argv");
  workload.working_directory = get_string(object, "cwd", false);
  if (const auto* env = object.if_contains("env"); env != nullptr && !env->is_null()) {
    if (!env->is_object()) throw FieldError{"workload.env"};
    for (const auto& entry : env->get_object()) {
      if (!entry.value().is_string()) throw FieldError{"workload.env"};
      workload.environment[std::string(entry.key())] = std::string(entry.value().get_string());
    }
  }
  return workload;
}

StageRecord stage_from_object(const json::object& object) {
  StageRecord stage;
  stage.name = get_string(object, "name");
  const auto status = parse_enum(get_string(object, "status"), kStageStatuses);
  if (!status) throw FieldError{"stages.status"};
  stage.status = *status;
  stage.reason = get_string(object, "reason", false);
  stage.started_utc = get_string(object, "started_utc", false);
  if (const auto* duration = object.if_contains("duration_s"); duration != nullptr && !duration->is_null()) {
    if (!duration->is_number()) throw FieldError{"stages.duration_s"};
    stage.duration_s = duration->to_number<double>();
  }
  if (const auto* code = object.if_contains("exit_code"); code != nullptr && !code->is_null()) {
    if (!code->is_int64()) throw FieldError{"stages.exit_code"};
    stage.exit_code = static_cast<int>(code->get_int64());
  }
  stage.command = get_optional_string(object, "command");
  stage.cmd_file = get_optional_string(object, "cmd_file");
  stage.log_file = get_optional_string(object, "log_file");
  stage.artifacts = get_strings(object, "artifacts");
  stage.warnings = get_strings(object, "warnings");
  return stage;
}

RunManifest manifest_from_object(const json::object& root) {
  if (get_string(root, "schema") != kRunSchema) throw FieldError{"schema"};
  RunManifest manifest;
  manifest.run_id = get_string(root, "run_id");
  manifest.created_utc = get_string(root, "created_utc", false);
  manifest.updated_utc = get_string(root, "updated_utc", false);
  const auto status = parse_enum(get_string(root, "status"), kRunStatuses);
  if (!status) throw FieldError{"status"};
  manifest.status = *status;
  if (const auto* workload = root.if_contains("workload"); workload != nullptr && !workload->is_null()) {
    if (!workload->is_object()) throw FieldError{"workload"};
    manifest.workload = workload_from_object(workload->get_object());
  }
  const auto& stages = member(root, "stages");
  if (!stages.is_array()) throw FieldError{"stages"};
  for (const auto& stage : stages.get_array()) {
    if (!stage.is_object()) throw FieldError{"stages"};
    manifest.stages.push_back(stage_from_object(stage.get_object()));
  }
  if (const auto* bytes = root.if_contains("total_bytes"); bytes != nullptr && !bytes->is_null()) {
    if (!bytes->is_number()) throw FieldError{"total_bytes"};
    manifest.total_bytes = bytes->to_number<std::uint64_t>();
  }
  return manifest;
}

}  // namespace

const char* to_string(StageStatus status) noexcept {
  switch (status) {
    case StageStatus::pending: return "pending";
    case StageStatus::running: return "running";
    case StageStatus::ok: return "ok";
    case StageStatus::skipped: return "skipped";
    case StageStatus::failed: return "failed";
    case StageStatus::interrupted: return "interrupted";
  }
  return "pending";
}

const char* to_string(RunStatus status) noexcept {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::ok: return "ok";
    case RunStatus::incomplete: return "incomplete";
    case RunStatus::failed: return "failed";
    case RunStatus::interrupted: return "interrupted";
  }
  return "running";
}

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
                             {"total_bytes", manifest.total_bytes}};
  return detail::pretty_json(root);
}

Result<RunManifest> manifest_from_json(const std::string& json_text) {
  boost::system::error_code error;
  const json::value root = json::parse(json_text, error);
  if (error) {
    return make_error(ErrorCode::parse_error, "run.json is not valid JSON: " + error.message(),
                      "restore it from a backup or re-run; a run.json written by llmprof is never partial");
  }
  if (!root.is_object()) return make_error(ErrorCode::parse_error, "run.json is not a JSON object");
  try {
    return manifest_from_object(root.get_object());
  } catch (const FieldError& field) {
    return make_error(ErrorCode::parse_error,
                      "run.json field '" + field.field + "' is missing or has the wrong type",
                      std::string("the file must follow schema ") + kRunSchema, field.field);
  } catch (const std::exception& failure) {  // a number out of range in to_number
    return make_error(ErrorCode::parse_error, std::string("run.json has an unreadable value: ") + failure.what());
  }
}

std::string inputs_to_json(const WorkloadRecord& workload) {
  json::object root = {{"schema", kInputsSchema}};
  for (auto& member : workload_to_object(workload)) root.emplace(member.key(), std::move(member.value()));
  return detail::pretty_json(root);
}

}  // namespace llmprof
