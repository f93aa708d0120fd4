// The engine steps' record, as analysis/step_kinds.json holds it (schema llmprof.step_kinds/1): one field table per
// type (rundir/step_kinds_record.cpp) writes the file and reads it back, so the analysis that fills it
// (llmprof/step_kinds.hpp, llmprof/sync_steps.hpp) and the report that reads it never disagree on a key, and a figure's
// bound is checked by one rule where it is made and where it is read back. docs/report-json.md lists every key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"
#include "llmprof/timeline_record.hpp"

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
  // Per step, all instances: from the kind's CPU start to the later of its CPU end and its last GPU end. The file
  // keeps its p50, p90, p99 and total (read back, count, mean and max are 0).
  DurationSummary step_time;
  std::int64_t gpu_busy_ns = 0;             // summed over its steps (union within each step)
  std::int64_t gpu_time_ns = 0;             // summed duration of every GPU activity its steps launched
  std::optional<double> gpu_time_share;     // of all kinds' GPU time; absent without GPU work
  std::optional<double> window_share;       // of StepKindReport::window_gpu_time_ns; absent without GPU work
  // gpu_busy_ns / step_time.total_ns: how much of its steps' time the GPU was busy; absent when that time is 0.
  std::optional<double> gpu_busy_share;
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

// {"schema": "llmprof.step_kinds/1", "windows": [{"step_range", "steps", "kinds": [...], ...}]}: every key of the
// tables; an absent optional is null. inferred_spans is not written (it is for the analysis that made it).
std::string step_kinds_json(const std::vector<StepKindReport>& windows);

// What read_step_kinds_json gives back: the windows, and a warning per figure withheld for breaking its bound.
struct StepKindsFile {
  std::vector<StepKindReport> windows;
  std::vector<std::string> warnings;
};
// Reads what step_kinds_json wrote. Error naming `source_name` and the key ("windows[0].kinds[1].count") of a value
// of the wrong type, a missing kind name, or another schema; a figure outside its bound (a share of 1.7, a negative
// count) is withheld with a warning naming the file. Unknown keys are ignored, absent or null ones keep their default.
Result<StepKindsFile> read_step_kinds_json(std::string_view text, const std::string& source_name);

// Withholds each figure of `windows` that breaks its table row's bound, with a warning naming it and, where it was
// read back, `file` (else the inputs its row names). The analysis calls it before writing, the reader after reading.
void check_step_kind_bounds(std::vector<StepKindReport>& windows, std::vector<std::string>& warnings,
                            std::string_view file = {});

}  // namespace llmprof
