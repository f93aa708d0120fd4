// parse_workload_metrics over arbitrary JSON text (stage-1 metrics written by the workload).
//
// Invariants: no crash / leak / UB; errors name the input; accepted metrics hold no negative
// counts or times (the reader promises to reject them); an optional key that failed its check is left
// out (model_bytes_per_step stays 0) with a warning naming the input and the key (issue 33).
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
  LLMPROF_FUZZ_CHECK(metrics->model_bytes_per_step >= 0, "negative model_bytes_per_step accepted");
  for (const auto& warning : metrics->warnings) {
    LLMPROF_FUZZ_CHECK(warning.find(llmprof::fuzz::kSourceName) != std::string::npos &&
                           warning.find("model_bytes_per_step") != std::string::npos,
                       "a warning that names neither the input nor the key");
    LLMPROF_FUZZ_CHECK(metrics->model_bytes_per_step == 0, "a key warned about was kept");
  }
  return 0;
}
