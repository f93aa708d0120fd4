// The verdict a stakeholder reads first (llmprof/report_model.hpp's RunVerdict), computed from the run's report
// model: the main stage (the profiled one, else `decode`, else the outermost measured stage of the workload's own),
// its headline and the ranked levers of it and of each engine step kind. The analysis stores it in report.json
// ("verdict") once the step records (step_kinds.json) and the cross-rank view (ranks.csv) it reads are written;
// report.md and report.html render the stored record and never compute it.
#pragma once

#include <string>

#include "llmprof/report_model.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

// The verdict of `model`: a headline of the captured window and its inferred steps where no stage of the
// workload's own was measured; an empty headline and no stages where neither is known.
RunVerdict summarize_run_verdict(const RunReportModel& model);

// summarize_run_verdict(model), written into model.main_directory's analysis/report.json as "verdict" (the rest of
// the file as it is); returns the file's text as written. not_found without report.json, parse_error for one that
// does not parse.
Result<std::string> store_run_verdict(const RunReportModel& model);

}  // namespace llmprof::detail
