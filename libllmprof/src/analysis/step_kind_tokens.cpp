// The workload's own step tokens joined to the step kinds, window by window: time per token where the counts
// agree, withheld with the reason where they do not (see llmprof/step_kinds.hpp, attach_step_tokens).
#include <algorithm>

#include "core/text.hpp"
#include "llmprof/step_kinds.hpp"

namespace llmprof {

namespace {

StepKindTokens tokens_of(const StepKindFigures& kind, const KindTokens& counted, int window) {
  StepKindTokens tokens;
  tokens.workload_steps = counted.steps;
  tokens.prompt_tokens = counted.prompt_tokens;
  tokens.decode_tokens = counted.decode_tokens;
  std::int64_t carried = 0;
  if (__builtin_add_overflow(counted.prompt_tokens, counted.decode_tokens, &carried)) {
    tokens.withheld = "its prompt and decode tokens in window " + std::to_string(window) +
                      " add up past a 64-bit count";  // load_step_tokens rejects such a file; a caller's own may not
  } else if (counted.steps != kind.count) {
    // Tokens of other steps than the ones timed would give a wrong time per token: withheld.
    tokens.withheld = "the workload counted " + std::to_string(counted.steps) + " `" + kind.name +
                      "` steps in window " + std::to_string(window) + ", the timeline " + std::to_string(kind.count);
  } else if (carried == 0) {
    tokens.withheld = "its steps carried no tokens";
  } else {
    tokens.time_per_token_ns = static_cast<double>(kind.step_time.total_ns) / static_cast<double>(carried);
    tokens.tokens_per_step = static_cast<double>(carried) / static_cast<double>(kind.count);
  }
  return tokens;
}

}  // namespace

namespace {

// The workload's kinds in one window that the timeline has no step of: one note however many there are (a
// generated file can name millions), naming the first few.
void note_untimed_kinds(StepKindReport& report, const WindowTokens& counted, int window) {
  constexpr std::size_t kNamed = 3;
  std::vector<std::string> named;
  std::size_t untimed = 0;
  for (const auto& entry : counted.kinds) {  // not a structured binding: clang before 16 cannot capture one
    const std::string& name = entry.first;
    const bool timed = std::any_of(report.kinds.begin(), report.kinds.end(),
                                   [&name](const StepKindFigures& kind) { return kind.name == name; });
    if (timed || entry.second.steps <= 0) continue;
    if (++untimed <= kNamed) named.push_back(std::to_string(entry.second.steps) + " `" + name + "`");
  }
  if (untimed == 1)
    report.token_notes.push_back("the workload counted " + named.front() + " steps in window " +
                                 std::to_string(window) + "; the timeline has none");
  else if (untimed > 1)
    report.token_notes.push_back("the workload counted steps of " + std::to_string(untimed) + " kinds in window " +
                                 std::to_string(window) + " that the timeline has none of (" +
                                 detail::join(named, ", ") + (untimed > kNamed ? ", ..." : "") + ")");
}

}  // namespace

void attach_step_tokens(std::vector<StepKindReport>& windows, const StepTokens& tokens) {
  for (std::size_t w = 0; w < windows.size(); ++w) {
    StepKindReport& report = windows[w];
    const int number = static_cast<int>(w) + 1;
    if (w >= tokens.windows.size()) {
      report.token_notes.push_back("the workload's step tokens have " + std::to_string(tokens.windows.size()) +
                                   " window(s); none for window " + std::to_string(number));
      continue;
    }
    const auto& counted = tokens.windows[w].kinds;
    for (auto& kind : report.kinds) {
      const auto found = counted.find(kind.name);
      if (found == counted.end()) {
        report.token_notes.push_back("the workload's step tokens name no `" + kind.name + "` in window " +
                                     std::to_string(number));
        continue;
      }
      kind.tokens = tokens_of(kind, found->second, number);
    }
    note_untimed_kinds(report, tokens.windows[w], number);
  }
  // One note for every window past the capture's, not one each.
  if (!windows.empty() && tokens.windows.size() > windows.size()) {
    const std::size_t extra = tokens.windows.size() - windows.size();
    windows.back().token_notes.push_back(
        extra == 1 ? "the workload's step tokens have a window " + std::to_string(tokens.windows.size()) +
                         " that the capture does not"
                   : "the workload's step tokens have " + std::to_string(extra) + " windows (" +
                         std::to_string(windows.size() + 1) + " to " + std::to_string(tokens.windows.size()) +
                         ") that the capture does not");
  }
}

}  // namespace llmprof
