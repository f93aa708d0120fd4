// The empty-NVTX-gate diagnosis: nsys's "No reports were generated" says nothing about why; compare
// the gate with the range names the workload actually emitted and print the exact fix. Then what follows it
// (run.on_empty_gate): discovery, the ungated re-run, or, for a workload with no NVTX range of its own, the
// workload's own window or the whole run, followed by the run itself.
#include <algorithm>

#include <limits>

#include "core/format.hpp"
#include "core/text.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/range_discovery.hpp"
#include "llmprof/step_tokens.hpp"
#include "llmprof/tool_probe.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "parse/nsys_sqlite_window.hpp"
#include "pipeline/nsys_capture.hpp"
#include "pipeline/nsys_stage_capture.hpp"

namespace llmprof::detail {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + ("\"" + name + "\"");
  return joined;
}

// The emitted range to suggest: the selection stage when emitted, else the closest name.
std::string suggested_range(const std::string& gate_name, const EmittedRanges& emitted, const std::string& preferred) {
  if (std::find(emitted.names.begin(), emitted.names.end(), preferred) != emitted.names.end()) return preferred;
  return *std::min_element(emitted.names.begin(), emitted.names.end(), [&](const auto& a, const auto& b) {
    return edit_distance(gate_name, a) < edit_distance(gate_name, b);
  });
}

}  // namespace

// nsys --nvtx-capture takes "range" (default domain) or "range@domain".
std::string diagnose_empty_gate(const std::string& gate, const std::optional<EmittedRanges>& emitted,
                                const std::string& preferred_stage) {
  const auto at = gate.find('@');
  const std::string gate_name = gate.substr(0, at);
  const std::string gate_domain = at == std::string::npos ? "" : gate.substr(at + 1);
  std::string text = "the NVTX gate nsys.nvtx_capture=\"" + gate + "\" never opened, so nsys wrote no report. ";
  if (!emitted || emitted->names.empty()) {
    return text +
           "The range names the workload emits are unknown (it wrote no llmprof metrics with nvtx_ranges). Fix: run "
           "once "
           "with --set nsys.capture_range=none and read the range names in report.md's NVTX table, then set "
           "nsys.nvtx_capture to one of them.";
  }
  const std::string emitted_domain =
      emitted->domain.empty() ? "the default domain" : "domain \"" + emitted->domain + "\"";
  text += "The workload emitted the ranges " + join_names(emitted->names) + " in " + emitted_domain + ". ";
  const bool name_emitted = std::find(emitted->names.begin(), emitted->names.end(), gate_name) != emitted->names.end();
  if (name_emitted && gate_domain != emitted->domain) {
    const std::string fixed = emitted->domain.empty() ? gate_name : gate_name + "@" + emitted->domain;
    return text + "The name matches but the domain does not. Fix: --set nsys.nvtx_capture=" + fixed;
  }
  if (name_emitted) {
    return text +
           "The name and domain match, so nsys did not see the range: keep NSYS_NVTX_PROFILER_REGISTER_ONLY=0 "
           "(the pipeline passes it with --env-var) and check that the range is pushed on a thread nsys traces "
           "(--trace includes nvtx).";
  }
  const std::string suggestion = suggested_range(gate_name, emitted.value(), preferred_stage);
  const std::string fixed = emitted->domain.empty() ? suggestion : suggestion + "@" + emitted->domain;
  return text + "Fix: --set nsys.nvtx_capture=" + fixed + " (or --set nsys.capture_range=none for an ungated capture).";
}

namespace {

constexpr Stage kStage = Stage::nsys;
namespace fs = std::filesystem;

// Runs the discovery capture and reads it; `probe` keeps the capture (its report) for the caller.
Result<RangeDiscovery> run_discovery(PipelineRun& run, const NsysInfo& nsys, Capture& probe) {
  std::error_code error;
  fs::create_directories(run.directory.layout().resolve(RunLayout::nsys_directory() / "discovery"), error);
  probe = capture(run, nsys, false, discovery_capture());
  if (probe.problem) return make_error(ErrorCode::no_report, "the discovery capture failed: " + probe.problem->reason);
  if (!probe.report) return probe.report.error();
  const fs::path directory = RunLayout::nsys_directory() / "discovery";
  run.sqlite_exports.erase(directory / RunLayout::nsys_sqlite().filename());  // a second discovery capture's export
  if (auto exported = export_nsys_sqlite(run, nsys, probe.report->report, directory);
      exported.status != StageStatus::ok)
    return make_error(ErrorCode::no_report, "the discovery capture's SQLite export failed: " + exported.reason);
  return discover_capture(run.directory.path() / directory / RunLayout::nsys_sqlite().filename(),
                          run.library_ranges());
}

bool stops_the_stage(const Capture& probe) {
  return probe.problem &&
         (probe.problem->status == StageStatus::interrupted || probe.problem->problem == StageProblemKind::timeout);
}

constexpr const char* kTraceForks = "--trace-fork-before-exec=true";

// A whole-run capture with no CUDA kernel on a machine with a GPU: either the workload uses no GPU, or its GPU work
// ran in a child started by fork without exec (Python multiprocessing's fork start method), which nsys 2025.3.1
// traces only under --trace-fork-before-exec=true (H100: a fork-started engine worker left the front's CPU work and
// no kernel). One more capture with the option tells the two apart; without a GPU no capture holds a kernel.
bool needs_forks_traced(const PipelineRun& run, const Result<RangeDiscovery>& discovery) {
  if (!discovery || discovery->kernels > 0) return false;
  const auto& configured = run.config.nsys.extra_args;
  const bool tracing_forks = std::any_of(configured.begin(), configured.end(), [](const std::string& argument) {
    return argument.rfind("--trace-fork-before-exec", 0) == 0;
  });
  return !tracing_forks && run.learned_nsys_arguments.empty() && run.nvidia_driver().present;
}

// The discovery capture again, tracing forked children; the option stays for every later capture (nsys's window
// capture, the node pass) and is recorded in run.json's capture record. nsys documents it as relying on behaviour
// fork does not guarantee, so the run says that it turned it on, and why.
Result<RangeDiscovery> discover_with_forks_traced(PipelineRun& run, const NsysInfo& nsys, Capture& probe) {
  run.learned_nsys_arguments.push_back(kTraceForks);
  const std::string why = "the whole-run capture holds no CUDA kernel although this machine has an NVIDIA GPU: a "
                          "workload whose GPU work runs in a child started by fork without exec (Python "
                          "multiprocessing's fork start method) is traced only with " +
                          std::string(kTraceForks);
  run.say(kStage, why + "; capturing once more with it");
  auto discovery = run_discovery(run, nsys, probe);
  if (discovery && discovery->kernels > 0) {
    run.note(kStage, why + ", and with it the capture holds " + std::to_string(discovery->kernels) +
                         " kernels: every capture of this run adds it (run.json's capture.learned_nsys_arguments; set "
                         "nsys.extra_args = [\"" + kTraceForks + "\"] to start with it)");
  } else if (discovery) {
    run.note(kStage, why + ", but with it too the capture holds no kernel: the workload ran no GPU work nsys could "
                           "trace (check that it uses the GPU, and nsys/discovery/profile.log)");
  }
  return discovery;
}

// The range names the workload emitted: stage-1 metrics, else those it wrote under nsys.
std::optional<EmittedRanges> emitted_ranges(const PipelineRun& run, const WorkloadOutput& workload) {
  if (workload.emitted_ranges) return workload.emitted_ranges;
  auto under_nsys = read_emitted_ranges(run.directory.layout().resolve(RunLayout::nsys_metrics()));
  if (under_nsys) return under_nsys.value();
  return std::nullopt;
}

// The discovery capture became the run's timeline: the step tokens its workload wrote go where the analysis
// reads them (RunLayout::nsys_step_tokens()).
void adopt_discovery_step_tokens(PipelineRun& run) {
  const RunLayout layout = run.directory.layout();
  const fs::path written = layout.resolve(RunLayout::nsys_directory() / "discovery" / "step_tokens.json");
  std::error_code error;
  if (!fs::exists(written, error)) return;
  fs::rename(written, layout.resolve(RunLayout::nsys_step_tokens()), error);
  if (error) run.warn(kStage, "could not move " + written.string() + " beside the timeline: " + error.message());
}

// Why a cudaProfilerApi window never opened. Without an NVIDIA driver a workload's cudaProfilerStart has no
// CUDA context to start, and nsys records no such call: "it never called" would be a guess (a
// workload that does call it was told it never did, on a machine without a GPU).
std::string profiler_window_diagnosis(const NvidiaDriver& driver) {
  if (!driver.present) {
    return "the capture range cudaProfilerApi never opened: this machine has no NVIDIA driver (" + driver.evidence +
           "), so a cudaProfilerStart call (torch.cuda.profiler.start()) has no CUDA context to start and nsys "
           "cannot see it; whether the workload calls it can be told only on a GPU machine. nsys wrote no report.";
  }
  // A driver is no GPU the workload can use (a driver with no device, CUDA_VISIBLE_DEVICES hiding every one, CUDA
  // failing to initialise): there too the call starts nothing and nsys records none, so both causes are named.
  return "the capture range cudaProfilerApi never opened: nsys saw no cudaProfilerStart that started a window. "
         "Either the workload never called it (torch.cuda.profiler.start()), or it called it without a CUDA "
         "context to start (no GPU visible to it: CUDA_VISIBLE_DEVICES, run.device_index, or CUDA failing to "
         "initialise; the workload's stderr says which). nsys wrote no report.";
}

// Why the followed window cannot be taken out of the discovery capture; nullopt when it can. The tables come from
// the SQLite export alone when nsys.stats_reports is empty: `nsys stats` would read the whole run's report.
std::optional<std::string> window_needs_capture(const PipelineRun& run, const RangeDiscovery& discovery,
                                                const Capture& probe) {
  const NsysConfig& config = run.config.nsys;
  if (!config.restrict_discovery_to_window) return "nsys.restrict_discovery_to_window = false";
  if (config.capture_range_end == NsysCaptureRangeEnd::repeat)
    return "nsys.capture_range_end = repeat captures every window, each into a report of its own";
  if (!config.export_sqlite) return "nsys.export_sqlite = false";
  if (!config.stats_reports.empty()) return "nsys.stats_reports runs `nsys stats` on a report, which is the whole run";
  if (discovery.profiler_windows.empty() || !probe.report) return "the discovery capture left no window to restrict";
  return std::nullopt;
}

// The followed window out of the discovery capture: its SQLite export restricted to the workload's first
// cudaProfilerStart/Stop window becomes MAIN/nsys/profile.sqlite, the export the tables and the analysis read, so
// the workload runs once less under nsys. nsys's own window capture ends at the first Stop too (capture-range-end
// stop), which is the window kept here. False, with a warning, when the restriction failed: the caller captures.
bool take_window_from_discovery(PipelineRun& run, const RangeDiscovery& discovery, Capture& probe, Capture& attempt) {
  const auto [start_ns, end_ns] = discovery.profiler_windows.front();
  const fs::path source = run.directory.path() / RunLayout::nsys_directory() / "discovery" /
                          RunLayout::nsys_sqlite().filename();
  auto restricted = restrict_export_to_window(source, run.directory.path() / RunLayout::nsys_sqlite(),
                                              ExportWindow{start_ns, end_ns});
  if (!restricted) {
    run.warn(kStage, "the discovery capture could not be restricted to the workload's window (" +
                         restricted.error().describe() + "), so the workload is captured again, gated on it");
    return false;
  }
  run.restricted_window = CaptureSpan{start_ns, end_ns};
  const auto seconds = [](std::int64_t ns) { return format_seconds(double(ns) / 1e9); };
  run.say(kStage, "the timeline is the discovery capture restricted to the workload's first cudaProfilerStart/Stop "
                  "window (" + seconds(start_ns) + " to " +
                  (end_ns == std::numeric_limits<std::int64_t>::max() ? std::string("the capture's end")
                                                                       : seconds(end_ns)) +
                  " on the capture's clock, " + std::to_string(restricted->kernels_kept) + " kernels) in " +
                  RunLayout::nsys_sqlite().string() + ": no second run under nsys (nsys.restrict_discovery_to_window)");
  run.sqlite_exports.insert_or_assign(RunLayout::nsys_sqlite(), std::pair{probe.report->report, StageResult::ok()});
  run.stage_report(kStage).artifacts.push_back(RunLayout::nsys_sqlite().string());
  adopt_discovery_step_tokens(run);
  attempt = std::move(probe);
  attempt.gated = true;  // the window is the capture's gate: the record says so, and a node pass is gated on it
  return true;
}

// The configured gate, for the sentences that say it never opened.
std::string configured_gate(const PipelineRun& run) {
  if (run.config.nsys.capture_range == NsysCaptureRange::cuda_profiler_api) return "the cudaProfilerApi window";
  return "the NVTX gate `" + run.config.nsys.nvtx_capture + "`";
}

// The workload emits no NVTX range of its own (none, or only a library's), so no gate can be suggested: the run
// scopes the capture itself, as discovery chose. It follows the workload's cudaProfilerStart/Stop window with a
// window-gated capture (unless the configured gate was that window), or keeps the ungated discovery capture as the
// whole run; the whole captured window is the stage (selection, ncu without NVTX filter, inferred steps).
std::optional<StageResult> follow_workload_scope(PipelineRun& run, const NsysInfo& nsys,
                                                 const RangeDiscovery& discovery, Capture& probe, Capture& attempt,
                                                 bool gate_tried) {
  const bool window = discovery.capture_range == "cudaProfilerApi" &&
                      run.config.nsys.capture_range != NsysCaptureRange::cuda_profiler_api;
  run.capture_scope = (gate_tried ? configured_gate(run) + " never opened and "
                                  : "the first capture was discovery's (the bare run named no NVTX range), and ") +
                      discovery.why;
  if (!window && discovery.capture_range == "cudaProfilerApi")
    run.capture_scope += " (the window did not open under nsys, so the whole run is taken instead)";
  run.whole_window_selection = true;
  run.stage_choice = "no NVTX range of the workload's own to select from: the kernels of the whole captured " +
                     std::string(window ? "window" : "run") + " are selected and ncu takes no NVTX filter";
  run.note(kStage, run.capture_scope);
  if (window) {
    run.followed_capture_range = NsysCaptureRange::cuda_profiler_api;
    const auto needs_capture = window_needs_capture(run, discovery, probe);
    if (!needs_capture && take_window_from_discovery(run, discovery, probe, attempt)) return std::nullopt;
    run.say(kStage, "capturing again, inside the workload's own cudaProfilerStart/Stop window" +
                        (needs_capture ? " (" + *needs_capture + ")" : std::string()));
    attempt = capture(run, nsys, true, first_capture("profile_window.log"));
    if (attempt.problem) return attempt.problem;
    if (!attempt.report)
      return StageResult::failed(run.capture_scope + "; but the window-gated capture left no report: " +
                                 attempt.report.error().describe());
    return std::nullopt;
  }
  run.followed_capture_range = NsysCaptureRange::none;
  run.say(kStage, "going on with the discovery capture (ungated, the whole run) as the timeline");
  adopt_discovery_step_tokens(run);
  attempt = std::move(probe);
  attempt.gated = false;
  return std::nullopt;
}

// The discovery capture, and once more tracing forks when it held no kernel; a stopping problem is returned.
std::optional<StageResult> discover(PipelineRun& run, const NsysInfo& nsys, Discovered& found) {
  found.discovery = run_discovery(run, nsys, found.probe);
  if (stops_the_stage(found.probe)) return found.probe.problem;
  if (needs_forks_traced(run, found.discovery)) {
    found.discovery = discover_with_forks_traced(run, nsys, found.probe);
    if (stops_the_stage(found.probe)) return found.probe.problem;
  }
  return std::nullopt;
}

// Whether discovery saw the configured NVTX gate's range ("name" or "name@domain") among the workload's own.
bool emits_gate(const RangeDiscovery& discovery, const std::string& gate) {
  const auto at = gate.find('@');
  const std::string name = gate.substr(0, at);
  const std::string domain = at == std::string::npos ? "" : gate.substr(at + 1);
  return std::any_of(discovery.ranges.begin(), discovery.ranges.end(), [&](const DiscoveredRange& range) {
    return range.library.empty() && range.name == name && range.domain == domain;
  });
}

// run.on_empty_gate = discover: the discovery capture becomes the timeline, with discovery's choice as the stage.
void go_on_with_discovery(PipelineRun& run, const RangeDiscovery& discovery, Capture& probe, Capture& attempt) {
  run.note(kStage, "run.on_empty_gate = discover: going on with the discovery capture (ungated) and `" +
                       discovery.stage + "` for kernel selection and the ncu filter, because " + discovery.why);
  run.discovered_stage = discovery.stage;
  adopt_discovery_step_tokens(run);
  attempt = std::move(probe);
  attempt.gated = false;
  if (attempt.report)
    run.stage_report(kStage).warnings.push_back("the capture never opened; this timeline is the ungated discovery "
                                                "capture, and the stage was chosen by discovery: " +
                                                discovery.stage);
}

}  // namespace

bool discovers_before_gate(const PipelineRun& run, const WorkloadOutput& workload) {
  const OnEmptyGate policy = run.config.run.on_empty_gate;
  if (run.capture_range() != NsysCaptureRange::nvtx) return false;
  if (policy != OnEmptyGate::diagnose && policy != OnEmptyGate::discover) return false;
  // A gate other than the default names a range the user knows the workload emits: it is tried first, as set.
  if (run.config.nsys.nvtx_capture != NsysConfig{}.nvtx_capture) return false;
  return !workload.emitted_ranges || workload.emitted_ranges->names.empty();
}

std::optional<StageResult> capture_after_discovery(PipelineRun& run, const NsysInfo& nsys,
                                                   const WorkloadOutput& workload, Capture& attempt,
                                                   NsysOutput& output, bool& empty_gate) {
  const std::string& gate = run.config.nsys.nvtx_capture;
  run.say(kStage, "the bare run named no NVTX range (the workload writes no llmprof metrics), so the first capture "
                  "is discovery's, without the gate: a workload with no range of its own then needs no capture "
                  "gated on `" + gate + "` that would never open");
  Discovered found;
  if (auto stop = discover(run, nsys, found)) return stop;
  empty_gate = true;
  if (found.discovery && !found.discovery->own_ranges()) {
    log_info(to_string(kStage), describe_discovery(found.discovery.value()));
    return follow_workload_scope(run, nsys, found.discovery.value(), found.probe, attempt, false);
  }
  if (!found.discovery || emits_gate(found.discovery.value(), gate)) {
    // A note: the run took one capture more than a workload whose bare run names its ranges (llmprof metrics).
    run.note(kStage, found.discovery
                         ? "discovery saw `" + gate + "` among the workload's ranges: capturing gated on it (a "
                           "workload that writes llmprof metrics naming its ranges skips discovery)"
                         : "discovery did not help (" + found.discovery.error().describe() + "): capturing gated on `" +
                               gate + "` as configured");
    attempt = capture(run, nsys, true, first_capture("profile.log"));
    if (attempt.problem) return attempt.problem;
    empty_gate = attempt.gate_never_opened;
    if (!empty_gate) return std::nullopt;
  }
  // The gate never opened, or discovery showed that it cannot (the workload does not emit its range).
  return handle_empty_gate(run, nsys, workload, attempt, output, &found);
}

std::optional<StageResult> handle_empty_gate(PipelineRun& run, const NsysInfo& nsys, const WorkloadOutput& workload,
                                             Capture& attempt, NsysOutput& output, Discovered* earlier) {
  const bool profiler_window = run.config.nsys.capture_range == NsysCaptureRange::cuda_profiler_api;
  const auto emitted = emitted_ranges(run, workload);
  std::string diagnosis = profiler_window
                              ? profiler_window_diagnosis(run.nvidia_driver())
                              : diagnose_empty_gate(run.config.nsys.nvtx_capture, emitted, run.config.run.stage);
  if (earlier && !attempt.gated)  // discovery's capture came first and showed the gate's range is not emitted
    diagnosis.replace(0, diagnosis.find(". ") + 2,
                      "the NVTX gate nsys.nvtx_capture=\"" + run.config.nsys.nvtx_capture +
                          "\" would never open (the workload does not emit its range), so no capture was gated on it. ");
  const OnEmptyGate policy = run.config.run.on_empty_gate;
  const bool names_unknown = profiler_window || !emitted || emitted->names.empty();
  if (earlier || policy == OnEmptyGate::discover || (policy == OnEmptyGate::diagnose && names_unknown)) {
    Discovered fresh;
    if (!earlier) {
      run.say(kStage, "discovery: capturing once without the gate to name the ranges the workload emits");
      if (auto stop = discover(run, nsys, fresh)) return stop;
    }
    Discovered& found = earlier ? *earlier : fresh;
    Capture& probe = found.probe;
    auto& discovery = found.discovery;
    if (!discovery) {
      diagnosis += " Discovery did not help: " + discovery.error().describe();
    } else {
      diagnosis = diagnosis.substr(0, diagnosis.find(" The range names the workload emits are unknown"));
      diagnosis += " " + describe_discovery(discovery.value());
      if (!discovery->own_ranges()) {
        log_info(to_string(kStage), diagnosis);
        return follow_workload_scope(run, nsys, discovery.value(), probe, attempt, true);
      }
      if (policy == OnEmptyGate::discover) {
        run.note(kStage, diagnosis);
        go_on_with_discovery(run, discovery.value(), probe, attempt);
        return std::nullopt;
      }
    }
  }
  if (policy == OnEmptyGate::rerun_ungated) {
    run.note(kStage, diagnosis + " Re-running nsys without the gate (run.on_empty_gate = rerun_ungated).");
    attempt = capture(run, nsys, false, first_capture("profile_ungated.log"));
    if (attempt.problem) return attempt.problem;
    if (attempt.report) {
      run.stage_report(kStage).warnings.push_back("the NVTX gate never opened; this timeline is an ungated capture");
    }
    return std::nullopt;
  }
  run.note(kStage, diagnosis);
  if (policy == OnEmptyGate::fail)
    output.halt_profiling = "the NVTX gate never opened and run.on_empty_gate = fail";
  else if (run.config.nsys.capture_range == NsysCaptureRange::cuda_profiler_api)
    // ncu runs with --profile-from-start off under this setting: it would wait for a cudaProfilerStart that never
    // comes while replaying the whole workload. (An NVTX gate's filter: ncu_pass.cpp's unopened_gate_filter.)
    output.halt_profiling = "the cudaProfilerApi window never opened, so ncu, which profiles only inside it "
                            "(--profile-from-start off), would profile no kernel while replaying the whole workload";
  return StageResult::failed(diagnosis);
}

}  // namespace llmprof::detail
