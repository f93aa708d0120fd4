// The nsys stage's captures, shared by its two files: stage_nsys.cpp (the stage) and stage_nsys_gate.cpp (what follows
// a gate that never opened: the diagnosis, discovery, and a workload without NVTX of its own followed by itself).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/nsys_report_file.hpp"
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

// Diagnoses the gate that never opened, then follows run.on_empty_gate; `attempt` becomes the capture to continue
// with. A workload with no NVTX range of its own is followed by itself: its window, else the whole run. nullopt: go on.
std::optional<StageResult> handle_empty_gate(PipelineRun& run, const NsysInfo& nsys, const WorkloadOutput& workload,
                                             Capture& attempt, NsysOutput& output);

}  // namespace llmprof::detail
