// Private: the factor and base unit for an ncu unit string, computed once per column.
#pragma once

#include <string>
#include <string_view>

namespace llmprof::detail {

struct UnitScale {
  double factor = 1;  // base value = printed value * factor
  std::string unit;   // base unit ("ns", "byte", "byte/second", "hz", or as printed when unknown)
};

UnitScale unit_scale(std::string_view unit);

}  // namespace llmprof::detail
