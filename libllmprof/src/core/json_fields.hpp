// Typed reads of the JSON files we read back (run.json, report.json, env.json, stage1/metrics.json):
// unknown fields are ignored, null or absent means "not recorded", a known field of the wrong type is
// an error. One integer policy for every reader (json_to_int64), so no two files disagree on what an
// integer is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "llmprof/result.hpp"

namespace llmprof::detail {

// The integer a JSON value holds, or nullopt: an int64, a uint64 up to INT64_MAX, or a double that
// is whole and at most 2^53 in magnitude (Python writes 4.0 for a count it computed as a float;
// beyond 2^53 a double no longer says which integer was meant).
std::optional<std::int64_t> json_to_int64(const boost::json::value& value);
// What a value is, for messages: "null", "a boolean", "the integer 3", "the number 2.5E0",
// "the string \"x\"", "an array", "an object".
std::string describe_json_value(const boost::json::value& value);

// Thrown by the readers below and turned into a parse_error naming file and field by the caller.
struct JsonFieldError {
  std::string field;
};

std::optional<std::string> json_string(const boost::json::object& object, std::string_view key,
                                       const std::string& field);
std::optional<double> json_number(const boost::json::object& object, std::string_view key, const std::string& field);
// Integers by json_to_int64's policy.
std::optional<std::int64_t> json_integer(const boost::json::object& object, std::string_view key,
                                         const std::string& field);
// The array / object at `key`: nullptr when absent or null, JsonFieldError{field} when it holds anything else.
// The typed readers of arrays and nested objects start from these.
const boost::json::array* json_array_field(const boost::json::object& object, std::string_view key,
                                           const std::string& field);
const boost::json::object* json_object_field(const boost::json::object& object, std::string_view key,
                                             const std::string& field);
// A JSON object of strings ({"NAME": "value"}).
std::map<std::string, std::string> json_string_map(const boost::json::object& object, std::string_view key,
                                                   const std::string& field);
// A JSON object of numbers as name/number pairs in file order ({"fp16": 1.9e15, "fp8": 3.9e15}: a figure per
// precision): empty when absent or null; JsonFieldError{field + "." + name} names an entry that is not a number,
// a null one included unless `null_entries` lets the file leave a figure out that way.
enum class NullEntries { refused, passed_over };
std::vector<std::pair<std::string, double>> json_number_map(const boost::json::object& object, std::string_view key,
                                                            const std::string& field,
                                                            NullEntries null_entries = NullEntries::refused);
std::vector<std::string> json_strings(const boost::json::object& object, std::string_view key,
                                      const std::string& field);
std::vector<boost::json::object> json_objects(const boost::json::object& object, std::string_view key,
                                              const std::string& field);

// The value of a field that must be present: throws JsonFieldError{field} when it is not.
template <typename T>
T required_field(std::optional<T> value, const std::string& field) {
  if (!value) throw JsonFieldError{field};
  return std::move(*value);
}

// Parses text that must be a JSON object; errors name `path`.
Result<boost::json::object> parse_json_object(std::string_view text, const std::filesystem::path& path);

// env.json "tools": {"nsys": {"version": "2025.3.1.0" | {"text": ...}, "found": bool, ...}, ...} or
// {"nsys": "2025.3.1.0"}; the probe's shape may grow, so anything unrecognised is skipped.
std::vector<std::pair<std::string, std::string>> tool_versions_from_environment(const boost::json::object& environment);

}  // namespace llmprof::detail
