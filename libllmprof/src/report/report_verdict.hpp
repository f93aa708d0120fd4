// The Verdict section of report.md and report.html: the headline and the levers ranked by measured gain, as the
// analysis stored them in report.json (RunReportModel::verdict; a report.json without them gets a note saying how to
// get them, never a verdict computed here), and every stage's verdict with nested ranges that share their parent's
// verdict folded under it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "llmprof/report.hpp"

namespace llmprof::detail {

// Stage verdicts with nested ranges folded: a range whose verdict has its parent's class joins its parent's
// group (transitively), so "attention, mlp, lm_head, sample" read once as "the same" with a table of figures.
// The main stage (main_stage, the one the headline speaks of) always heads a group of its own.
struct VerdictGroup {
  const ReportStage* head = nullptr;
  std::vector<const ReportStage*> folded;  // in report order
};
std::vector<VerdictGroup> fold_stage_verdicts(const RunReportModel& model);

// The one line a report shows where report.json holds no stored verdict (an analysis older than the stored one).
std::string verdict_not_stored();

// The headline paragraph, at the top of report.md (nothing when no stage was measured; the note when none is stored).
void write_headline_markdown(const RunReportModel& model, std::ostream& out);
// "## Verdict": the levers and every stage's verdict.
void write_verdict_markdown(const RunReportModel& model, std::ostream& out);
void write_verdict_html(const RunReportModel& model, std::ostream& out);

}  // namespace llmprof::detail
