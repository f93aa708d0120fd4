// One member's value <-> its JSON value and its CSV cell, chosen by the member's C++ type: the overloads that
// field<>() (core/record_fields.hpp) calls for each row. A type with no overload here cannot be a table row, so
// the compiler names a member a table cannot write. Reading follows the rules core/record_fields.hpp states: an
// absent or null key keeps the default, a key of the wrong type throws JsonFieldError naming `where`.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/json_fields.hpp"
#include "core/json_values.hpp"
#include "core/record_table.hpp"
#include "core/text.hpp"
#include "llmprof/choice.hpp"

namespace llmprof::detail {

// The integer element types a record's arrays hold: an index list (std::size_t) or signed figures (std::int64_t).
template <class Integer>
concept ArrayInteger = std::same_as<Integer, std::size_t> || std::same_as<Integer, std::int64_t>;

// --- one value <-> JSON, by the member's type --------------------------------------------------------

inline boost::json::value field_json(const std::string& value) { return boost::json::value(value); }
inline boost::json::value field_json(const std::optional<std::string>& value) { return json_or_null(value); }
inline boost::json::value field_json(const std::vector<std::string>& values) { return json_array(values); }
inline boost::json::value field_json(bool value) { return boost::json::value(value); }
inline boost::json::value field_json(int value) { return boost::json::value(value); }
inline boost::json::value field_json(std::int64_t value) { return boost::json::value(value); }
inline boost::json::value field_json(std::size_t value) { return boost::json::value(value); }
inline boost::json::value field_json(const std::optional<std::int64_t>& value) { return json_or_null(value); }
inline boost::json::value field_json(double value) { return boost::json::value(value); }
inline boost::json::value field_json(const std::optional<double>& value) { return json_or_null(value); }
template <ArrayInteger Integer>
boost::json::value field_json(const std::vector<Integer>& values) {
  boost::json::array array;
  for (auto value : values) array.emplace_back(value);
  return array;
}
template <class Enum>
concept ChoiceEnum = std::is_enum_v<Enum> && requires(Enum value) { choice_names(value); };
template <ChoiceEnum Enum>
boost::json::value field_json(Enum value) {
  return boost::json::value(std::string(choice_name(value)));
}
template <TabledRecord Record>
boost::json::value field_json(const Record& record) {
  return write_record(record);
}
template <TabledRecord Record>
boost::json::value field_json(const std::optional<Record>& record) {
  if (!record) return nullptr;
  return write_record(*record);
}
template <TabledRecord Record>
boost::json::value field_json(const std::vector<Record>& records) {
  boost::json::array array;
  for (const auto& record : records) array.emplace_back(write_record(record));
  return array;
}

inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       std::string& value) {
  if (auto text = json_string(object, key, where)) value = std::move(*text);
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       std::optional<std::string>& value) {
  value = json_string(object, key, where);
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       std::vector<std::string>& values) {
  values = json_strings(object, key, where);
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       bool& value) {
  const auto* found = object.if_contains(key);
  if (found == nullptr || found->is_null()) return;
  if (!found->is_bool()) throw JsonFieldError{where};
  value = found->get_bool();
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       int& value) {
  if (auto number = json_integer(object, key, where)) value = static_cast<int>(*number);
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       std::int64_t& value) {
  if (auto number = json_integer(object, key, where)) value = *number;
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       std::size_t& value) {
  if (auto number = json_integer(object, key, where)) {
    if (*number < 0) throw JsonFieldError{where};  // a count: a negative one is a corrupt file, not a figure
    value = static_cast<std::size_t>(*number);
  }
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       std::optional<std::int64_t>& value) {
  value = json_integer(object, key, where);
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       double& value) {
  if (auto number = json_number(object, key, where)) value = *number;
}
inline void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                       std::optional<double>& value) {
  value = json_number(object, key, where);
}
// An array of integers; a negative element of an unsigned array (an index, a count) is a corrupt file, not a
// figure, so it throws like a wrong type.
template <ArrayInteger Integer>
void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                std::vector<Integer>& values) {
  values.clear();
  const auto* elements = json_array_field(object, key, where);
  if (elements == nullptr) return;
  for (const auto& element : *elements) {
    const auto number = json_to_int64(element);
    if (!number || (std::is_unsigned_v<Integer> && *number < 0)) throw JsonFieldError{where};
    values.push_back(static_cast<Integer>(*number));
  }
}

template <ChoiceEnum Enum>
void read_field(const boost::json::object& object, std::string_view key, const std::string& where, Enum& value) {
  const auto text = json_string(object, key, where);
  if (!text) return;
  const auto parsed = parse_choice<Enum>(*text);
  if (!parsed) throw JsonFieldError{where};
  value = *parsed;
}

template <TabledRecord Record>
void read_field(const boost::json::object& object, std::string_view key, const std::string& where, Record& record) {
  if (const auto* nested = json_object_field(object, key, where)) read_record(*nested, where + ".", record);
}
template <TabledRecord Record>
void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                std::optional<Record>& record) {
  record.reset();
  if (const auto* nested = json_object_field(object, key, where)) read_record(*nested, where + ".", record.emplace());
}
template <TabledRecord Record>
void read_field(const boost::json::object& object, std::string_view key, const std::string& where,
                std::vector<Record>& records) {
  records.clear();
  for (const auto& element : json_objects(object, key, where)) {
    const std::string element_where = where + "[" + std::to_string(records.size()) + "].";
    read_record(element, element_where, records.emplace_back());
  }
}

// --- one value -> one CSV cell ----------------------------------------------------------------------

inline std::string field_csv(const std::string& value) { return csv_cell(value); }
inline std::string field_csv(const std::optional<std::string>& value) { return value ? csv_cell(*value) : ""; }
inline std::string field_csv(const std::vector<std::string>& values) { return csv_cell(join(values, ";")); }
inline std::string field_csv(bool value) { return value ? "true" : "false"; }
inline std::string field_csv(int value) { return std::to_string(value); }
inline std::string field_csv(std::int64_t value) { return std::to_string(value); }
inline std::string field_csv(std::size_t value) { return std::to_string(value); }
inline std::string field_csv(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : std::string();
}
template <ChoiceEnum Enum>
std::string field_csv(Enum value) {
  return std::string(choice_name(value));
}
inline std::string field_csv(double value) { return format_data_number(value); }
inline std::string field_csv(const std::optional<double>& value) {
  return value ? format_data_number(*value) : std::string();
}

}  // namespace llmprof::detail
