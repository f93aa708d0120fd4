// parse_step_tokens over arbitrary JSON text (the step tokens a serving workload writes under nsys).
//
// Invariants: no crash / leak / UB; errors name the input; accepted files hold no negative counts and no
// kind without a name (the reader promises to reject them, and the analysis divides by these counts); a kind's
// prompt + decode tokens do not overflow (issue 33: an overflowing sum printed -0.04 tokens/step).
#include <limits>

#include "fuzz_support.hpp"
#include "llmprof/step_tokens.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto tokens = llmprof::parse_step_tokens(llmprof::fuzz::as_text(data, size), llmprof::fuzz::kSourceName);
  LLMPROF_FUZZ_CHECK_ERROR(tokens);
  if (!tokens) return 0;
  for (const auto& window : tokens->windows) {
    for (const auto& [name, kind] : window.kinds) {
      LLMPROF_FUZZ_CHECK(!name.empty(), "a kind without a name accepted");
      LLMPROF_FUZZ_CHECK(kind.steps >= 0 && kind.prompt_tokens >= 0 && kind.decode_tokens >= 0,
                         "negative count accepted");
      LLMPROF_FUZZ_CHECK(kind.prompt_tokens <= std::numeric_limits<std::int64_t>::max() - kind.decode_tokens,
                         "a kind whose prompt + decode tokens overflow accepted");
    }
  }
  return 0;
}
