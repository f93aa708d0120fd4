// Internal pieces of the analysis shared by analysis.cpp (device, selection, orchestration),
// analysis_kernels.cpp (per-kernel figures) and analysis_stages.cpp (per-stage figures).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/figure_checks.hpp"
#include "llmprof/analysis.hpp"
#include "rundir/report_model_json.hpp"

namespace llmprof::detail {

// Per-kernel FLOP per launch by precision (mean over the profiled launches), keyed by the
// KernelAnalysis name; used to estimate a stage's FLOP from its nsys instance counts.
using FlopPerLaunch = std::map<std::string, std::map<std::string, double>>;

// The same per stage (qualified range name) from the launches whose NVTX stack holds the stage,
// because one kernel does different work in prefill and decode; `any_stage` is over all launches,
// used only for kernels none of whose launches carries an NVTX stack.
// One kernel of the plan's stage over the plan's launch-configuration groups (stage_config_bytes.cpp).
struct ConfigBytes {
  std::int64_t launches = 0;  // the groups' launches in the stage
  std::int64_t time_ns = 0;   // and their kernel time
  double bytes = 0;           // over the covered groups: bytes per launch x launches
  // Group time (and launches) whose bytes ncu measured in that group, and whose bytes were carried from another
  // group of the same kernel.
  std::int64_t measured_ns = 0, extrapolated_ns = 0;
  std::int64_t measured_launches = 0, extrapolated_launches = 0;
  std::vector<std::size_t> launches_profiled;  // the kernel's ncu launches in the stage, in file order
};

struct PerLaunchMeans {
  std::map<std::string, FlopPerLaunch> by_stage;
  FlopPerLaunch any_stage;
  std::set<std::string> kernels_with_stacks;
  // Mean ncu DRAM bytes per launch (kernel name -> bytes), keyed and chosen exactly like the FLOP, so that a
  // stage's bytes extrapolate from the same launches as its FLOP.
  std::map<std::string, std::map<std::string, double>> dram_bytes_by_stage;
  std::map<std::string, double> dram_bytes_any_stage;
  // Stage -> kernel -> its ncu launches there (indices in file order).
  std::map<std::string, std::map<std::string, std::vector<std::size_t>>> launches_by_stage;
  // With the ncu plan's groups: the plan's stage, and per kernel its bytes there per launch configuration. A
  // stage whose launches of the kernel are exactly the plan stage's (the same count, the same profiled launches:
  // the stage itself, or a range around all of it) takes these bytes instead of the kernel's mean.
  std::string config_stage;
  std::map<std::string, ConfigBytes> dram_bytes_by_config;
};

// Fills config_stage and dram_bytes_by_config from inputs.ncu_plan_groups, once launches_by_stage is filled
// (its kernel names are the analysis's join of ncu's names to nsys's).
void fill_config_bytes(const AnalysisInputs& inputs, PerLaunchMeans& means);

std::string qualified_range(const NvtxRangeName& range);

// Adds the timeline to the report: its verdicts and busy fractions replace those of the stages it
// knows, its capture losses and validity notes become warnings (analysis_timeline.cpp).
void apply_timeline(const TimelineReport& timeline, AnalysisReport& report);
// report.nvtx_ranges from the nsys nvtx_sum rows (invariants checked; a failing row becomes a warning).
void build_nvtx_ranges(const AnalysisInputs& inputs, AnalysisReport& report);

// One KernelAnalysis per kernel of nsys or ncu, the longest first, and the FLOP per launch the stages use.
void build_kernels(const AnalysisInputs& inputs, const AnalysisOptions& options, AnalysisReport& report,
                   PerLaunchMeans& flop_per_launch);

void build_stages(const AnalysisInputs& inputs, const AnalysisOptions& options,
                  const PerLaunchMeans& flop_per_launch, AnalysisReport& report);

// Each stage's step (StepBasis, llmprof/report_model.hpp): its steps, step_basis and steps_source, from the
// timeline's nesting and graph launches, the engine's step kinds, the bare run's decode steps and `inferred`
// (steps inferred without NVTX over the same export, when the caller has them); run after apply_timeline and
// before fill_stage_limits, which divides by the steps (step_units.cpp).
void assign_step_units(const std::optional<StepKindReport>& inferred, AnalysisReport& report);
// Whether an outermost stage, or the one the selection looks at, launched GPU work and has no step known: then
// steps inferred without NVTX may name its step.
bool wants_inferred_steps(const AnalysisReport& report, const std::string& selection_stage);

// The stage figures that divide by a time or compare with a limit (rates, MFU, MBU, headroom, the
// MFU gap), and their sentences added to the verdict; run after the timeline chose each stage's time
// (stage_limits.cpp).
void fill_stage_limits(AnalysisReport& report);

// Every figure of a stage or kernel that breaks the bound of its report.json table row is withheld with a warning
// naming its inputs (withhold_impossible_figures, rundir/report_model_json.hpp), where it is made and before
// anything (a verdict, a report) reads it: build_stages and the kernels' loop in analysis.cpp, fill_stage_limits.

}  // namespace llmprof::detail
