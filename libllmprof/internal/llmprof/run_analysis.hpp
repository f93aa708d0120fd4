// Re-analysing a run directory as it was profiled: the analysis options a run used, read back from its
// configuration and its run record (`deep-profile analyze MAIN`, the pipeline's analyze stage, the cross-rank view).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/analysis.hpp"
#include "llmprof/config.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/step_kinds.hpp"

namespace llmprof {

// The analysis options a run used: run.stage, run.top_n_kernels and ncu.kernel_name_base from its
// config, and whether the nsys capture was gated on that stage (`capture_gate`: the NVTX range the
// capture was gated on, if it was).
AnalysisOptions analysis_options_for(const DeepProfileConfig& config, std::optional<std::string> capture_gate);
// The same, read back from a run directory (MAIN/config.toml, and run.json's capture record for the gate),
// so that re-analysing a run reproduces what it measured. not_found without config.toml.
Result<AnalysisOptions> analysis_options_of_run(const std::filesystem::path& main);
// The NVTX range name the captured timeline of the run in `main` is limited to (CaptureRecord::gated_range);
// for a run recorded before run.json had a capture record, read from the last `nsys profile` line of its
// nsys/cmd.txt (the primary rank's under a launcher). nullopt: the capture was not limited to a range.
std::optional<std::string> capture_gate_of_run(const std::filesystem::path& main, const RunManifest& manifest);

// The engine steps of the run in `main` (analysis/step_kinds.json and .md, llmprof/step_kinds.hpp): window 1 from
// the analysed timeline, windows 2.. from nsys/window-<k>/profile.sqlite, with the workload's step tokens read
// again from nsys/step_tokens.json. The analyze stage and `deep-profile analyze MAIN` both call it, so a
// re-analysis replaces what an earlier one wrote (and removes it when no step range is found now). What could
// not be read is appended to `warnings`; returns the windows (empty: no step range). `source` (run.step_source):
// sync cuts the steps at the host's synchronisation instead (llmprof/sync_steps.hpp), as auto does when the
// capture is the workload's own window and holds no NVTX range.
std::vector<StepKindReport> write_engine_steps(const std::filesystem::path& main, const AnalysisReport& report,
                                               StepWindow window, std::vector<std::string>& warnings,
                                               StepSource source = StepSource::automatic);

// The verdict (the headline and the ranked levers, llmprof/report_model.hpp's RunVerdict) computed from the run's
// report model and stored in MAIN/analysis/report.json as "verdict". Called last by the analyze stage and by
// `deep-profile analyze MAIN`, after report.json, step_kinds.json and ranks.csv are written: the verdict reads them.
// Returns report.json's text as written (what `deep-profile analyze --json` prints). Errors: those of load_run_report
// (report.json absent or unreadable), or report.json cannot be rewritten.
Result<std::string> write_run_verdict(const std::filesystem::path& main_directory);

}  // namespace llmprof
