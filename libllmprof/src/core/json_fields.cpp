// Tolerant JSON readers for report inputs (see report_json.hpp).
#include "core/json_fields.hpp"

#include <boost/json.hpp>
#include <cmath>

namespace llmprof::detail {
namespace json = boost::json;

namespace {
const json::value* present(const json::object& object, std::string_view key) {
  const auto* found = object.if_contains(key);
  return (found == nullptr || found->is_null()) ? nullptr : found;
}
}  // namespace

std::optional<std::string> json_string(const json::object& object, std::string_view key, const std::string& field) {
  const auto* value = present(object, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) throw JsonFieldError{field};
  return std::string(value->get_string());
}

std::optional<double> json_number(const json::object& object, std::string_view key, const std::string& field) {
  const auto* value = present(object, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) throw JsonFieldError{field};
  const double number = value->to_number<double>();
  if (!std::isfinite(number)) throw JsonFieldError{field};
  return number;
}

std::optional<std::int64_t> json_integer(const json::object& object, std::string_view key, const std::string& field) {
  const auto* value = present(object, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64()) {
    if (value->get_uint64() > static_cast<std::uint64_t>(INT64_MAX)) throw JsonFieldError{field};
    return static_cast<std::int64_t>(value->get_uint64());
  }
  if (value->is_double()) {
    const double number = value->get_double();
    if (!std::isfinite(number) || number != std::floor(number) || std::fabs(number) > 9.0e18) throw JsonFieldError{field};
    return static_cast<std::int64_t>(number);
  }
  throw JsonFieldError{field};
}

std::vector<std::string> json_strings(const json::object& object, std::string_view key, const std::string& field) {
  std::vector<std::string> values;
  const auto* value = present(object, key);
  if (value == nullptr) return values;
  if (!value->is_array()) throw JsonFieldError{field};
  for (const auto& element : value->get_array()) {
    if (!element.is_string()) throw JsonFieldError{field};
    values.emplace_back(element.get_string());
  }
  return values;
}

std::vector<json::object> json_objects(const json::object& object, std::string_view key, const std::string& field) {
  std::vector<json::object> values;
  const auto* value = present(object, key);
  if (value == nullptr) return values;
  if (!value->is_array()) throw JsonFieldError{field};
  for (const auto& element : value->get_array()) {
    if (!element.is_object()) throw JsonFieldError{field + "[" + std::to_string(values.size()) + "]"};
    values.push_back(element.get_object());
  }
  return values;
}

Result<json::object> parse_json_object(std::string_view text, const std::filesystem::path& path) {
  boost::system::error_code error;
  json::value root = json::parse(text, error);
  if (error) {
    return make_error(ErrorCode::parse_error, path.string() + " is not valid JSON: " + error.message(),
                      "re-create it with the step that writes it (deep-profile analyze for analysis/report.json)",
                      path.string());
  }
  if (!root.is_object()) return make_error(ErrorCode::parse_error, path.string() + " is not a JSON object", "", path.string());
  return std::move(root.get_object());
}

std::vector<std::pair<std::string, std::string>> tool_versions_from_environment(const json::object& environment) {
  std::vector<std::pair<std::string, std::string>> versions;
  const auto* tools = environment.if_contains("tools");
  if (tools == nullptr || !tools->is_object()) return versions;
  for (const auto& entry : tools->get_object()) {
    const std::string name(entry.key());
    const auto& value = entry.value();
    if (value.is_string()) {
      versions.emplace_back(name, std::string(value.get_string()));
      continue;
    }
    if (!value.is_object()) continue;
    const auto& tool = value.get_object();
    const auto* version = tool.if_contains("version");
    if (version != nullptr && version->is_string()) {
      versions.emplace_back(name, std::string(version->get_string()));
    } else if (version != nullptr && version->is_object()) {
      const auto& object = version->get_object();
      if (const auto* text = object.if_contains("text"); text != nullptr && text->is_string()) {
        versions.emplace_back(name, std::string(text->get_string()));
      }
    } else if (const auto* found = tool.if_contains("found"); found != nullptr && found->is_bool() && !found->get_bool()) {
      versions.emplace_back(name, "not found");
    }
  }
  return versions;
}

}  // namespace llmprof::detail
