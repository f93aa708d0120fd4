// normalize_to_base_unit over arbitrary unit text.
//
// Invariants: no crash / UB; the factor is finite and positive; conversion is linear in the value;
// normalising is idempotent (the base unit converts with factor 1 to itself), which is what makes
// `--print-units base` output and the default agree.
#include <cmath>

#include "fuzz_support.hpp"
#include "llmprof/ncu_metrics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto unit = llmprof::fuzz::as_text(data, size);
  const auto one = llmprof::normalize_to_base_unit(1.0, unit);
  LLMPROF_FUZZ_CHECK(std::isfinite(one.value) && one.value > 0, "factor " + std::to_string(one.value));
  const auto scaled = llmprof::normalize_to_base_unit(2.5, unit);
  LLMPROF_FUZZ_CHECK(scaled.unit == one.unit, "unit depends on the value");
  LLMPROF_FUZZ_CHECK(std::fabs(scaled.value - 2.5 * one.value) <= 1e-12 * scaled.value, "not linear");
  const auto again = llmprof::normalize_to_base_unit(1.0, one.unit);
  LLMPROF_FUZZ_CHECK(
      again.value == 1.0 && again.unit == one.unit,
      "'" + std::string(unit) + "' -> '" + one.unit + "' -> '" + again.unit + "' x" + std::to_string(again.value));
  return 0;
}
