// FigureChecker: withholding derived figures that cannot be true (see figure_checks.hpp).
#include "core/figure_checks.hpp"

#include <cmath>

#include "core/format.hpp"

namespace llmprof::detail {
namespace {

// ncu's pct_of_peak metrics exceed 100 by a hair at times (counter sampling); beyond this slack the
// figure is wrong, not noisy.
constexpr double kPercentSlack = 1.0;
// Fractions computed from rounded integer nanoseconds may exceed 1 by rounding only.
constexpr double kFractionSlack = 1e-9;

}  // namespace

void FigureChecker::withhold(std::string_view figure, double value, std::string_view rule, std::string_view inputs) {
  withheld_ = true;
  warnings_.push_back(subject_ + ": " + std::string(figure) + " = " + format_number(value) + " cannot be true (" +
                      std::string(rule) + "); withheld. It came from " + std::string(inputs) +
                      ": check that input (a unit, a table from another capture, a hand-edited file)");
}

void FigureChecker::fraction(std::optional<double>& value, std::string_view figure, std::string_view inputs) {
  if (!value) return;
  if (!std::isfinite(*value) || *value < 0 || *value > 1 + kFractionSlack) {
    withhold(figure, *value, "a fraction lies in [0, 1]", inputs);
    value.reset();
  }
}

void FigureChecker::percent(std::optional<double>& value, std::string_view figure, std::string_view inputs) {
  if (!value) return;
  if (!std::isfinite(*value) || *value < 0 || *value > 100 + kPercentSlack) {
    withhold(figure, *value, "a percentage of peak lies in [0, 100]", inputs);
    value.reset();
  }
}

void FigureChecker::non_negative(std::optional<double>& value, std::string_view figure, std::string_view inputs) {
  if (!value) return;
  if (!std::isfinite(*value) || *value < 0) {
    withhold(figure, *value, "it is a finite amount >= 0", inputs);
    value.reset();
  }
}

void FigureChecker::non_negative(std::optional<std::int64_t>& value, std::string_view figure, std::string_view inputs) {
  if (!value || *value >= 0) return;
  withhold(figure, static_cast<double>(*value), "it is a time or count >= 0", inputs);
  value.reset();
}

void FigureChecker::gain(std::optional<double>& value, std::string_view figure, std::string_view inputs) {
  if (!value) return;
  if (!std::isfinite(*value) || *value <= 1) {
    withhold(figure, *value, "a gain is the step now over a shorter step: finite and > 1", inputs);
    value.reset();
  }
}

void FigureChecker::apply(FigureBound bound, std::optional<double>& value, std::string_view figure,
                          std::string_view inputs) {
  switch (bound) {
    case FigureBound::none:
      return;
    case FigureBound::fraction:
      return fraction(value, figure, inputs);
    case FigureBound::percent:
      return percent(value, figure, inputs);
    case FigureBound::non_negative:
      return non_negative(value, figure, inputs);
    case FigureBound::gain:
      return gain(value, figure, inputs);
  }
}

void FigureChecker::apply(FigureBound bound, double& value, std::string_view figure, std::string_view inputs) {
  std::optional<double> checked = value;
  apply(bound, checked, figure, inputs);
  value = checked.value_or(0);
}

void FigureChecker::apply(FigureBound bound, std::optional<std::int64_t>& value, std::string_view figure,
                          std::string_view inputs) {
  if (bound != FigureBound::none) non_negative(value, figure, inputs);
}

void FigureChecker::apply(FigureBound bound, std::int64_t& value, std::string_view figure, std::string_view inputs) {
  std::optional<std::int64_t> checked = value;
  apply(bound, checked, figure, inputs);
  value = checked.value_or(0);
}

}  // namespace llmprof::detail
