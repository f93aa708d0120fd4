// parse_workload_metrics over arbitrary JSON text (stage-1 metrics written by the workload).
//
// Invariants: no crash / leak / UB; errors name the input; accepted metrics hold no negative
// counts or times (the reader promises to reject them).
#include "fuzz_support.hpp"
#include "llmprof/workload_metrics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto metrics = llmprof::parse_workload_metrics(llmprof::fuzz::as_text(data, size), llmprof::fuzz::kSourceName);
  LLMPROF_FUZZ_CHECK_ERROR(metrics);
  if (!metrics) return 0;
  LLMPROF_FUZZ_CHECK(
      metrics->batch >= 0 && metrics->prompt_tokens >= 0 && metrics->new_tokens >= 0 && metrics->generated_tokens >= 0,
      "negative count accepted");
  LLMPROF_FUZZ_CHECK(metrics->prefill_s >= 0 && metrics->decode_s >= 0, "negative time accepted");
  return 0;
}
