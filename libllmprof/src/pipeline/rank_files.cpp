// Stage plans and rank statuses <-> JSON (see rank_files.hpp).
#include "pipeline/rank_files.hpp"

#include <boost/json.hpp>

#include "core/file_text.hpp"

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

std::string string_at(const json::object& object, const char* key) {
  const auto* found = object.if_contains(key);
  return found && found->is_string() ? std::string(found->as_string()) : std::string();
}

}  // namespace

std::string rank_plan_to_json(const RankPlan& plan) {
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
                                      {"timeout_key", plan.timeout_key}});
}

Result<RankPlan> read_rank_plan(const fs::path& file) {
  auto object = read_object(file, kPlanSchema, "stage plan");
  if (!object) return object.error();
  RankPlan plan;
  const std::string stage = string_at(*object, "stage");
  const std::optional<Stage> parsed = parse_stage(stage);
  if (!parsed) {
    return make_error(ErrorCode::parse_error, "the stage plan names no stage: \"" + stage + "\"",
                      "it is written by deep-profile; re-run the stage", file.string());
  }
  plan.stage = *parsed;
  plan.role = string_at(*object, "role");
  plan.working_directory = string_at(*object, "working_directory");
  plan.timeout_key = string_at(*object, "timeout_key");
  if (const auto* timeout = object->if_contains("timeout_s"); timeout && timeout->is_number())
    plan.timeout_s = timeout->to_number<double>();
  if (const auto* argv = object->if_contains("profiler_argv"); argv && argv->is_array()) {
    for (const auto& word : argv->as_array()) {
      if (word.is_string()) plan.profiler_argv.emplace_back(word.as_string());
    }
  }
  if (const auto* environment = object->if_contains("environment"); environment && environment->is_object()) {
    for (const auto& entry : environment->as_object()) {
      if (entry.value().is_string())
        plan.environment[std::string(entry.key())] = std::string(entry.value().as_string());
    }
  }
  return plan;
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
                   {"duration_s", status.duration_s}});
}

Result<RankStatus> read_rank_status(const fs::path& file) {
  auto object = read_object(file, kStatusSchema, "rank status");
  if (!object) return object.error();
  RankStatus status;
  auto integer = [&object](const char* key) {
    const auto* found = object->if_contains(key);
    return found && found->is_int64() ? static_cast<int>(found->as_int64()) : -1;
  };
  status.rank = integer("rank");
  status.local_rank = integer("local_rank");
  status.world_size = integer("world_size");
  if (status.rank < 0 || status.world_size <= 0) {
    return make_error(ErrorCode::parse_error, "the rank status has no rank or world size", "", file.string());
  }
  status.source = string_at(*object, "source");
  status.evidence = string_at(*object, "evidence");
  status.host = string_at(*object, "host");
  status.role = string_at(*object, "role");
  status.command = string_at(*object, "command");
  status.started_utc = string_at(*object, "started_utc");
  status.outcome = string_at(*object, "outcome");
  status.reason = string_at(*object, "reason");
  if (const auto* code = object->if_contains("exit_code"); code && code->is_int64())
    status.exit_code = static_cast<int>(code->as_int64());
  if (const auto* duration = object->if_contains("duration_s"); duration && duration->is_number()) {
    status.duration_s = duration->to_number<double>();
  }
  return status;
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
