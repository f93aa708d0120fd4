// Private helpers for parsers built on CsvReader: columns looked up by header name, and typed
// access to one record's cells that remembers the first bad cell as an Error naming file, line
// and column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/csv.hpp"

namespace llmprof::detail {

// A header predicate for reports whose header holds `names`: accepts a line holding at least half
// of them, so that a header missing one column is still recognised and the error can name it.
std::function<bool(std::span<const std::string_view>)> csv_header_with_most_of(std::vector<std::string> names);

// Index of each of `names` in the reader's header; Error naming the file and the first missing one.
Result<std::vector<std::size_t>> require_columns(const CsvReader& reader, const std::vector<std::string>& names);

class CsvRow {
 public:
  explicit CsvRow(const CsvReader& reader) : reader_(reader) {}

  // Error when the current record has fewer fields than `needed` (a truncated row).
  bool check_width(std::size_t needed);
  std::string_view text(std::size_t column) const;
  std::int64_t integer(std::size_t column);                   // 0 and error() set when not an integer or missing
  double number(std::size_t column);                          // 0 and error() set when not a number or missing
  std::optional<double> optional_number(std::size_t column);  // nullopt for "", "n/a"

  const std::optional<Error>& error() const { return error_; }
  // Records that a cell holds a value the table cannot have (a plausibility check failed), as an
  // Error naming file, line, column and value; the first error of a row is kept.
  void refuse(std::size_t column, const std::string& why) { fail(column, why); }

 private:
  void fail(std::size_t column, const std::string& what);
  const CsvReader& reader_;
  std::optional<Error> error_;
};

// The next record of `reader` as a row: nullopt at the end of the file; an Error when the file cannot be read on or
// the record has fewer than `width` fields (check_width: a file cut off while being written).
Result<std::optional<CsvRow>> next_row(CsvReader& reader, std::size_t width);

}  // namespace llmprof::detail
