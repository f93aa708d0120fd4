// Formatting helpers for the human-readable outputs (see format.hpp).
#include "core/format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <sstream>
#include <vector>

namespace llmprof::detail {
namespace {

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// Keep `digits` significant digits without scientific notation for values >= 1e-3.
std::string significant(double value, int digits) {
  if (value == 0) return "0";
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  int decimals = digits - 1 - static_cast<int>(magnitude);
  if (decimals < 0) decimals = 0;
  if (decimals > 6) decimals = 6;
  char format[16];
  std::snprintf(format, sizeof format, "%%.%df", decimals);
  std::string text = printf_string(format, value);
  return text == "-0" ? "0" : text;
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else if (c == '<' || c == '>' || c == '&')  // Markdown renderers pass HTML through: escape it as HTML does
      out += html_escape(std::string_view(&c, 1));
    else
      out += c;
  }
  return out;
}

std::string markdown_code(std::string_view text) {
  std::string out = "`";
  for (char c : text) {
    if (c == '`')
      out += '\'';
    else if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out + "`";
}

std::string format_seconds(double seconds) {
  // Whole seconds past 999 s: "1800 s", not "1.8e+03 s" (a pass's bound, ncu.timeout_s).
  if (std::fabs(seconds) >= 999.5) return printf_string("%.0f s", seconds);
  std::ostringstream text;
  text.precision(seconds < 10 ? 2 : 3);
  text << seconds << " s";
  return text.str();
}

std::string format_duration_ns(double nanoseconds) {
  const double magnitude = std::fabs(nanoseconds);
  if (magnitude >= 1e9) return significant(nanoseconds / 1e9, 3) + " s";
  if (magnitude >= 1e6) return significant(nanoseconds / 1e6, 3) + " ms";
  if (magnitude >= 1e3) return significant(nanoseconds / 1e3, 3) + " µs";
  return significant(nanoseconds, 3) + " ns";
}

std::string format_duration_ns(const std::optional<std::int64_t>& nanoseconds) {
  return nanoseconds ? format_duration_ns(static_cast<double>(*nanoseconds)) : kNotComputed;
}

std::string format_percent(const std::optional<double>& percent) {
  if (!percent) return kNotComputed;
  const double value = *percent;
  if (value == 0) return "0%";
  // Below a tenth of a percent the digits only say "small": "0.00086%" beside "40%" reads as precision.
  if (std::fabs(value) < 0.1) return value > 0 ? "< 0.1%" : "> -0.1%";
  if (std::fabs(value) < 1) return printf_string("%.2f%%", value);
  if (std::fabs(value) < 10) return printf_string("%.1f%%", value);
  return printf_string("%.0f%%", value);
}

std::string format_si(const std::optional<double>& value, std::string_view unit) {
  if (!value) return kNotComputed;
  static const struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  const double magnitude = std::fabs(*value);
  for (const auto& prefix : kPrefixes) {
    if (magnitude >= prefix.scale)
      return significant(*value / prefix.scale, 3) + " " + prefix.prefix + std::string(unit);
  }
  return significant(*value, 3) + " " + std::string(unit);
}

std::string format_count(const std::optional<std::int64_t>& value) {
  if (!value) return kNotComputed;
  std::string digits = std::to_string(*value < 0 ? -*value : *value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return *value < 0 ? "-" + out : out;
}

std::string format_signed_percent(double percent) {
  if (std::fabs(percent) < 0.005) return "0.0%";
  if (std::fabs(percent) < 0.1) return percent > 0 ? "< +0.1%" : "> -0.1%";
  return (percent < 0 ? "-" : "+") + format_percent(std::fabs(percent));
}

std::string format_factor(double factor) {
  // Near 1 the second decimal is the whole gain ("1.02x", not "1x"); zeros stay, as in measured values ("8.0x").
  return significant(factor, factor < 2 || factor >= 10 ? 3 : 2) + "x";
}

std::string normalise_percentages(std::string_view text) {
  std::string out;
  std::size_t copied = 0;
  for (std::size_t at = text.find('%'); at != std::string_view::npos; at = text.find('%', at + 1)) {
    std::size_t start = at;
    while (start > copied && (std::isdigit(static_cast<unsigned char>(text[start - 1])) != 0 || text[start - 1] == '.'))
      --start;
    if (start == at || (start > 0 && (std::isalnum(static_cast<unsigned char>(text[start - 1])) != 0 ||
                                      text[start - 1] == '-' || text[start - 1] == '+'))) {
      continue;
    }
    const std::string number(text.substr(start, at - start));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || value == 0 || value >= 0.1) continue;
    out.append(text.substr(copied, start - copied));
    out += "< 0.1";
    copied = at;
  }
  out.append(text.substr(copied));
  return out;
}

std::string kernel_display_name(std::string_view name, std::size_t max_length) {
  // Keep only characters outside every <...> and (...) so templates and parameter lists vanish,
  // which also removes "<unnamed>" and "(anonymous namespace)" scope names.
  std::string flat;
  struct Bracket {
    char open, close;
    int depth;
  };
  std::array<Bracket, 3> brackets{{{'<', '>', 0}, {'(', ')', 0}, {'[', ']', 0}}};
  for (char c : name) {
    // A closer without its opener (operator>, a stray ')') stays in the name.
    const auto bracket = std::find_if(brackets.begin(), brackets.end(),
                                      [c](const Bracket& b) { return c == b.open || (c == b.close && b.depth > 0); });
    if (bracket != brackets.end()) {
      bracket->depth += c == bracket->open ? 1 : -1;
      continue;
    }
    if (std::all_of(brackets.begin(), brackets.end(), [](const Bracket& b) { return b.depth == 0; })) flat += c;
  }
  // The return type ("void ") is everything before the last space.
  if (const auto space = flat.find_last_of(' '); space != std::string::npos) flat = flat.substr(space + 1);
  std::string collapsed;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if (flat.compare(i, 4, "::::") == 0) {
      collapsed += "::";
      i += 3;
      continue;
    }
    collapsed += flat[i];
  }
  while (collapsed.rfind("::", 0) == 0) collapsed.erase(0, 2);
  if (collapsed.empty()) collapsed = std::string(name.substr(0, max_length));
  if (collapsed.size() > max_length && max_length > 1) {
    collapsed = collapsed.substr(0, max_length - 1) + "…";
  }
  return collapsed;
}

}  // namespace llmprof::detail

namespace llmprof {

std::string format_fraction_percent(const std::optional<double>& fraction, PercentDigits digits) {
  if (!fraction) return detail::kNotComputed;
  const bool tiny = *fraction != 0 && std::fabs(*fraction) < 0.001;
  if (digits == PercentDigits::three_significant && !tiny)
    return detail::printf_string("%.3g%%", *fraction * 100);
  std::string text = detail::format_percent(*fraction * 100);
  if (digits == PercentDigits::short_of_whole) {
    // Small shares read "< 0.1%"; only a near-whole one rounds up.
    for (int decimals = 1; decimals <= 4 && *fraction < 1 && text.rfind("100", 0) == 0; ++decimals) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.*f%%", decimals, *fraction * 100);
      text = buffer;
    }
  }
  return text;
}

}  // namespace llmprof
