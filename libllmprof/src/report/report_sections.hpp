// The report's sections a lever links to (llmprof/report_model.hpp's ReportSection): their titles, their anchors in
// report.md and report.html, and whether a run's report has them.
#pragma once

#include <string>

#include "llmprof/report.hpp"

namespace llmprof::detail {

std::string section_title(ReportSection section);    // "Stage instances"
std::string markdown_anchor(ReportSection section);  // "#stage-instances-nsys-sqlite-timeline"
std::string html_anchor(ReportSection section);      // "#stage-instances"
// Whether the report has that section (Stage instances needs a timeline, Across ranks a launcher run).
bool has_section(const RunReportModel& model, ReportSection section);

}  // namespace llmprof::detail
