// Reports people read: MAIN/report.md and MAIN/report.html, rendered from a run directory alone.
//
// The only inputs are MAIN/analysis/report.json ("llmprof.report/2" or /1, required) and, when present,
// MAIN/run.json, MAIN/env.json, MAIN/inputs.json, MAIN/config.toml and the stages' cmd.txt files,
// so any run directory (an old one, one copied from a GPU machine, a recorded sample) can be
// re-rendered with `deep-profile report MAIN`. Unknown JSON fields are ignored; null means
// "not computed" and is shown as such, never replaced by a made-up number. report.json's records
// (stages, kernels, device, the verdict, ...) are the analysis's own, and the model they are read into,
// RunReportModel, is declared beside them (report_model.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "llmprof/export.hpp"
#include "llmprof/report_model.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// "Kernels profiled with ncu: the top 10 of stage decode, covering 70.7% of its kernel time; 3 more kernels
// for 80%, ...; 2 collective kernels (12% of its kernel time) left out: ncu cannot replay collectives."
// Plain text: the renderers escape it. `notes` adds what report.json says of the selection beyond the record (ncu's
// measured and extrapolated shares, the share of GPU time the capture lists); with figures_withheld set, the
// coverage figures are not stated (the warnings say which broke its bound).
LLMPROF_API std::string describe_kernel_selection(const KernelSelection& selection,
                                                  const SelectionCoverageNotes& notes = {});

// Reads MAIN. Errors: report.json absent (not_found, hint: run `deep-profile analyze MAIN`), or any
// present file unparsable / with a known field of the wrong type (parse_error naming file and field).
LLMPROF_API Result<RunReportModel> load_run_report(const std::filesystem::path& main_directory);

// Deterministic text (no current time, no absolute paths beyond what the run recorded).
LLMPROF_API std::string render_markdown(const RunReportModel& model);
// One self-contained HTML file: inline CSS and SVG, one tiny inline script for sortable tables.
LLMPROF_API std::string render_html(const RunReportModel& model);

// load_run_report + MAIN/report.md and MAIN/report.html, each written atomically.
LLMPROF_API Result<void> write_reports(const std::filesystem::path& main_directory);

// "void at::native::reduce_kernel<512, ...>(T3)" -> "at::native::reduce_kernel"; at most max_length
// characters (an ellipsis marks a cut). Used for chart labels, never for matching.
LLMPROF_API std::string short_kernel_name(std::string_view name, std::size_t max_length = 40);

}  // namespace llmprof
