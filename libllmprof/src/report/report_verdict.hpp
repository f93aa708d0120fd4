// The Verdict section of report.md and report.html: the headline, the levers ranked by measured gain, and
// every stage's verdict with nested ranges that share their parent's verdict folded under it.
#pragma once

#include <ostream>

#include "llmprof/report.hpp"

namespace llmprof::detail {

// The headline paragraph, at the top of report.md (nothing when no stage was measured).
void write_headline_markdown(const RunReportModel& model, std::ostream& out);
// "## Verdict": the levers and every stage's verdict.
void write_verdict_markdown(const RunReportModel& model, std::ostream& out);
void write_verdict_html(const RunReportModel& model, std::ostream& out);

}  // namespace llmprof::detail
