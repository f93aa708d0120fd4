// Stage "report": MAIN/report.md and MAIN/report.html from the analysis and the manifest.
#include "llmprof/report.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

StageResult run_report_stage(PipelineRun& run, const AnalyzeOutput& analysis) {
  if (!run.config.run.enable_report) return StageResult::skipped("disabled (run.enable_report = false)");
  if (!analysis.written) return StageResult::skipped("no analysis/report.json to render (see the analyze stage)");
  // The report shows the stage table, so it reads a run.json that already has this stage running.
  if (auto written = run.directory.write_manifest(run.clock); !written) {
    return StageResult::failed("could not write run.json: " + written.error().describe());
  }
  if (auto written = write_reports(run.directory.path()); !written) {
    return StageResult::failed("could not write the reports: " + written.error().describe());
  }
  run.stage_report(Stage::report).artifacts = {RunLayout::report_markdown().string(), RunLayout::report_html().string()};
  run.say(Stage::report, "wrote " + run.directory.layout().resolve(RunLayout::report_markdown()).string() + " and " +
                             RunLayout::report_html().string());
  return StageResult::ok();
}

}  // namespace llmprof::detail
