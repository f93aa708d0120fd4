// Numbers as Nsight prints them in its CSV cells: thousands separators, missing-value markers, an
// exact fast path for the plain decimals that make up most of a raw page, integers without a double.
#include <charconv>
#include <cstdint>

#include "core/text.hpp"
#include "llmprof/csv.hpp"

namespace llmprof {
namespace {

using detail::printable_excerpt;
using detail::trim;

bool is_missing_marker(std::string_view text) {
  return text.empty() || text == "n/a" || text == "N/A" || text == "-" || text == "nan" || text == "NaN";
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Copies `text` without its thousands separators into `out`; false when a ',' is not between a
// digit and a group of exactly three digits, or the text is too long for the buffer.
bool strip_thousands_separators(std::string_view text, char* out, std::size_t capacity, std::size_t& length) {
  length = 0;
  bool in_integer_part = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      const bool grouped = in_integer_part && i > 0 && is_digit(text[i - 1]) && i + 3 < text.size() &&
                           is_digit(text[i + 1]) && is_digit(text[i + 2]) && is_digit(text[i + 3]) &&
                           (i + 4 == text.size() || !is_digit(text[i + 4]));
      if (!grouped) return false;
      continue;
    }
    if (c == '.' || c == 'e' || c == 'E') in_integer_part = false;
    if (length + 1 >= capacity) return false;
    out[length++] = c;
  }
  return true;
}

// Fast path for the bulk of Nsight's cells: [-]digits[,ddd...][.digits] with at most 15
// significant digits. Exact: the digits fit a double's 53-bit mantissa and 10^k (k <= 15) is exact,
// so one IEEE division rounds correctly, as from_chars would (Clinger's fast path). Anything else
// (spaces, '+', exponents, missing markers, long numbers) returns false for the general path.
bool parse_plain_decimal(std::string_view text, double& value) {
  static constexpr double kPowersOfTen[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  if (p == end || !is_digit(*p)) return false;
  std::uint64_t mantissa = 0;
  int digits = 0;
  std::size_t group_digits = 0;
  bool grouped = false;
  for (; p < end; ++p) {
    if (is_digit(*p)) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
      ++digits;
      ++group_digits;
    } else if (*p == ',') {
      // A separator follows 1-3 digits first, exactly 3 afterwards.
      if (grouped ? group_digits != 3 : (group_digits == 0 || group_digits > 3)) return false;
      grouped = true;
      group_digits = 0;
    } else {
      break;
    }
    if (digits > 15) return false;
  }
  if (grouped && group_digits != 3) return false;
  int fraction_digits = 0;
  if (p < end && *p == '.') {
    for (++p; p < end && is_digit(*p); ++p) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(*p - '0');
      if (++digits > 15) return false;
      ++fraction_digits;
    }
  }
  if (p != end) return false;
  value = static_cast<double>(mantissa) / kPowersOfTen[fraction_digits];
  if (negative && mantissa != 0) value = -value;
  return true;
}

}  // namespace

namespace detail {

NumberParse parse_number(std::string_view text, double& value) {
  if (parse_plain_decimal(text, value)) return NumberParse::ok;
  text = trim(text);
  if (is_missing_marker(text)) return NumberParse::missing;
  // Fast path: plain or grouped integers, the bulk of ncu's cells.
  std::int64_t integer = 0;
  if (text.size() <= 24 && parse_integer(text, integer) == NumberParse::ok &&
      text.find_first_of(".eE") == std::string_view::npos) {
    value = static_cast<double>(integer);
    return NumberParse::ok;
  }
  char stack_digits[96];
  std::string heap_digits;  // only for texts longer than the stack buffer, e.g. zero-padded numbers
  char* digits = stack_digits;
  std::size_t capacity = sizeof stack_digits;
  if (text.size() >= capacity) {
    heap_digits.resize(text.size() + 1);
    digits = heap_digits.data();
    capacity = heap_digits.size();
  }
  std::size_t length = 0;
  if (!strip_thousands_separators(text, digits, capacity, length) || length == 0) return NumberParse::invalid;
  const char* first = digits;
  const char* last = digits + length;
  if (*first == '+') ++first;  // from_chars rejects an explicit '+'
  if (first == last || (!is_digit(*first) && *first != '-' && *first != '.' && *first != 'i' && *first != 'I'))
    return NumberParse::invalid;
  const auto [end, error] = std::from_chars(first, last, value);
  if (error != std::errc() || end != last) return NumberParse::invalid;
  return NumberParse::ok;
}

NumberParse parse_integer(std::string_view text, std::int64_t& value) {
  text = trim(text);
  if (is_missing_marker(text)) return NumberParse::missing;
  bool negative = false;
  std::size_t i = 0;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    i = 1;
  }
  if (i == text.size() || !is_digit(text[i])) return NumberParse::invalid;
  std::uint64_t magnitude = 0;
  std::size_t group_digits = 0;
  bool grouped = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      // A separator follows 1-3 digits first, exactly 3 afterwards.
      if ((grouped ? group_digits != 3 : (group_digits == 0 || group_digits > 3))) return NumberParse::invalid;
      grouped = true;
      group_digits = 0;
      continue;
    }
    if (!is_digit(c)) break;
    if (magnitude > (std::uint64_t{1} << 63) / 10) return NumberParse::invalid;
    magnitude = magnitude * 10 + static_cast<std::uint64_t>(c - '0');
    ++group_digits;
  }
  if (grouped && group_digits != 3) return NumberParse::invalid;
  if (i < text.size()) {
    // "1234.0" is an integer as nsys prints some counts; any other fraction is not.
    if (text[i] != '.') return NumberParse::invalid;
    for (++i; i < text.size(); ++i)
      if (text[i] != '0') return NumberParse::invalid;
  }
  const std::uint64_t limit = negative ? (std::uint64_t{1} << 63) : (std::uint64_t{1} << 63) - 1;
  if (magnitude > limit) return NumberParse::invalid;
  value = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  return NumberParse::ok;
}

}  // namespace detail

Result<std::optional<double>> parse_csv_number(std::string_view text) {
  double value = 0;
  switch (detail::parse_number(text, value)) {
    case detail::NumberParse::ok:
      return std::optional<double>(value);
    case detail::NumberParse::missing:
      return std::optional<double>();
    case detail::NumberParse::invalid:
      break;
  }
  return make_error(ErrorCode::parse_error, "'" + printable_excerpt(text) + "' is not a number", {}, std::string(text));
}

Result<std::optional<std::int64_t>> parse_csv_integer(std::string_view text) {
  std::int64_t value = 0;
  switch (detail::parse_integer(text, value)) {
    case detail::NumberParse::ok:
      return std::optional<std::int64_t>(value);
    case detail::NumberParse::missing:
      return std::optional<std::int64_t>();
    case detail::NumberParse::invalid:
      break;
  }
  return make_error(ErrorCode::parse_error, "'" + printable_excerpt(text) + "' is not an integer", {},
                    std::string(text));
}

}  // namespace llmprof
