// run.stage = "auto": which step kind the kernel selection and the ncu filter look at, chosen from the capture.
#pragma once

#include <optional>
#include <string>

#include "llmprof/step_kinds.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

struct StepKindChoice {
  std::string stage;  // the kind's range name
  std::string why;    // one sentence: which figures chose it
};

// Kinds whose GPU time is within this share of the most are level; the one of them with the most steps is chosen.
inline constexpr double kStepKindTie = 0.1;

// The kind run.stage = "auto" selects from a step-kind report, and the sentence saying why: the most GPU time,
// the most steps among kinds level on GPU time (kStepKindTie), or the most steps without GPU work. Empty stage
// when the report has no kind.
StepKindChoice pick_step_kind(const StepKindReport& steps);

// The step kind with the most GPU time inside the captured window (MAIN/nsys/profile.sqlite, steps kept by
// nsys.capture_skip/capture_count), else the one with the most steps when no GPU work was recorded; an error
// line (no_step_kinds_reason) when the capture has none.
Result<StepKindChoice> choose_step_kind(const PipelineRun& run);
// The same over a timeline already read from that export.
Result<StepKindChoice> choose_step_kind(const PipelineRun& run, const Result<TimelineReport>& timeline);

// Why a capture holds no NVTX range of the workload's own ("the capture holds no NVTX range", or only library
// ranges, named); nullopt when it holds one, or when the export could not be read.
std::optional<std::string> without_own_ranges(const Result<TimelineReport>& timeline);

// With nothing chosen yet (a resumed run keeps its choice): a capture not gated on an NVTX range that holds no range
// of the workload's own (without_own_ranges) makes the whole captured window the stage, whatever run.stage names.
// Else, with run.stage = "auto": sets run.discovered_stage and run.stage_choice from choose_step_kind; when no kind
// is found, leaves them unset and says why.
// `nvtx_gate_opened`: the capture was gated on an NVTX range and it opened.
void choose_auto_stage(PipelineRun& run, bool nvtx_gate_opened);

}  // namespace llmprof::detail
