// Typed JSON field readers (see json_fields.hpp).
#include "core/json_fields.hpp"

#include <boost/json.hpp>
#include <cmath>
#include <limits>

#include "core/json_pretty.hpp"

namespace llmprof::detail {
namespace json = boost::json;

namespace {
const json::value* present(const json::object& object, std::string_view key) {
  const auto* found = object.if_contains(key);
  return (found == nullptr || found->is_null()) ? nullptr : found;
}
}  // namespace

std::optional<std::int64_t> json_to_int64(const json::value& value) {
  constexpr double kLargestExactDouble = 9007199254740992.0;  // 2^53
  if (value.is_int64()) return value.get_int64();
  if (value.is_uint64()) {
    if (value.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(value.get_uint64());
  }
  if (value.is_double()) {
    const double number = value.get_double();
    if (!std::isfinite(number) || number != std::floor(number) || std::fabs(number) > kLargestExactDouble) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(number);
  }
  return std::nullopt;
}

std::string describe_json_value(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
      return "the integer " + json::serialize(value);
    case json::kind::double_:
      return "the number " + json::serialize(value);
    case json::kind::string:
      return "the string " + json::serialize(value);
    case json::kind::array:
      return "an array";
    case json::kind::object:
      return "an object";
  }
  return "an unknown value";
}

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
  if (auto integer = json_to_int64(*value)) return integer;
  throw JsonFieldError{field};
}

const json::array* json_array_field(const json::object& object, std::string_view key, const std::string& field) {
  const auto* value = present(object, key);
  if (value == nullptr) return nullptr;
  if (!value->is_array()) throw JsonFieldError{field};
  return &value->get_array();
}

const json::object* json_object_field(const json::object& object, std::string_view key, const std::string& field) {
  const auto* value = present(object, key);
  if (value == nullptr) return nullptr;
  if (!value->is_object()) throw JsonFieldError{field};
  return &value->get_object();
}

std::map<std::string, std::string> json_string_map(const json::object& object, std::string_view key,
                                                   const std::string& field) {
  std::map<std::string, std::string> values;
  const auto* entries = json_object_field(object, key, field);
  if (entries == nullptr) return values;
  for (const auto& entry : *entries) {
    if (!entry.value().is_string()) throw JsonFieldError{field};
    values[std::string(entry.key())] = std::string(entry.value().get_string());
  }
  return values;
}

std::vector<std::pair<std::string, double>> json_number_map(const json::object& object, std::string_view key,
                                                            const std::string& field, NullEntries null_entries) {
  std::vector<std::pair<std::string, double>> values;
  const auto* entries = json_object_field(object, key, field);
  if (entries == nullptr) return values;
  for (const auto& entry : *entries) {
    if (entry.value().is_null() && null_entries == NullEntries::passed_over) continue;
    if (!entry.value().is_number()) throw JsonFieldError{field + "." + std::string(entry.key())};
    values.emplace_back(std::string(entry.key()), entry.value().to_number<double>());
  }
  return values;
}

namespace {

// The elements of the array at `key`, each through `element_of`, which gives nullopt for an element of another
// type: JsonFieldError names `field`, with the element's index where `indexed` ("stages[2]").
template <class Element>
std::vector<Element> json_elements(const json::object& object, std::string_view key, const std::string& field,
                                   std::optional<Element> (*element_of)(const json::value&), bool indexed) {
  std::vector<Element> values;
  const auto* elements = json_array_field(object, key, field);
  if (elements == nullptr) return values;
  for (const auto& element : *elements) {
    auto value = element_of(element);
    if (!value) throw JsonFieldError{indexed ? field + "[" + std::to_string(values.size()) + "]" : field};
    values.push_back(std::move(*value));
  }
  return values;
}

}  // namespace

std::vector<std::string> json_strings(const json::object& object, std::string_view key, const std::string& field) {
  return json_elements<std::string>(
      object, key, field,
      [](const json::value& element) -> std::optional<std::string> {
        if (const auto* text = element.if_string()) return std::string(*text);
        return std::nullopt;
      },
      false);
}

std::vector<json::object> json_objects(const json::object& object, std::string_view key, const std::string& field) {
  return json_elements<json::object>(
      object, key, field,
      [](const json::value& element) -> std::optional<json::object> {
        if (const auto* nested = element.if_object()) return *nested;
        return std::nullopt;
      },
      true);
}

Result<json::object> parse_json_object(std::string_view text, const std::filesystem::path& path) {
  boost::system::error_code error;
  json::value root = parse_json_text(text, error);
  if (error) {
    return make_error(ErrorCode::parse_error, path.string() + " is not valid JSON: " + error.message(),
                      "re-create it with the step that writes it (deep-profile analyze for analysis/report.json)",
                      path.string());
  }
  if (!root.is_object())
    return make_error(ErrorCode::parse_error, path.string() + " is not a JSON object", "", path.string());
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
    } else if (const auto* found = tool.if_contains("found");
               found != nullptr && found->is_bool() && !found->get_bool()) {
      versions.emplace_back(name, "not found");
    }
  }
  return versions;
}

}  // namespace llmprof::detail
