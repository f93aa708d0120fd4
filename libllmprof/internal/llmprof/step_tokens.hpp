// The workload's own count of the tokens its engine steps carried (schema "llmprof.step_tokens/1"), for time
// per token per step kind. A serving engine knows what each step held (vLLM's scheduler output: the prompt
// tokens of newly admitted requests, one decode token per running request); the timeline does not.
//
// The workload writes the file named by LLMPROF_STEP_TOKENS_FILE (deep-profile sets it for the nsys capture,
// to MAIN/nsys/step_tokens.json), one entry per capture window in the order the windows opened
// (cudaProfilerStart/Stop pairs; one entry when the capture is not the workload's own window), counting only
// the steps inside the window:
//   {"schema": "llmprof.step_tokens/1",
//    "windows": [{"kinds": {"decode_batch": {"steps": 22, "prompt_tokens": 0, "decode_tokens": 352},
//                           "mixed_batch": {"steps": 18, "prompt_tokens": 3599, "decode_tokens": 265}}}]}
// examples/serving/serve.py writes it; the analysis checks its step counts against the timeline's before it
// divides (llmprof/step_kinds.hpp: attach_step_tokens).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

inline constexpr std::string_view step_tokens_schema = "llmprof.step_tokens/1";
inline constexpr std::string_view step_tokens_environment_variable = "LLMPROF_STEP_TOKENS_FILE";

struct KindTokens {
  std::int64_t steps = 0;          // steps of this kind the workload ran inside the window
  std::int64_t prompt_tokens = 0;  // prompt (prefill) tokens those steps carried
  std::int64_t decode_tokens = 0;  // generated (decode) tokens those steps carried
};

struct WindowTokens {
  std::map<std::string, KindTokens> kinds;  // by step kind range name, e.g. "decode_batch"
};

struct StepTokens {
  std::vector<WindowTokens> windows;  // window 1 first
};

// Reads and validates a step-tokens file: Error(not_found) when it cannot be read, Error(parse_error) naming
// the file and the key for invalid JSON, another schema, a missing key, a non-integer or negative count, or a
// kind whose prompt_tokens + decode_tokens overflow a 64-bit count.
Result<StepTokens> load_step_tokens(const std::filesystem::path& path);
Result<StepTokens> parse_step_tokens(std::string_view json_text, const std::string& source_name);

}  // namespace llmprof
