// JSON values for the files we write, from optional figures and lists: a figure that was not
// measured is null, never 0, so a reader cannot mistake it for a measurement. The counterpart of
// json_fields.hpp, which reads them back.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace llmprof::detail {

// A number, or null when absent or not finite (JSON has no inf or nan, and a reader of ours would
// refuse the file).
inline boost::json::value json_or_null(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

inline boost::json::value json_or_null(const std::optional<std::int64_t>& value) {
  if (!value) return nullptr;
  return *value;
}

inline boost::json::value json_or_null(const std::optional<std::string>& value) {
  if (!value) return nullptr;
  return boost::json::value(*value);
}

inline boost::json::array json_array(const std::vector<std::string>& values) {
  boost::json::array array;
  for (const auto& value : values) array.emplace_back(value);
  return array;
}

// Name/number pairs as an object of numbers in their order ({"fp16": 1.9e15, ...}); json_number_map reads it back.
inline boost::json::object json_number_object(const std::vector<std::pair<std::string, double>>& entries) {
  boost::json::object object;
  for (const auto& [name, number] : entries) object[name] = number;
  return object;
}

}  // namespace llmprof::detail
