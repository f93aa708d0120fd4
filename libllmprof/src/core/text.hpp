// Text helpers every layer uses: trimming, joining, splitting, typo distance and number formatting.
// One home for each, so that two parsers never disagree about what "whitespace" or "a number" is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::detail {

// ASCII whitespace, the C locale's isspace() set. Everything we trim is tool output, CSV cells,
// config overrides or files we wrote; in none of them does a leading or trailing space, tab, CR, LF,
// vertical tab or form feed carry meaning (a CR is what a CRLF file leaves behind). Bytes >= 0x80 are
// never whitespace here, so UTF-8 text is not touched and the result does not depend on the locale.
inline constexpr std::string_view kWhitespace = " \t\n\v\f\r";

// `text` without leading and trailing kWhitespace. A view into `text`: copy it when it must outlive it.
// Inline because the CSV number parser calls it once a cell.
inline std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kWhitespace) - first + 1);
}

// True when `text` holds nothing but kWhitespace (or nothing at all).
inline bool is_blank(std::string_view text) { return text.find_first_not_of(kWhitespace) == std::string_view::npos; }

// The items (strings or string views, any container) with `separator` between them: "a, b". With
// `max_items`, at most that many, then "<separator>... (N more)", for messages about long lists.
template <typename Strings>
std::string join(const Strings& items, std::string_view separator, std::size_t max_items = std::string::npos) {
  std::string joined;
  std::size_t count = 0;
  for (const auto& item : items) {
    if (count == max_items) {
      joined += separator;
      joined += "... (" + std::to_string(std::size(items) - max_items) + " more)";
      break;
    }
    if (count++ > 0) joined += separator;
    joined += item;
  }
  return joined;
}

// Every field between `separator`s, empty ones included: split("a,,b", ',') == {"a", "", "b"};
// split("", ',') == {""}.
std::vector<std::string> split(std::string_view text, char separator);
// The lines of `text` as a terminal shows them: a line ends at "\n", "\r\n" (CRLF output) or a lone
// "\r" (a progress bar redrawn in place); no empty last line for text that ends with a line end.
// split_lines("a\r\nb\rc\n") == {"a", "b", "c"}.
std::vector<std::string> split_lines(std::string_view text);

// At most `limit` bytes of `text` for an error message, every byte outside printable ASCII shown as
// '?' and "..." when cut: random or binary input quoted back cannot garble a terminal.
std::string printable_excerpt(std::string_view text, std::size_t limit = 120);

// Levenshtein distance (insertions, deletions, substitutions of bytes), for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b);

// A number for people: up to `significant_digits` significant digits, no exponent for everyday
// magnitudes, trailing zeros dropped ("5", "1.2", "0.0123"). Used in reports and messages.
std::string format_number(double value, int significant_digits = 3);
// The shortest text that reads back to exactly `value`, whole numbers without a fraction ("3",
// "2.5", "1e+20", "nan", "inf"): for messages that quote a configured value back to the user.
std::string format_exact_number(double value);
// Ten significant digits, with an exponent where printf's %g uses one ("0.125", "1.234567891e+15"):
// the numeric cells of the CSV files we write for other programs to read.
std::string format_data_number(double value);
// One cell of the CSV files we write (RFC 4180): as is, or quoted with its quotes doubled when it holds a comma,
// a quote or a line break.
std::string csv_cell(const std::string& text);

}  // namespace llmprof::detail
