// The descriptor of one row of a record's field table (RecordField), and the table a record specialises
// (RecordTable). The rows are made by field<>() and friends and walked by write_record / read_record /
// check_record_bounds / write_csv, all in core/record_fields.hpp, which is the header to include; this one holds
// only the types, so the per-value conversions (core/record_values.hpp) can name them.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/figure_checks.hpp"

namespace llmprof::detail {

template <class Record>
struct RecordField {
  std::string_view key;
  boost::json::value (*write)(const Record&) = nullptr;
  void (*read)(const boost::json::object&, std::string_view key, const std::string& where, Record&) = nullptr;
  std::string (*csv)(const Record&) = nullptr;  // nullptr: the member has no single-cell form (a nested record)
  // The figure's bound, and what it is computed from for the warning when a value breaks it: fixed text, or text
  // made from the record (inputs_of). check: nullptr for a member that is no number.
  FigureBound bound = FigureBound::none;
  std::string_view inputs;
  std::string (*inputs_of)(const Record&) = nullptr;
  void (*check)(Record&, FigureChecker&, FigureBound, std::string_view figure, std::string_view inputs) = nullptr;
  bool required = false;  // the file must hold the key (require_record_keys)
  // Written only when this holds (nullptr: always): a key of one variant of a record (a coverage rule's target).
  bool (*written)(const Record&) = nullptr;
  // A nested object of rows over this same record (group_field); the required keys of each record of an array.
  std::span<const RecordField> (*group)() = nullptr;
  void (*require_nested)(const boost::json::value&, const std::string& where) = nullptr;

  constexpr RecordField required_key() const { return with(&RecordField::required, true); }
  constexpr RecordField written_when(bool (*when)(const Record&)) const { return with(&RecordField::written, when); }
  template <class Member, class Value>
  constexpr RecordField with(Member RecordField::*member, Value value) const {
    RecordField row = *this;
    row.*member = value;
    return row;
  }

  constexpr RecordField within(FigureBound figure_bound, std::string_view from) const {
    RecordField row = *this;
    row.bound = figure_bound;
    row.inputs = from;
    return row;
  }
  constexpr RecordField within(FigureBound figure_bound, std::string (*from)(const Record&)) const {
    RecordField row = *this;
    row.bound = figure_bound;
    row.inputs_of = from;
    return row;
  }
};

// Specialised once per record, in the file that owns its JSON form.
template <class Record>
struct RecordTable;

template <class Record>
concept TabledRecord = requires { RecordTable<Record>::fields; };

template <class Record>
std::span<const RecordField<Record>> record_fields() {
  return RecordTable<Record>::fields;
}

template <TabledRecord Record>
boost::json::object write_record(const Record& record);
template <TabledRecord Record>
void read_record(const boost::json::object& object, const std::string& where, Record& record);

template <TabledRecord Record>
void require_record_keys(const boost::json::object& object, const std::string& where);
template <class Value>
concept RecordVector = std::is_same_v<Value, std::vector<typename Value::value_type>> &&
                       TabledRecord<typename Value::value_type>;

}  // namespace llmprof::detail
