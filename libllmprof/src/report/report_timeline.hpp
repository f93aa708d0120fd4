// The report's timeline sections (report.json "timeline", from the nsys SQLite export): per-stage
// instance figures, measurement validity, and in HTML a per-step chart and a step-time histogram.
#pragma once

#include <sstream>

#include <boost/json/object.hpp>

#include "llmprof/report.hpp"

namespace llmprof::detail {

// Reads root["timeline"] when present and not null; throws JsonFieldError on a wrong type.
void read_timeline(const boost::json::object& root, RunReportModel& model);
void write_timeline_markdown(const RunReportModel& model, std::ostringstream& out);
void write_timeline_html(const RunReportModel& model, std::ostringstream& out);

}  // namespace llmprof::detail
