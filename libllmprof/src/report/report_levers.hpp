// The verdict a stakeholder reads first: one headline per run (what bounds the main stage, its biggest lever
// and the gain that lever is measured to give) and, for the main stage and each engine step kind, the levers
// ranked by measured gain. Every gain is a ratio of figures the report already shows; where one of them is
// not measured, or its invariants fail, the gain is withheld with the reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llmprof/report.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_layout.hpp"

namespace llmprof::detail {

// The report section that holds a lever's source figure.
enum class ReportSection { bare_run, stages, stage_instances, ranks };
std::string section_title(ReportSection section);      // "Stage instances"
std::string markdown_anchor(ReportSection section);    // "#stage-instances-nsys-sqlite-timeline"
std::string html_anchor(ReportSection section);        // "#stage-instances"
// Whether the report has that section (Stage instances needs a timeline, Across ranks a launcher run).
bool has_section(const RunReportModel& model, ReportSection section);

struct Lever {
  std::string name;  // "launch overhead", "HBM limit", "compute limit", "idle between graph replays", "straggler rank"
  // The step time now over the step time with this lever pulled (> 1); nullopt when withheld.
  std::optional<double> speedup;
  std::string after;     // the lever that must be pulled first for this gain ("launch overhead"); "" for now
  std::string figure;    // the measured figures the gain is computed from
  std::string withheld;  // why there is no gain; "" when there is one
  ReportSection section = ReportSection::stages;
};

struct StageLevers {
  const ReportStage* stage = nullptr;
  bool main = false;  // the run's main stage (the profiled one); otherwise an engine step kind
  // The step as it runs now: the bare run's time per decode step when the stage counts the bare run's decode
  // steps, else its time per step under the profiler.
  std::optional<double> step_ns;
  bool step_from_bare_run = false;
  std::optional<double> profiled_step_ns;     // the step under the profiler (timeline, else the Stages table)
  std::optional<double> gpu_work_step_ns;     // the GPU's busy time per step (nsys SQLite timeline)
  std::optional<double> hbm_limit_step_ns;    // measured DRAM bytes per step at the peak DRAM bandwidth
  std::optional<double> compute_limit_step_ns;  // profiled FLOP per step at the dominant precision's peak
  std::vector<Lever> levers;                    // ranked: gains now, then gains after another lever, then withheld
};

struct RunVerdict {
  std::string headline;             // plain text; "" when no stage was measured
  std::vector<StageLevers> stages;  // the main stage first, then each step kind that is a stage
};

RunVerdict summarize_run_verdict(const RunReportModel& model);

// The part of a stage verdict before its first ':' ("host/launch-bound", "runs as CUDA graphs").
std::string verdict_class(const std::string& verdict);

// Stage verdicts with nested ranges folded: a range whose verdict has its parent's class joins its parent's
// group (transitively), so "attention, mlp, lm_head, sample" read once as "the same" with a table of figures.
// The main stage always heads a group of its own.
struct VerdictGroup {
  const ReportStage* head = nullptr;
  std::vector<const ReportStage*> folded;  // in report order
};
std::vector<VerdictGroup> fold_stage_verdicts(const RunReportModel& model);

// analysis/step_kinds.json's kind names and analysis/ranks.csv's straggler into the model; absent files leave
// them empty.
Result<void> read_step_kinds_and_ranks(const RunLayout& layout, RunReportModel& model);

}  // namespace llmprof::detail
