// Steps of a capture without step ranges, from the step thread's launch sequence and its synchronisations
// (llmprof/sync_steps.hpp reads the export; this finds the steps in the calls alone, so it is tested on sequences).
//
// Why not one step per synchronisation: Hugging Face generate() (transformers 5.x, H100) waits twice per forward pass
// (its stopping checks copy a flag to the host, then a token), 34 device-to-host copies for 16 passes in the recorded
// window, and a static-cache prefill synchronises 5 times; an engine's step waits once. What repeats is the step's
// launch sequence: the calls between synchronisations, compared as multisets (PyTorch alternates vectorized and
// unrolled elementwise kernels from one step to the next, so no two decode steps need launch the same list).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmprof::detail {

// One call of the step thread that launched GPU work or waited for it, in call order.
struct SequenceCall {
  std::int64_t token = 0;     // equal tokens: the same launch (kernel name and grid, graph, copy kind, set, call)
  bool synchronizes = false;  // a device-to-host copy or a synchronise call: the host waits for the GPU there
  bool computes = false;      // a kernel or a graph launch: a segment without one is no step
  bool marks_pass = false;    // a GEMM or a graph launch: what can occur once per forward pass (the LM head)
  bool graph = false;         // a graph launch: preferred as the once-per-step launch
};

struct SequenceStep {
  std::size_t first = 0;  // call indices, inclusive; `last` is a synchronising call
  std::size_t last = 0;
  bool repeats = false;    // an instance of the repeating sequence
  std::int64_t marks = 0;  // launches of the once-per-step token inside it
};

struct SequenceSteps {
  std::vector<SequenceStep> steps;
  // Segments: the calls up to a synchronisation (consecutive synchronising calls are one) that launched a kernel
  // or a graph since the previous one.
  std::int64_t segments = 0;
  std::int64_t unit_segments = 0;  // synchronisations per repeat of the sequence
  std::int64_t unit_calls = 0;     // calls in its first repeat
  std::int64_t repeats = 0;        // steps that repeat it
  std::optional<std::int64_t> once_per_step;  // the token launched once in each repeat (a graph, else the last GEMM)
  // Launches of that token before the first repeat, left out with the calls before it: a lead-in holding several
  // forward passes without a synchronisation of their own (a whole-run capture's warm-up) is no step.
  std::int64_t lead_in_marks_left_out = 0;
  std::string disagreement;  // empty when the launch sequence and the synchronisation agree, else why not
};

// The rule, in order:
// - segments as above; fewer than 3, or no sequence of p consecutive segments (p = 1..8) that repeats at least 3
//   times and covers half the segments: disagreement (no repeating step);
// - segments alike: at least 90% of the larger one's calls match the other's as multisets of tokens; a segment's
//   class is the first earlier segment it is alike;
// - for each p the candidate repeats are the p-tuples of distinct classes whose first segment is their longest (a
//   step starts with its forward pass) and that launch a GEMM or a graph; the candidate with the most
//   non-overlapping repeats counts, and p is the one whose repeats cover the most segments (the smallest of a tie);
// - steps: the segments before the first repeat (one step), each repeat, and those between repeats or after the
//   last, p at a time, a group that launches no GEMM or graph joining the next (the last, the one before); calls
//   after the last segment belong to no step;
// - the once-per-step launch: a graph launch, else the last GEMM, occurring exactly once in the first repeat; none:
//   disagreement (each synchronisation closes several passes). A lead-in holding it twice or more is left out;
//   any other step holding it twice or more: disagreement.
SequenceSteps find_sequence_steps(const std::vector<SequenceCall>& calls);

}  // namespace llmprof::detail
