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

#include "llmprof/step_tokens.hpp"
#include "llmprof/timeline.hpp"

namespace llmprof {

// What the workload said the steps of a kind carried (llmprof/step_tokens.hpp), checked against the timeline.
struct StepKindTokens {
  std::int64_t workload_steps = 0;  // the workload's count of this kind's steps in the window
  std::int64_t prompt_tokens = 0;
  std::int64_t decode_tokens = 0;
  // The kind's summed step time over its tokens, and tokens per step; absent when `withheld` says why (the
  // workload's step count differs from the timeline's, or the steps carried no tokens).
  std::optional<double> time_per_token_ns;
  std::optional<double> tokens_per_step;
  std::string withheld;
};

struct StepKindFigures {
  std::string name;
  std::string domain;  // its NVTX domain, "" for the default one; shown with the name where not ""
  std::int64_t count = 0;
  // Per step, all instances: from the kind's CPU start to the later of its CPU end and its last GPU end.
  DurationSummary step_time;
  std::int64_t gpu_busy_ns = 0;             // summed over its steps (union within each step)
  std::int64_t gpu_time_ns = 0;             // summed duration of every GPU activity its steps launched
  std::optional<double> gpu_time_share;     // of all kinds' GPU time; absent without GPU work
  std::optional<double> window_share;       // of StepKindReport::window_gpu_time_ns; absent without GPU work
  std::vector<TimelineKernel> top_kernels;  // at most five, by total time
  std::vector<std::int64_t> processes;      // PIDs of the threads that ran its steps, ascending
  std::optional<StepKindTokens> tokens;     // when the workload wrote its step tokens for this window
};

struct StepKindReport {
  // e.g. "scheduler_step"; empty when the kinds stand alone (each instance of a kind range is one step).
  std::string step_range;
  std::int64_t steps = 0;                   // instances of the step range (inside the step window)
  std::int64_t steps_left_out = 0;          // outside the step window (nsys.capture_skip / capture_count)
  // Not steps (one rule for steps, kinds, discovery and the cross-rank view): instances of the step range or a
  // kind nested inside another of the same name on the same thread, and ranges the export holds no end for.
  std::int64_t nested_set_aside = 0;
  std::int64_t unclosed_ranges = 0;
  std::vector<StepKindFigures> kinds;       // by GPU time, then by count, descending
  // The GPU time the kinds' window_share is of, and what it covers (`window_basis`): with every step of the capture
  // kept, every GPU activity the capture recorded ("the window's GPU time": other threads' and processes' work and
  // work outside the steps included; on the recorded H100 serving window the decode kind is 44% of it, 50% of the two
  // kinds' GPU time); with steps left out by nsys.capture_skip/capture_count, the kept steps' own ("the kept steps'
  // GPU time").
  std::int64_t window_gpu_time_ns = 0;
  std::string window_basis;
  // Kept steps whose range closed as it opened (0 ns on the host): nothing can be attributed to them, and they count
  // as 0 ns in the step times.
  std::int64_t zero_length_steps = 0;
  std::vector<std::string> phases;          // children of the step range found in every step (e.g. sampling)
  std::optional<std::int64_t> gpu_process;  // the PID whose steps carried the most GPU time
  std::string verdict;  // e.g. "decode steps: 22 of 40, median 1.28 ms; 44% of the window's GPU time"
  std::vector<std::string> token_notes;     // what of the workload's step tokens could not be matched, and why
  // Set when the steps were not NVTX ranges (llmprof/sync_steps.hpp): how they were found and grouped.
  std::string inferred;
  // With `inferred`: how sure that is, whether the launch sequence and the synchronisation agree, and with what share
  // of the steps repeating one sequence; or why they disagree.
  std::string inference_check;
  // They disagree: `kinds` is empty (no per-step figure is given) and `inference_check` says why.
  bool figures_withheld = false;
  // With `inferred`: where each step ran on the host, in order (its thread, its first launch call's start, the
  // end of the call it was cut at), so that a range can count the inferred steps that start inside it.
  struct StepSpan {
    std::int64_t thread = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
  };
  std::vector<StepSpan> inferred_spans;
  // nsys.capture_skip/capture_count asked for steps the capture does not hold (StepWindow::shortfall). With no step
  // kept, `kinds` is empty and the verdict is this sentence.
  std::string window_shortfall;
};

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

// JSON (schema llmprof.step_kinds/1): {"windows": [{"step_range", "steps", "kinds": [...], "nested_set_aside",
// "unclosed_ranges", ...}]}.
std::string step_kinds_json(const std::vector<StepKindReport>& windows);

}  // namespace llmprof
