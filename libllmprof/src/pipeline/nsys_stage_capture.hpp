// The nsys stage's captures, shared by its two files: stage_nsys.cpp (the stage) and stage_nsys_gate.cpp (what follows
// a gate that never opened: the diagnosis, discovery, and a workload without NVTX of its own followed by itself).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/nsys_report_file.hpp"
#include "llmprof/range_discovery.hpp"
#include "pipeline/capture_windows.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

// Where one capture writes: the first into nsys/, the node-traced second one into nsys/node/.
struct CaptureTarget {
  std::filesystem::path report_base;  // relative to MAIN
  std::filesystem::path metrics;      // the workload's metrics file while under nsys
  std::filesystem::path log;          // nsys's output
  std::vector<std::string> added_arguments;
};

struct Capture {
  bool gated = false;
  bool gate_never_opened = false;  // nsys's output says the gate never opened (capture_gate_never_opened)
  std::optional<ProcessOutcome> outcome;
  Result<ResolvedReport> report = make_error(ErrorCode::no_report, "nsys profile did not run");
  std::vector<CaptureWindowReport> windows;  // a repeat capture: every window, the first being `report`
  std::optional<StageResult> problem;  // the profile could not run, was interrupted or timed out
};

// The main capture into nsys/ (its nsys output in nsys/<log_name>), and the light ungated one into nsys/discovery/.
CaptureTarget first_capture(const std::string& log_name);
CaptureTarget discovery_capture();

// One nsys profile of the workload into `target`, gated as the run's capture is (PipelineRun::capture_range()) when
// `gated`, its report resolved (a .qdstrm imported; a repeat capture's windows listed).
Capture capture(PipelineRun& run, const NsysInfo& nsys, bool gated, const CaptureTarget& target);

// A discovery capture and what it found (nsys/discovery/).
struct Discovered {
  Result<RangeDiscovery> discovery = make_error(ErrorCode::no_report, "no discovery capture was taken");
  Capture probe;  // its capture, which becomes the timeline when the run goes on with it
};

// Diagnoses the gate that never opened, then follows run.on_empty_gate; `attempt` becomes the capture to continue
// with. A workload with no NVTX range of its own is followed by itself: its window, else the whole run. nullopt: go on.
// `earlier`: a discovery capture already taken (capture_after_discovery), used instead of taking another.
std::optional<StageResult> handle_empty_gate(PipelineRun& run, const NsysInfo& nsys, const WorkloadOutput& workload,
                                             Capture& attempt, NsysOutput& output, Discovered* earlier = nullptr);

// Whether the first capture is discovery's rather than the NVTX-gated one: the gate is the default one (a gate set
// to another range names one the user knows is there), the bare run named no range (a workload that writes no
// llmprof metrics: every program nobody instrumented for this tool), and run.on_empty_gate would take a discovery
// capture once the gate stayed shut. On the H100 a Hugging Face generate() with no NVTX of its own
// ran whole three times under nsys (the gated attempt that never opened, discovery, its window); the gated attempt
// only ever told that the gate stayed shut, which discovery tells too.
bool discovers_before_gate(const PipelineRun& run, const WorkloadOutput& workload);

// The discovery capture first; then the workload's own scope (no range of its own), the gated capture (discovery saw
// the gate's range, or failed), or what run.on_empty_gate says for a gate the workload does not emit. `empty_gate`:
// whether the configured gate did not give the capture the stage goes on with. nullopt: go on with `attempt`.
std::optional<StageResult> capture_after_discovery(PipelineRun& run, const NsysInfo& nsys,
                                                   const WorkloadOutput& workload, Capture& attempt,
                                                   NsysOutput& output, bool& empty_gate);

}  // namespace llmprof::detail
