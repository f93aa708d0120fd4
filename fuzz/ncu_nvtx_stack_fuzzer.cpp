// parse_ncu_nvtx_stack over arbitrary cell text.
//
// Invariants: no crash / UB; one range per non-empty quoted entry at most; the range name and
// domain are pieces of the cell (nothing invented).
#include <algorithm>

#include "fuzz_support.hpp"
#include "llmprof/ncu_metrics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto cell = llmprof::fuzz::as_text(data, size);
  const auto stack = llmprof::parse_ncu_nvtx_stack(cell);
  const auto quotes = static_cast<std::size_t>(std::count(cell.begin(), cell.end(), '"'));
  LLMPROF_FUZZ_CHECK(stack.size() <= quotes / 2, "more ranges than quoted entries");
  for (const auto& range : stack) {
    LLMPROF_FUZZ_CHECK(range.name.size() + range.domain.size() <= cell.size(), "range longer than the cell");
    LLMPROF_FUZZ_CHECK(range.domain.find('"') == std::string::npos && range.name.find('"') == std::string::npos,
                       "a quote leaked into a range");
    LLMPROF_FUZZ_CHECK(cell.find(range.domain) != std::string_view::npos, "domain not from the cell: " + range.domain);
  }
  return 0;
}
