// Engine steps as the unit: a serving engine runs one step range (vLLM's `scheduler_step`) per step, and
// inside it one range naming the step's kind (`prefill_batch`, `decode_batch`, `mixed_batch`). Continuous
// batching has no pure decode loop, so the figures are per kind: count, time per step, GPU time and its
// share, the heaviest kernels (of the kind's range over the whole capture), and the processes that ran them. Built on
// the timeline engine's per-instance figures (llmprof/timeline.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/step_kinds_record.hpp"
#include "llmprof/step_tokens.hpp"
#include "llmprof/timeline.hpp"

namespace llmprof {

// The step range: `step_range` when given (a qualified name, "name" or "domain:name"), else the outermost
// stage whose children include a kind name (*_batch, vLLM's convention, or an engine mode: prefill, decode,
// extend, mixed, idle, SGLang's) and that has at least as many instances as each such child. The kinds are its
// children so named, or, when none is, every child that is not in every step. Without such a stage the kinds
// stand alone: ranges so named (in any NVTX domain) whose enclosing range is no kind, each instance a step
// (mode names only where they repeat: two of them twice, or one four times). nullopt when neither is found
// (no_step_kinds_reason says why in one line).
// Steps and kind instances are the outermost closed instances of their range; a kind instance counts when it
// starts inside a counted step. `skip`/`count` keep only steps skip .. skip + count - 1 (count 0: all after
// skip): a window bounded in steps (nsys.capture_skip / nsys.capture_count).
struct StepWindow {
  std::int64_t skip = 0;
  std::int64_t count = 0;  // 0: every step after the skipped ones
  // The steps kept of `total`, as [first, last).
  std::pair<std::int64_t, std::int64_t> kept(std::int64_t total) const;
  // Empty when the capture holds every step the window asks for; else one sentence naming the setting, what the
  // capture holds and what was kept (a window past the capture's end is never cut short silently).
  std::string shortfall(std::int64_t total) const;
};
std::optional<StepKindReport> analyze_step_kinds(const TimelineReport& timeline, std::string_view step_range = {},
                                                 StepWindow window = {});

std::string no_step_kinds_reason(const TimelineReport& timeline);

// StepKindFigures::gpu_busy_share: the kind's GPU busy time over its steps' summed time (step_time.total_ns); nullopt
// when that time is 0. Set where a kind's figures are filled, from NVTX ranges or from inferred steps.
std::optional<double> gpu_busy_share_of(const StepKindFigures& kind);

// The process id nsys packs into a globalTid (pid in bits 24..47 in the export schemas of 2022.4 and 2025.3).
std::int64_t process_of_thread(std::int64_t global_thread_id);

// Joins the workload's own step tokens to the step kinds, window by window (window k of `windows` with entry
// k of `tokens`): per kind, tokens and, when the workload's step count equals the timeline's, the time per
// token (the kind's summed step time over its prompt + decode tokens). A count that differs withholds the
// figure with both counts; a kind or window on one side only becomes a note.
void attach_step_tokens(std::vector<StepKindReport>& windows, const StepTokens& tokens);

// Markdown section "Engine steps" for one or more windows (window 1 first); a side-by-side line per kind
// when there are several windows.
std::string step_kinds_markdown(const std::vector<StepKindReport>& windows);

}  // namespace llmprof
