// The part of a report that needs no GPU: the bare run's own figures, the NVTX stage table from the CPU
// timeline, the workload warnings the stages recorded (e.g. a CUPTI conflict) and, on a machine without
// an NVIDIA driver, the plain statement that kernel-level stages need one.
#pragma once

#include <boost/json.hpp>

#include <sstream>

#include "llmprof/report.hpp"

namespace llmprof::detail {

// report.json "bare_run" and "nvtx_ranges" into the model (absent fields stay empty; wrong types throw
// JsonFieldError like the rest of report_loading.cpp).
void read_bare_run_and_ranges(const boost::json::object& report, RunReportModel& model);
// env.json "tools.nvidia_driver.present".
void read_nvidia_driver(const boost::json::object& environment, RunReportModel& model);

// "No NVIDIA GPU on this machine: the kernel-level stages ... need an NVIDIA GPU": the verdict of a run
// on a machine without one (env.json says so), in place of the per-stage GPU verdicts.
const char* no_gpu_statement();

void write_ranges_markdown(const RunReportModel& model, std::ostringstream& out);
void write_ranges_html(const RunReportModel& model, std::ostringstream& out);

}  // namespace llmprof::detail
