// Stage plans and rank statuses <-> JSON (see rank_files.hpp).
#include "pipeline/rank_files.hpp"

#include <boost/json.hpp>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace json = boost::json;
namespace {

constexpr const char* kPlanSchema = "llmprof.rank_plan/1";
constexpr const char* kStatusSchema = "llmprof.rank_status/1";

Result<json::object> read_object(const fs::path& file, const char* schema, const char* what) {
  const std::string text = read_text(file);
  if (text.empty()) {
    return make_error(ErrorCode::not_found, std::string("no ") + what + " at " + file.string(),
                      "rank-exec is started by `deep-profile run --launcher ...`, which writes it first",
                      file.string());
  }
  boost::system::error_code error;
  json::value value = json::parse(text, error);
  if (error || !value.is_object() || !value.as_object().contains("schema") ||
      value.as_object().at("schema") != schema) {
    return make_error(ErrorCode::parse_error, std::string("the ") + what + " is not a " + schema + " JSON object",
                      "it is written by deep-profile; re-run the stage", file.string());
  }
  return std::move(value.as_object());
}

// A field of the wrong type, named for the message: the file is ours, so it was damaged or edited.
Error wrong_field(const fs::path& file, const char* what, const JsonFieldError& wrong) {
  return make_error(ErrorCode::parse_error,
                    std::string("the ") + what + "'s field " + wrong.field + " has the wrong type",
                    "it is written by deep-profile; re-run the stage", file.string());
}

// Reads `file`, a `what` of `schema`, into a Record through `fill`, which returns an Error for a file whose fields
// are there but make no record (an unknown stage, no rank). A field of the wrong type is wrong_field's error.
template <class Record>
Result<Record> read_rank_file(const fs::path& file, const char* schema, const char* what,
                              std::optional<Error> (*fill)(const json::object&, const fs::path&, Record&)) {
  auto object = read_object(file, schema, what);
  if (!object) return object.error();
  Record record;
  try {
    if (std::optional<Error> refused = fill(*object, file, record)) return std::move(*refused);
  } catch (const JsonFieldError& wrong) {
    return wrong_field(file, what, wrong);
  }
  return record;
}

}  // namespace

std::string rank_plan_to_json(const RankPlan& plan) {
  json::object listed;
  for (const auto& [id, bus] : plan.gpu_metrics_listed) listed[id] = bus;
  json::array argv;
  for (const auto& word : plan.profiler_argv) argv.emplace_back(word);
  json::object environment;
  for (const auto& [name, value] : plan.environment) environment[name] = value;
  return json::serialize(json::object{{"schema", kPlanSchema},
                                      {"stage", to_string(plan.stage)},
                                      {"role", plan.role},
                                      {"profiler_argv", std::move(argv)},
                                      {"environment", std::move(environment)},
                                      {"working_directory", plan.working_directory.string()},
                                      {"timeout_s", plan.timeout_s},
                                      {"timeout_key", plan.timeout_key},
                                      {"survivor_grace_s", plan.survivor_grace_s ? json::value(*plan.survivor_grace_s)
                                                                                 : json::value(nullptr)},
                                      {"gpu_metrics_option", plan.gpu_metrics_option},
                                      {"gpu_metrics_words", json::array(plan.gpu_metrics_words.begin(),
                                                                        plan.gpu_metrics_words.end())},
                                      {"gpu_metrics_listed", std::move(listed)},
                                      {"gpu_metrics_cuda_visible", plan.gpu_metrics_cuda_visible}});
}

namespace {

std::optional<Error> fill_rank_plan(const json::object& object, const fs::path& file, RankPlan& plan) {
  const std::string stage = json_string(object, "stage", "stage").value_or("");
  const std::optional<Stage> parsed = parse_stage(stage);
  if (!parsed) {
    return make_error(ErrorCode::parse_error, "the stage plan names no stage: \"" + stage + "\"",
                      "it is written by deep-profile; re-run the stage", file.string());
  }
  plan.stage = *parsed;
  plan.role = json_string(object, "role", "role").value_or("");
  plan.working_directory = json_string(object, "working_directory", "working_directory").value_or("");
  plan.timeout_key = json_string(object, "timeout_key", "timeout_key").value_or("");
  if (auto timeout = json_number(object, "timeout_s", "timeout_s")) plan.timeout_s = *timeout;
  plan.survivor_grace_s = json_number(object, "survivor_grace_s", "survivor_grace_s");
  plan.profiler_argv = json_strings(object, "profiler_argv", "profiler_argv");
  plan.environment = json_string_map(object, "environment", "environment");
  plan.gpu_metrics_option = json_string(object, "gpu_metrics_option", "gpu_metrics_option").value_or("");
  plan.gpu_metrics_listed = json_string_map(object, "gpu_metrics_listed", "gpu_metrics_listed");
  plan.gpu_metrics_words = json_strings(object, "gpu_metrics_words", "gpu_metrics_words");
  if (const auto* visible = object.if_contains("gpu_metrics_cuda_visible"); visible && visible->is_bool())
    plan.gpu_metrics_cuda_visible = visible->as_bool();
  return std::nullopt;
}

}  // namespace

Result<RankPlan> read_rank_plan(const fs::path& file) {
  return read_rank_file(file, kPlanSchema, "stage plan", fill_rank_plan);
}

std::string rank_status_to_json(const RankStatus& status) {
  return json::serialize(
      json::object{{"schema", kStatusSchema},
                   {"rank", status.rank},
                   {"local_rank", status.local_rank},
                   {"world_size", status.world_size},
                   {"source", status.source},
                   {"evidence", status.evidence},
                   {"host", status.host},
                   {"role", status.role},
                   {"command", status.command},
                   {"started_utc", status.started_utc},
                   {"outcome", status.outcome},
                   {"reason", status.reason},
                   {"exit_code", status.exit_code ? json::value(*status.exit_code) : json::value(nullptr)},
                   {"duration_s", status.duration_s},
                   {"survivors", json::array(status.survivors.begin(), status.survivors.end())},
                   {"survivors_ended", status.survivors_ended},
                   {"survivors_killed", json::array(status.survivors_killed.begin(), status.survivors_killed.end())},
                   {"gpu_metrics", status.gpu_metrics},
                   {"gpu_metrics_bus", status.gpu_metrics_bus},
                   {"gpu_metrics_note", status.gpu_metrics_note}});
}

namespace {

std::optional<Error> fill_rank_status(const json::object& object, const fs::path& file, RankStatus& status) {
  auto integer = [&object](const char* key) {
    const auto value = json_integer(object, key, key);
    return value ? static_cast<int>(*value) : -1;
  };
  status.rank = integer("rank");
  status.local_rank = integer("local_rank");
  status.world_size = integer("world_size");
  if (status.rank < 0 || status.world_size <= 0) {
    return make_error(ErrorCode::parse_error, "the rank status has no rank or world size", "", file.string());
  }
  auto text = [&object](const char* key) { return json_string(object, key, key).value_or(""); };
  status.source = text("source");
  status.evidence = text("evidence");
  status.host = text("host");
  status.role = text("role");
  status.command = text("command");
  status.started_utc = text("started_utc");
  status.outcome = text("outcome");
  status.reason = text("reason");
  if (auto code = json_integer(object, "exit_code", "exit_code")) status.exit_code = static_cast<int>(*code);
  if (auto duration = json_number(object, "duration_s", "duration_s")) status.duration_s = *duration;
  status.survivors = json_strings(object, "survivors", "survivors");
  if (const auto* ended = object.if_contains("survivors_ended"); ended && ended->is_bool())
    status.survivors_ended = ended->as_bool();
  status.survivors_killed = json_strings(object, "survivors_killed", "survivors_killed");
  status.gpu_metrics = text("gpu_metrics");
  status.gpu_metrics_bus = text("gpu_metrics_bus");
  status.gpu_metrics_note = text("gpu_metrics_note");
  return std::nullopt;
}

}  // namespace

Result<RankStatus> read_rank_status(const fs::path& file) {
  return read_rank_file(file, kStatusSchema, "rank status", fill_rank_status);
}

std::string substitute_rank(std::string text, int rank) {
  const std::string token = kRankToken;
  const std::string number = std::to_string(rank);
  for (auto at = text.find(token); at != std::string::npos; at = text.find(token, at + number.size())) {
    text.replace(at, token.size(), number);
  }
  return text;
}

}  // namespace llmprof::detail
