// Stage "analyze": the analysis of MAIN (nsys tables, ncu raw CSV, stage-1 metrics) into MAIN/analysis/.
#include "llmprof/analysis.hpp"
#include "llmprof/run_analysis.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/stage_analyze_steps.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
AnalysisOptions analysis_options(const PipelineRun& run, const NsysOutput& nsys) {
  AnalysisOptions options = analysis_options_for(run.config, nsys.gate());
  // The stage select chose from (discovery's under run.on_empty_gate = discover), so the analysis reads the
  // select stage's selection.json as the selection of the stage it reports.
  options.selection_stage = run.selection_stage();
  options.capture_gated_on_stage = nsys.gate() == run.selection_stage();
  return options;
}

void store_verdict(PipelineRun& run) {
  if (auto stored = write_run_verdict(run.directory.path()); !stored)
    run.warn(Stage::analyze, "the verdict (headline and levers) was not stored in analysis/report.json: " +
                                 stored.error().describe());
}

Staged<AnalyzeOutput> run_analyze_stage(PipelineRun& run, const NsysOutput& nsys) {
  if (!run.config.run.enable_analyze) return StageResult::skipped("disabled (run.enable_analyze = false)");
  const RunLayout layout = run.directory.layout();
  const bool has_input = nsys.stats || fs::exists(layout.resolve(RunLayout::ncu_raw_csv())) ||
                         fs::exists(layout.resolve(RunLayout::stage1_metrics())) ||
                         fs::exists(layout.resolve(RunLayout::nsys_sqlite()));
  if (!has_input) return StageResult::skipped("nothing to analyze: no nsys tables, no ncu/raw.csv, no stage-1 metrics");
  auto report = analyze_run_directory(run.directory.path(), analysis_options(run, nsys));
  if (!report) return StageResult::failed("analysis failed: " + report.error().describe());
  if (auto written = write_analysis(report.value(), run.directory.analysis_dir()); !written) {
    return StageResult::failed("could not write the analysis: " + written.error().describe());
  }
  StageReport& reported = run.stage_report(Stage::analyze);
  reported.artifacts = {RunLayout::analysis_kernels().string(), RunLayout::analysis_stages().string(),
                      RunLayout::analysis_report().string()};
  for (const auto& warning : report->warnings) reported.warnings.push_back(warning);
  for (const auto& skipped : report->skipped) reported.warnings.push_back("not computed: " + skipped);
  write_step_kinds(run, report.value());
  store_verdict(run);
  return {StageResult::ok(), AnalyzeOutput{.written = true}};
}

}  // namespace llmprof::detail
