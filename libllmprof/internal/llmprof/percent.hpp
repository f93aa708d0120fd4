// Percentages as the library and the CLI print them: the one percent formatter (defined in
// src/core/format.cpp; tests/cmake/lint.cmake fails the build on a second one).
#pragma once

#include <optional>
#include <string>

namespace llmprof {

// How many digits a percentage keeps: two or three. by_magnitude is the report's style: fewer decimals as
// the value grows ("0.92%", "4.0%", "37%"), and "< 0.1%" below a tenth of a percent (report.json keeps the
// full value). three_significant ("%.3g": "98.7%", "0.5%"; "< 0.1%" too) is for a figure
// read against a threshold, e.g. a kernel coverage of 98.7% against a 99% target, which by_magnitude
// would print as "99%". short_of_whole is by_magnitude, except that a fraction below 1 never reads
// "100%" (nor "100.0%"): digits are added until it does not ("99.95%"), for shares of a whole.
enum class PercentDigits { by_magnitude, three_significant, short_of_whole };
// A 0..1 fraction as a percentage; nullopt prints as "—" (not computed). The one percent formatter:
// every percentage the library and the CLI print goes through it.
std::string format_fraction_percent(const std::optional<double>& fraction,
                                    PercentDigits digits = PercentDigits::by_magnitude);

}  // namespace llmprof
