// Field tables: one table per record names each JSON key and the member it holds, and the writer, the
// reader and the CSV columns all walk that one table, so a record cannot be written under one name and
// read back under another. A figure added to a record is one member and one table row.
//
//   template <> struct RecordTable<Headroom> {
//     static constexpr RecordField<Headroom> fields[] = {field<&Headroom::speedup>("speedup"), ...};
//   };
//   boost::json::object object = write_record(headroom);
//   read_record(object, "headroom.", headroom);
//
// A figure's row may name its bound and its inputs: `field<&Stage::mfu>("mfu").within(FigureBound::fraction,
// "achieved_flop_per_s / the device's peak")`. check_record_bounds walks the same table, so the analysis that
// makes a figure and the report that reads it back apply one rule (withhold_impossible_figures,
// rundir/report_model_json.hpp).
//
// An enum with spellings (llmprof/choice.hpp) is its spelling; reading any other text throws JsonFieldError.
// A member may itself be a record with a table (nested object), a vector of such records (array of
// objects), or an optional record (null when absent). Reading: unknown keys are ignored, an absent or
// null key keeps the member's default (an optional becomes nullopt), a key of the wrong type throws
// JsonFieldError naming `where` + the key ("timeline.stages[2].cpu_duration.p50_ns").
//
// The row descriptor is in core/record_table.hpp and the per-type value conversions in core/record_values.hpp;
// this header, the one to include, holds the row makers and the walks over a table.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/figure_checks.hpp"
#include "core/json_fields.hpp"
#include "core/record_table.hpp"
#include "core/record_values.hpp"

namespace llmprof::detail {

// --- the table rows ---------------------------------------------------------------------------------

template <class Member>
struct MemberPointer;
template <class Record, class Value>
struct MemberPointer<Value Record::*> {
  using RecordType = Record;
  using ValueType = Value;
};

// The member a row names: `record.*Member`, or a member of a member (`(record.*Member).*Inner`, ...).
template <auto Member, auto... Inner, class Object>
constexpr auto& member_at(Object& object) {
  if constexpr (sizeof...(Inner) == 0)
    return object.*Member;
  else
    return member_at<Inner...>(object.*Member);
}

// A row: `field<&Stage::wall_ns>("wall_ns")`. With more members, a member of a member written flat in the record's
// own object, for a file whose layout has the inner record's figures beside the outer's:
// `field<&StepKindFigures::step_time, &DurationSummary::p50_ns>("p50_ns")`.
template <auto Member, auto... Inner>
constexpr RecordField<typename MemberPointer<decltype(Member)>::RecordType> field(std::string_view key) {
  using Record = typename MemberPointer<decltype(Member)>::RecordType;
  using Value = std::remove_cvref_t<decltype(member_at<Member, Inner...>(std::declval<Record&>()))>;
  RecordField<Record> row;
  row.key = key;
  row.write = [](const Record& record) { return field_json(member_at<Member, Inner...>(record)); };
  row.read = [](const boost::json::object& object, std::string_view name, const std::string& where,
                Record& record) { read_field(object, name, where, member_at<Member, Inner...>(record)); };
  if constexpr (requires(const Value& value) { field_csv(value); })
    row.csv = [](const Record& record) { return field_csv(member_at<Member, Inner...>(record)); };
  if constexpr (RecordVector<Value>) {
    row.require_nested = [](const boost::json::value& value, const std::string& where) {
      const auto* array = value.if_array();
      for (std::size_t i = 0; array != nullptr && i < array->size(); ++i)
        if (const auto* element = (*array)[i].if_object())
          require_record_keys<typename Value::value_type>(*element, where + "[" + std::to_string(i) + "].");
    };
  }
  if constexpr (requires(Value& value, FigureChecker& checker) {
                  checker.apply(FigureBound::none, value, std::string_view(), std::string_view());
                })
    row.check = [](Record& record, FigureChecker& checker, FigureBound bound, std::string_view figure,
                   std::string_view inputs) { checker.apply(bound, member_at<Member, Inner...>(record), figure, inputs); };
  return row;
}

// A name the record cannot do without: absent or empty is an error.
template <auto Member>
constexpr RecordField<typename MemberPointer<decltype(Member)>::RecordType> name_field(std::string_view key) {
  using Record = typename MemberPointer<decltype(Member)>::RecordType;
  static_assert(std::is_same_v<typename MemberPointer<decltype(Member)>::ValueType, std::string>);
  RecordField<Record> row = field<Member>(key);
  row.read = [](const boost::json::object& object, std::string_view name, const std::string& where,
                Record& record) {
    read_field(object, name, where, record.*Member);
    if ((record.*Member).empty()) throw JsonFieldError{where};
  };
  return row;
}

// A figure the record computes (`&TimelineStage::partial`): written for readers of the file, and not read
// back, since the record recomputes it from the members it is computed from. A number's row may name a bound
// (`.within`), a rule over the members it is computed from (two shares whose sum is a share): there is no member to
// withhold, so the checker warns and counts it withheld (FigureChecker::any_withheld), and the caller drops the record.
template <auto Function>
constexpr auto computed_field(std::string_view key) {
  using Record = typename MemberPointer<decltype(Function)>::RecordType;  // Value is the function's type
  using Value = std::remove_cvref_t<decltype((std::declval<const Record&>().*Function)())>;
  RecordField<Record> row;
  row.key = key;
  row.write = [](const Record& record) { return field_json((record.*Function)()); };
  row.read = [](const boost::json::object&, std::string_view, const std::string&, Record&) {};
  row.csv = [](const Record& record) { return field_csv((record.*Function)()); };
  if constexpr (std::is_arithmetic_v<Value> && !std::is_same_v<Value, bool>)
    row.check = [](Record& record, FigureChecker& checker, FigureBound bound, std::string_view figure,
                   std::string_view inputs) {
      std::optional<double> value = static_cast<double>((std::as_const(record).*Function)());
      checker.apply(bound, value, figure, inputs);
    };
  return row;
}

// A nested object whose keys are rows over the same record (the file nests what the record holds flat).
template <class Record, std::span<const RecordField<Record>> (*Rows)()>
constexpr RecordField<Record> group_field(std::string_view key) {
  RecordField<Record> row;
  row.key = key;
  row.group = Rows;
  row.write = [](const Record& record) {
    boost::json::object object;
    for (const auto& nested : Rows())
      if (nested.written == nullptr || nested.written(record)) object[nested.key] = nested.write(record);
    return boost::json::value(std::move(object));
  };
  row.read = [](const boost::json::object& object, std::string_view name, const std::string& where, Record& record) {
    if (const auto* nested = json_object_field(object, name, where))
      for (const auto& inner : Rows()) inner.read(*nested, inner.key, where + "." + std::string(inner.key), record);
  };
  return row;
}

// --- the record walks ---------------------------------------------------------------------------------

template <TabledRecord Record>
boost::json::object write_record(const Record& record) {
  boost::json::object object;
  for (const auto& row : record_fields<Record>())
    if (row.written == nullptr || row.written(record)) object[row.key] = row.write(record);
  return object;
}

// The rows marked required_key(), here, in groups and in arrays of records, must be present and not null, or
// JsonFieldError names the key (read_record alone reads an absent key as its default).
template <class Record>
void require_rows(std::span<const RecordField<Record>> rows, const boost::json::object& object,
                  const std::string& where) {
  for (const auto& row : rows) {
    const std::string key = where + std::string(row.key);
    const auto* value = object.if_contains(row.key);
    const bool present = value != nullptr && !value->is_null();
    if (row.required && !present) throw JsonFieldError{key};
    if (!present) continue;
    if (row.group != nullptr && value->is_object()) require_rows(row.group(), value->get_object(), key + ".");
    if (row.require_nested != nullptr) row.require_nested(*value, key);
  }
}

template <TabledRecord Record>
void require_record_keys(const boost::json::object& object, const std::string& where) {
  require_rows(record_fields<Record>(), object, where);
}

template <TabledRecord Record>
void read_record(const boost::json::object& object, const std::string& where, Record& record) {
  for (const auto& row : record_fields<Record>()) row.read(object, row.key, where + std::string(row.key), record);
}

// check_record_bounds' walk; a group's rows are named by their path ("collectives_left_out.share").
template <class Record>
void check_rows_bounds(std::span<const RecordField<Record>> rows, Record& record, FigureChecker& check,
                       std::string_view file, std::span<const std::string_view> only, std::string_view owner,
                       const std::string& prefix) {
  for (const auto& row : rows) {
    if (row.group != nullptr) {
      check_rows_bounds(row.group(), record, check, file, only, owner, prefix + std::string(row.key) + ".");
      continue;
    }
    if (row.bound == FigureBound::none || row.check == nullptr) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), row.key) == only.end()) continue;
    const std::string inputs = !file.empty()              ? std::string(file)
                               : row.inputs_of != nullptr ? row.inputs_of(record)
                                                          : std::string(row.inputs);
    const std::string key = prefix + std::string(row.key);
    const std::string figure = owner.empty() ? key : key + " of '" + std::string(owner) + "'";
    row.check(record, check, row.bound, figure, inputs);
  }
}

// Withholds each figure of `record` that breaks the bound of its row, with a warning (FigureChecker) naming what
// it came from: the row's inputs where the figure is made, or `file` ("analysis/report.json stages[2]") where it
// is read back. `only`: just the rows of these keys (inputs checked before the figures computed from them).
// `owner`: the record names the figure ("share of 'gemm'") inside its parent's warnings.
template <TabledRecord Record>
void check_record_bounds(Record& record, FigureChecker& check, std::string_view file = {},
                         std::span<const std::string_view> only = {}, std::string_view owner = {}) {
  check_rows_bounds(record_fields<Record>(), record, check, file, only, owner, "");
}

template <TabledRecord Record>
std::vector<Record> read_records(const boost::json::object& object, std::string_view key, const std::string& where) {
  std::vector<Record> records;
  read_field(object, key, where + std::string(key), records);
  return records;
}

// CSV: one column per row of the record's table that has a cell form, named by its key.
template <TabledRecord Record>
std::string csv_header() {
  std::string text;
  for (const auto& row : record_fields<Record>())
    if (row.csv != nullptr) text += (text.empty() ? "" : ",") + std::string(row.key);
  return text;
}

template <TabledRecord Record>
std::string csv_line(const Record& record) {
  std::string line;
  bool first = true;
  for (const auto& row : record_fields<Record>()) {
    if (row.csv == nullptr) continue;
    line += (first ? "" : ",") + row.csv(record);
    first = false;
  }
  return line;
}

template <TabledRecord Record>
std::string write_csv(const std::vector<Record>& records) {
  std::string text = csv_header<Record>() + "\n";
  for (const auto& record : records) text += csv_line(record) + "\n";
  return text;
}

}  // namespace llmprof::detail
