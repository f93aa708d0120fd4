// Tolerant typed reads of the run directory's JSON files for the report renderers: unknown fields
// are ignored, null or absent means "not computed", a known field of the wrong type is an error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "llmprof/result.hpp"

namespace llmprof::detail {

// Thrown by the readers below and turned into a parse_error naming file and field by the caller.
struct JsonFieldError {
  std::string field;
};

std::optional<std::string> json_string(const boost::json::object& object, std::string_view key, const std::string& field);
std::optional<double> json_number(const boost::json::object& object, std::string_view key, const std::string& field);
// Integers written as doubles (e.g. 1.0e6) are accepted when integral.
std::optional<std::int64_t> json_integer(const boost::json::object& object, std::string_view key, const std::string& field);
std::vector<std::string> json_strings(const boost::json::object& object, std::string_view key, const std::string& field);
std::vector<boost::json::object> json_objects(const boost::json::object& object, std::string_view key, const std::string& field);

// Parses text that must be a JSON object; errors name `path`.
Result<boost::json::object> parse_json_object(std::string_view text, const std::filesystem::path& path);

// env.json "tools": {"nsys": {"version": "2025.3.1.0" | {"text": ...}, "found": bool, ...}, ...} or
// {"nsys": "2025.3.1.0"}; the probe's shape may grow, so anything unrecognised is skipped.
std::vector<std::pair<std::string, std::string>> tool_versions_from_environment(const boost::json::object& environment);

}  // namespace llmprof::detail
