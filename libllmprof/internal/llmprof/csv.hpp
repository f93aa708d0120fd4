// Streaming CSV reader for the files Nsight tools write, and the number syntax they use.
//
// What the real files contain (Nsight Systems / Compute 2025.3): quoted fields holding commas and
// doubled quotes (demangled C++ names), newlines inside quotes, CRLF or LF line ends, and lines
// before the header that are not CSV at all (`==PROF==`, `==WARNING==`, the application's own
// output when ncu writes a --log-file). The reader keeps one record in memory at a time: fields
// are views into an internal buffer that the next call to next() reuses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct CsvReaderOptions {
  // Decides which leading line is the header. Lines are offered one at a time, split as CSV; every
  // line before the first accepted one is kept verbatim in preamble(). Empty: the first line.
  std::function<bool(std::span<const std::string_view> fields)> is_header;
  // Largest record accepted, so random bytes with an unbalanced quote cannot eat all memory.
  std::size_t max_record_bytes = std::size_t{256} << 20;
};

// An is_header predicate accepting the first line that holds every one of `names` as a field.
std::function<bool(std::span<const std::string_view>)> csv_header_with(std::vector<std::string> names);

class CsvReader {
 public:
  // Reads `in`, which must outlive the reader; `source_name` (usually the path) prefixes errors.
  CsvReader(std::istream& in, std::string source_name, CsvReaderOptions options = {});
  // Opens `path`; Error(not_found / io_error) when it cannot be read.
  static Result<CsvReader> open(const std::filesystem::path& path, CsvReaderOptions options = {});

  CsvReader(CsvReader&&) noexcept;
  CsvReader& operator=(CsvReader&&) noexcept;
  ~CsvReader();

  // Finds the header (skipping preamble lines). Error when the input ends first: the message
  // quotes ncu's own ==ERROR== line when the preamble holds one, and says when the input is empty.
  Result<void> read_header();
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::string>& preamble() const { return preamble_; }
  std::optional<std::size_t> column(std::string_view name) const;

  // Advances to the next record: true when there is one, false at end of input. read_header()
  // must have succeeded. Blank lines are skipped. Error on an unterminated quoted field.
  Result<bool> next();
  // The current record's fields; valid until the next call to next().
  std::span<const std::string_view> fields() const { return {fields_.data(), fields_.size()}; }
  // 1-based line on which the current record (or the header, before the first next()) starts.
  std::size_t line_number() const { return record_line_; }
  // True when the last record read ended with a line break (false for a cut-off final line).
  bool record_terminated() const { return record_terminated_; }
  const std::string& source_name() const { return source_name_; }

  // A parse_error whose message reads "<source>:<line>: <what>".
  Error error_here(const std::string& what, std::string hint = {}) const;

 private:
  Result<bool> read_record(bool physical_line_only);
  bool fill();
  void split_fields(char* begin, char* end);

  std::unique_ptr<std::istream> owned_stream_;
  std::istream* in_ = nullptr;
  std::string source_name_;
  CsvReaderOptions options_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // start of unconsumed bytes in buffer_
  std::size_t end_ = 0;    // end of valid bytes in buffer_
  bool eof_ = false;
  std::size_t next_line_ = 1;
  std::size_t record_line_ = 0;
  bool record_terminated_ = true;
  bool header_read_ = false;
  std::string raw_line_;  // the current record's raw text, kept only while searching the header
  std::vector<std::string_view> fields_;
  std::vector<std::string> header_;
  std::vector<std::string> preamble_;
};

// A number as Nsight prints it: optional sign, digits with ',' thousands separators
// ("16,896", "1,712,814,376,811,594.25"), a fraction, an exponent. Surrounding spaces are ignored.
// Returns nullopt for a missing value ("", "n/a", "N/A", "-", "nan", "NaN" alone; surrounding spaces
// ignored); Error for anything else that
// is not a number (the Error's subject is the text).
Result<std::optional<double>> parse_csv_number(std::string_view text);
// The same for integers, exactly (times in ns do not fit a double's 53 bits in long runs). Accepts
// "1,234" and "1234.0" but not "1234.5".
Result<std::optional<std::int64_t>> parse_csv_integer(std::string_view text);

namespace detail {
enum class NumberParse { ok, missing, invalid };
// Allocation-free forms for hot loops.
NumberParse parse_number(std::string_view text, double& value);
NumberParse parse_integer(std::string_view text, std::int64_t& value);
}  // namespace detail

}  // namespace llmprof
