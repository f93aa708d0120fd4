// The invariants of derived figures (fractions in [0, 1], percentages in [0, 100], times and rates
// non-negative, everything finite). A figure that breaks one is withheld (reset to "not computed")
// and a warning names the figure, its value and the inputs it came from: a number that cannot be
// true is never printed. Used where figures are made (analysis) and where they are read back
// (report.json, which may come from elsewhere).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmprof::detail {

// The bound a figure keeps, named in the row of its record's field table (core/record_fields.hpp).
// gain: a speed-up, the time now over the time with a lever pulled, finite and > 1.
enum class FigureBound { none, fraction, percent, non_negative, gain };

class FigureChecker {
 public:
  // `subject` prefixes every warning, e.g. "stage 'decode'".
  FigureChecker(std::vector<std::string>& warnings, std::string subject)
      : warnings_(warnings), subject_(std::move(subject)) {}

  // [0, 1] (a share, a busy fraction, an MFU).
  void fraction(std::optional<double>& value, std::string_view figure, std::string_view inputs);
  // [0, 100]; a little above 100 is tolerated, as ncu's own percentages of peak can be.
  void percent(std::optional<double>& value, std::string_view figure, std::string_view inputs);
  // >= 0 and finite (times, bytes, FLOP, rates).
  void non_negative(std::optional<double>& value, std::string_view figure, std::string_view inputs);
  void non_negative(std::optional<std::int64_t>& value, std::string_view figure, std::string_view inputs);
  // > 1 and finite (a gain: a step now over the step with a lever pulled).
  void gain(std::optional<double>& value, std::string_view figure, std::string_view inputs);

  // `bound` applied to a member of a record: an optional is withheld (reset); a plain number, which must stay a
  // number (a share, a coverage), falls back to 0 with the same warning; a count or time takes non_negative.
  void apply(FigureBound bound, std::optional<double>& value, std::string_view figure, std::string_view inputs);
  void apply(FigureBound bound, double& value, std::string_view figure, std::string_view inputs);
  void apply(FigureBound bound, std::optional<std::int64_t>& value, std::string_view figure, std::string_view inputs);
  // A plain count or time (a step count): falls back to 0 with the warning, as a plain double does.
  void apply(FigureBound bound, std::int64_t& value, std::string_view figure, std::string_view inputs);

  bool any_withheld() const { return withheld_; }

 private:
  void withhold(std::string_view figure, double value, std::string_view rule, std::string_view inputs);

  std::vector<std::string>& warnings_;
  std::string subject_;
  bool withheld_ = false;
};

}  // namespace llmprof::detail
