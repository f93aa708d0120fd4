// Derived views shared by the Markdown and HTML renderers: headline lines, stage labels, and the
// roofline grouping of kernels by precision.
#pragma once

#include <string>
#include <vector>

#include "llmprof/report.hpp"

namespace llmprof::detail {

std::string stage_label(const ReportStage& stage);  // "decode", "app:decode (in generate)", "CCCL:cub::... [library range: CCCL]"
std::string device_line(const RunReportModel& model);  // "NVIDIA H100 80GB HBM3 · driver 580.159.04"
std::string peaks_line(const ReportDevice& device);    // "fp16 856 TFLOP/s · DRAM 3.35 TB/s"
std::string tools_line(const RunReportModel& model);   // "nsys 2025.3.1.0 · ncu 2025.3.1.0"

// The precision a kernel ran at: report.json's own field, else the device peak that its
// achieved FLOP/s and % of peak imply (closest on a log scale). Empty when unknown.
std::string kernel_precision(const ReportKernel& kernel, const ReportDevice& device);

// Kernels that can sit on a log-log roofline (positive intensity and FLOP/s), grouped by precision.
struct RooflineGroup {
  std::string precision;  // "" when unknown: drawn against every roof
  std::vector<std::size_t> kernel_indices;
};
std::vector<RooflineGroup> roofline_groups(const RunReportModel& model);

// Stages without children (no double counting when splitting GPU time by stage).
std::vector<const ReportStage*> leaf_stages(const RunReportModel& model);

}  // namespace llmprof::detail
