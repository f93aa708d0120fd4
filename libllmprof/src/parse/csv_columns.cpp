// Column lookup by name and typed cell access with file:line:column errors.
#include "parse/csv_columns.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace llmprof::detail {

std::function<bool(std::span<const std::string_view>)> csv_header_with_most_of(std::vector<std::string> names) {
  return [names = std::move(names)](std::span<const std::string_view> fields) {
    const auto present = std::count_if(names.begin(), names.end(), [&](const std::string& name) {
      return std::find(fields.begin(), fields.end(), std::string_view(name)) != fields.end();
    });
    return present > 0 && static_cast<std::size_t>(present) * 2 >= names.size();
  };
}

Result<std::vector<std::size_t>> require_columns(const CsvReader& reader, const std::vector<std::string>& names) {
  std::vector<std::size_t> indices;
  indices.reserve(names.size());
  for (const auto& name : names) {
    const auto index = reader.column(name);
    if (!index) {
      const std::string columns = detail::join(reader.header(), ", ");
      return make_error(
          ErrorCode::parse_error,
          reader.source_name() + ": required column '" + name + "' is missing from the header (" + columns + ")",
          "the file was written by a different tool version or report than expected", name);
    }
    indices.push_back(*index);
  }
  return indices;
}

bool CsvRow::check_width(std::size_t needed) {
  const auto width = reader_.fields().size();
  if (width >= needed) return true;
  if (!error_)
    error_ = reader_.error_here("truncated row: " + std::to_string(width) + " fields where " + std::to_string(needed) +
                                    " are needed (the header has " + std::to_string(reader_.header().size()) + ")",
                                "the file was probably cut off while being written; re-export it");
  return false;
}

Result<std::optional<CsvRow>> next_row(CsvReader& reader, std::size_t width) {
  auto more = reader.next();
  if (!more) return more.error();
  if (!*more) return std::optional<CsvRow>();
  CsvRow row(reader);
  if (!row.check_width(width)) return *row.error();
  return std::optional<CsvRow>(std::move(row));
}

std::string_view CsvRow::text(std::size_t column) const {
  const auto fields = reader_.fields();
  return column < fields.size() ? fields[column] : std::string_view();
}

void CsvRow::fail(std::size_t column, const std::string& what) {
  if (error_) return;
  const std::string name = column < reader_.header().size() ? reader_.header()[column] : "?";
  std::string value(text(column).substr(0, 80));
  error_ = reader_.error_here("column '" + name + "': " + what + " ('" + value + "')");
}

namespace {

// One cell through `parse` (parse_integer or parse_number): its value, or nullopt with the row's error set when the
// cell is not `kind` ("an integer"), and when it is empty unless the column may be empty (`required` false).
template <class Value>
std::optional<Value> parse_cell(CsvRow& row, std::size_t column, NumberParse (*parse)(std::string_view, Value&),
                                const std::string& kind, bool required) {
  Value value{};
  switch (parse(row.text(column), value)) {
    case NumberParse::ok:
      return value;
    case NumberParse::missing:
      if (required) row.refuse(column, "missing value where " + kind + " is required");
      return std::nullopt;
    case NumberParse::invalid:
      row.refuse(column, "not " + kind);
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::int64_t CsvRow::integer(std::size_t column) {
  return parse_cell(*this, column, parse_integer, "an integer", true).value_or(0);
}

double CsvRow::number(std::size_t column) {
  return parse_cell(*this, column, parse_number, "a number", true).value_or(0);
}

std::optional<double> CsvRow::optional_number(std::size_t column) {
  return parse_cell(*this, column, parse_number, "a number", false);
}

}  // namespace llmprof::detail
