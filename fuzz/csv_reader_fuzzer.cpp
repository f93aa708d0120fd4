// CsvReader over arbitrary bytes, and every field through parse_csv_number / parse_csv_integer.
//
// Invariants: no crash / leak / UB; errors name the input; fields() never outlives the record;
// a text accepted as an integer is accepted as a number with the same value (within rounding).
#include <cmath>
#include <string>

#include "fuzz_support.hpp"
#include "llmprof/csv.hpp"

namespace {

using llmprof::fuzz::as_stream;

void check_numbers(std::string_view field) {
  const auto number = llmprof::parse_csv_number(field);
  const auto integer = llmprof::parse_csv_integer(field);
  if (!number) LLMPROF_FUZZ_CHECK(number.error().subject == field, "number error keeps the text as subject");
  if (!integer) LLMPROF_FUZZ_CHECK(integer.error().subject == field, "integer error keeps the text as subject");
  if (!integer || !*integer) return;
  LLMPROF_FUZZ_CHECK(number.has_value() && number->has_value(),
                     "integer '" + std::string(field) + "' rejected as a number");
  const double exact = static_cast<double>(**integer);
  const double parsed = **number;
  LLMPROF_FUZZ_CHECK(
      std::fabs(parsed - exact) <= 1e-12 * std::fabs(exact),
      "'" + std::string(field) + "': integer " + std::to_string(**integer) + " vs number " + std::to_string(parsed));
}

void read_all(std::istringstream& in, llmprof::CsvReaderOptions options) {
  llmprof::CsvReader reader(in, llmprof::fuzz::kSourceName, std::move(options));
  auto header = reader.read_header();
  LLMPROF_FUZZ_CHECK_ERROR(header);
  if (!header) return;
  for (const auto& name : reader.header()) LLMPROF_FUZZ_CHECK(reader.column(name).has_value(), name);
  std::size_t previous_line = reader.line_number();
  for (;;) {
    auto more = reader.next();
    LLMPROF_FUZZ_CHECK_ERROR(more);
    if (!more || !*more) return;
    LLMPROF_FUZZ_CHECK(reader.line_number() > previous_line, "line numbers increase");
    previous_line = reader.line_number();
    for (const auto field : reader.fields()) check_numbers(field);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    auto in = as_stream(data, size);
    read_all(in, {});  // header = first non-blank line
  }
  {
    // ncu-style header search, and a small record limit so the over-long-record path runs too.
    auto in = as_stream(data, size);
    llmprof::CsvReaderOptions options;
    options.is_header = llmprof::csv_header_with({"ID"});
    options.max_record_bytes = 512;
    read_all(in, std::move(options));
  }
  return 0;
}
