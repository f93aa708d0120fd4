// Text formatting shared by the report, comparison and sweep renderers: units, escaping, kernel names.
// Every function is deterministic (fixed precision, no locale) so golden files stay stable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/text.hpp"  // format_number, with the other number formats
#include "llmprof/percent.hpp"

namespace llmprof::detail {

// Shown wherever a value is null in report.json ("not computed"); the reports explain it once.
inline constexpr const char* kNotComputed = "—";

// A count or a time in ns as the optional double the cells and deltas take; nullopt stays nullopt.
inline std::optional<double> as_double(const std::optional<std::int64_t>& value) {
  return value ? std::optional<double>(static_cast<double>(*value)) : std::nullopt;
}

std::string html_escape(std::string_view text);
// A Markdown table cell: pipes escaped, newlines folded, '<' '>' '&' as entities (GitHub would read HTML).
std::string markdown_cell(std::string_view text);
// A Markdown code span safe inside a table cell (backticks replaced, pipes escaped).
std::string markdown_code(std::string_view text);

// 3 significant digits with a unit: "177 ms", "5.03 µs", "1.28 s", "812 ns".
std::string format_duration_ns(double nanoseconds);
std::string format_duration_ns(const std::optional<std::int64_t>& nanoseconds);
// Seconds for progress lines and plan estimates: 2 significant digits under 10 s, else 3 ("4.2 s", "67 s").
std::string format_seconds(double seconds);
// format_fraction_percent and PercentDigits: llmprof/percent.hpp (public: the CLI prints percentages too).
using llmprof::format_fraction_percent;
using llmprof::PercentDigits;
// A percentage (0..100) already: "61%", "3.4%".
std::string format_percent(const std::optional<double>& percent);
// SI prefix with 3 significant digits: format_si(8.56e14, "FLOP/s") == "856 TFLOP/s".
std::string format_si(const std::optional<double>& value, std::string_view unit);
// "1,234,567".
std::string format_count(const std::optional<std::int64_t>& value);
// Signed ratio text for deltas: "+12.3%", "-4.0%"; "0.0%" below 0.005, "< +0.1%" / "> -0.1%" below 0.1.
std::string format_signed_percent(double percent);
// A speed-up or ratio: three significant digits below 2 and from 10, two between ("1.02x", "3.8x", "8.0x",
// "14.2x").
std::string format_factor(double factor);
// Percentages already written into a sentence (report.json's verdicts, from an analysis older than the
// "< 0.1%" rule) brought to that rule: "0.00086% while it waited" -> "< 0.1% while it waited". Other
// percentages and text are left as they are.
std::string normalise_percentages(std::string_view text);

// "void ns::kernel<T, 4>(int, T*)" -> "ns::kernel": return type, template arguments and parameters
// stripped, "<unnamed>"/"(anonymous namespace)" scopes dropped; truncated with an ellipsis.
std::string kernel_display_name(std::string_view name, std::size_t max_length);

}  // namespace llmprof::detail
