// The report's "GPU utilisation (sampled)" panel: each stage's and step kind's SM, tensor and DRAM activity from
// nsys's GPU-metrics samples (report.json stages[].sampled_*), its DRAM bytes per step beside ncu's measured
// bytes with their ratio, and, where no stage holds samples, one line saying why.
#pragma once

#include <sstream>

#include "llmprof/report.hpp"

namespace llmprof::detail {

void write_sampled_markdown(const RunReportModel& model, std::ostringstream& out);
void write_sampled_html(const RunReportModel& model, std::ostringstream& out);

}  // namespace llmprof::detail
