// Internal pieces of the analysis shared by analysis.cpp (device, selection, orchestration),
// analysis_kernels.cpp (per-kernel figures) and analysis_stages.cpp (per-stage figures).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "llmprof/analysis.hpp"

namespace llmprof::detail {

// Per-kernel FLOP per launch by precision (mean over the profiled launches), keyed by the
// KernelAnalysis name; used to estimate a stage's FLOP from its nsys instance counts.
using FlopPerLaunch = std::map<std::string, std::map<std::string, double>>;

// The same per stage (qualified range name) from the launches whose NVTX stack holds the stage,
// because one kernel does different work in prefill and decode; `any_stage` is over all launches,
// used only for kernels none of whose launches carries an NVTX stack.
struct PerLaunchMeans {
  std::map<std::string, FlopPerLaunch> by_stage;
  FlopPerLaunch any_stage;
  std::set<std::string> kernels_with_stacks;
  // Mean ncu DRAM bytes per launch (kernel name -> bytes), keyed and chosen exactly like the FLOP, so that a
  // stage's bytes extrapolate from the same launches as its FLOP.
  std::map<std::string, std::map<std::string, double>> dram_bytes_by_stage;
  std::map<std::string, double> dram_bytes_any_stage;
};

std::string qualified_range(const NvtxRangeName& range);

// Adds the timeline to the report: its verdicts and busy fractions replace those of the stages it
// knows, its capture losses and validity notes become warnings (analysis_timeline.cpp).
void apply_timeline(const TimelineReport& timeline, AnalysisReport& report);
// report.range_timings from the nsys nvtx_sum rows (invariants checked; a failing row becomes a warning).
void build_range_timings(const AnalysisInputs& inputs, AnalysisReport& report);

// One KernelAnalysis per kernel of nsys or ncu, the longest first, and the FLOP per launch the stages use.
void build_kernels(const AnalysisInputs& inputs, const AnalysisOptions& options, AnalysisReport& report,
                   PerLaunchMeans& flop_per_launch);

void build_stages(const AnalysisInputs& inputs, const AnalysisOptions& options,
                  const PerLaunchMeans& flop_per_launch, AnalysisReport& report);

// The stage figures that divide by a time or compare with a limit (rates, MFU, MBU, headroom, the
// MFU gap), and their sentences added to the verdict; run after the timeline chose each stage's time
// (stage_limits.cpp).
void fill_stage_limits(AnalysisReport& report);

// Withholds every figure of a stage / kernel that breaks its invariant (core/figure_checks.hpp),
// with a warning naming the inputs; run before anything (a verdict, a report) reads the figures.
void withhold_impossible_figures(StageAnalysis& stage, std::vector<std::string>& warnings);
void withhold_impossible_figures(KernelAnalysis& kernel, std::vector<std::string>& warnings);

}  // namespace llmprof::detail
