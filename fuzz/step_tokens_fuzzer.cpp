// parse_step_tokens over arbitrary JSON text (the step tokens a serving workload writes under nsys).
//
// Invariants: no crash / leak / UB; errors name the input; a byte order mark changes nothing and a file cut
// short is never accepted; accepted files hold no negative counts and no
// kind without a name (the reader promises to reject them, and the analysis divides by these counts); a kind's
// prompt + decode tokens do not overflow (issue 33: an overflowing sum printed -0.04 tokens/step).
#include <limits>
#include <string>

#include "core/text.hpp"
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
  // A UTF-8 byte order mark changes nothing: the same windows and counts (one mark: a second one is no JSON).
  const std::string text(llmprof::fuzz::as_text(data, size));
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) return 0;
  const auto marked = llmprof::parse_step_tokens("\xEF\xBB\xBF" + text, llmprof::fuzz::kSourceName);
  LLMPROF_FUZZ_CHECK(marked.has_value(), "the same file with a byte order mark rejected: " + marked.error().describe());
  LLMPROF_FUZZ_CHECK(marked->windows.size() == tokens->windows.size(), "a byte order mark changed the windows");
  for (std::size_t i = 0; i < tokens->windows.size(); ++i) {
    const auto& [one, other] = std::pair{tokens->windows[i].kinds, marked->windows[i].kinds};
    LLMPROF_FUZZ_CHECK(one.size() == other.size(), "a byte order mark changed the kinds");
    for (auto a = one.begin(), b = other.begin(); a != one.end(); ++a, ++b)
      LLMPROF_FUZZ_CHECK(a->first == b->first && a->second.steps == b->second.steps &&
                             a->second.prompt_tokens == b->second.prompt_tokens &&
                             a->second.decode_tokens == b->second.decode_tokens,
                         "a byte order mark changed a count");
  }
  // The file cut short anywhere before its last non-blank byte is never accepted (a truncated file is an error,
  // never a partial count). Blank is the reader's own kWhitespace: it takes a vertical tab or form feed after
  // the JSON as blank, so cutting one off leaves the whole file.
  const auto last = text.find_last_not_of(llmprof::detail::kWhitespace);
  if (last != std::string::npos && last > 0) {
    const auto cut = llmprof::parse_step_tokens(text.substr(0, last), llmprof::fuzz::kSourceName);
    LLMPROF_FUZZ_CHECK(!cut.has_value(), "a file cut before its last byte accepted");
  }
  return 0;
}
