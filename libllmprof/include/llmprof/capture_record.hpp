// CaptureRecord: what the nsys stage captured, in one typed record (run.json's "capture" object).
//
// The nsys stage writes it; select, analyze, `run --resume`, the cross-rank view and `deep-profile
// analyze MAIN` read it instead of working the gate out again from the configuration or from cmd.txt.
// A timeline gated on an NVTX range holds only that range, and the kernel selection reads it so; an
// ungated re-run after an empty gate (run.on_empty_gate = rerun_ungated) holds the whole run, even though
// the configuration still names the gate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/export.hpp"

namespace llmprof {

// What nsys was told to wait for before capturing (nsys.capture_range).
enum class CaptureGateKind { none, nvtx, cuda_profiler_api };
LLMPROF_API const char* to_string(CaptureGateKind kind) noexcept;  // "none", "nvtx", "cudaProfilerApi"
LLMPROF_API std::optional<CaptureGateKind> parse_capture_gate_kind(std::string_view text) noexcept;

// One captured window of the timeline and its report.
struct LLMPROF_API CaptureWindow {
  std::string report;  // relative to MAIN, e.g. "nsys/profile.nsys-rep"
};

// A span of the timeline on the SQLite export's clock (its timestamps, nanoseconds).
struct LLMPROF_API CaptureSpan {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

struct LLMPROF_API CaptureRecord {
  CaptureGateKind gate = CaptureGateKind::none;
  std::string range;         // nvtx gate: the --nvtx-capture expression, "name" or "name@domain"
  bool gate_opened = false;  // a gated capture whose gate opened (false for gate none)
  // The gate never opened and run.on_empty_gate = rerun_ungated captured the whole run instead: the
  // windows are that ungated capture's.
  bool ungated_rerun = false;
  std::vector<CaptureWindow> windows;  // one per captured window, in capture order
  std::string graph_trace = "graph";   // how the (first) capture traced CUDA graphs: "graph" or "node"
  // The second, node-traced capture (when the first recorded graph launches whole): its folder relative to
  // MAIN, e.g. "nsys/node"; unset when none was taken.
  std::optional<std::string> node_capture_directory;
  // run.on_empty_gate = discover: the gate never opened, the timeline is the ungated discovery capture, and this
  // is the stage discovery chose for the kernel selection and the ncu filter (select, ncu, analyze and
  // `run --resume` read it here). Unset otherwise.
  std::optional<std::string> discovered_stage;
  // How discovered_stage was chosen, as the run said it: run.stage = "auto" (the step kind with the most GPU time
  // inside the captured window) or discovery. Empty when nothing chose.
  std::string stage_choice;
  // run.stage = "auto" found no step kind and the capture is the workload's own window: the kernels of the whole
  // window are selected and ncu takes no NVTX filter.
  bool whole_window_selection = false;
  // Set when the run scoped the capture itself instead of by nsys.capture_range: the configured gate never opened
  // and the workload emits no NVTX range of its own (none, or only library ranges), so the capture followed the
  // workload's cudaProfilerStart/Stop window (gate cudaProfilerApi) or took the whole run (gate none). One
  // sentence: what was seen and what followed. Empty when the capture is the configured one.
  std::string scope;
  // nsys options the run added to every capture after learning from the workload that they were needed:
  // "--trace-fork-before-exec=true" when the whole-run capture held no CUDA kernel, because the GPU work ran in a
  // child started by fork without exec. Empty when the run added none (ncu follows forks by itself).
  std::vector<std::string> learned_nsys_arguments;
  // The timeline is the ungated discovery capture restricted to the workload's first cudaProfilerStart/Stop window
  // (nsys.restrict_discovery_to_window): MAIN/nsys/profile.sqlite holds only what the window holds, while the report
  // in `windows` is the whole run. Unset when nsys gated the capture itself or took the whole run.
  std::optional<CaptureSpan> restricted_window;

  // The NVTX range name (without @domain) the captured timeline is limited to: set only for an nvtx gate
  // that opened; nullopt for an ungated capture, an ungated re-run, and a cudaProfilerApi gate.
  std::optional<std::string> gated_range() const;
};

}  // namespace llmprof
