// The Stages table's DRAM columns (measured bytes per step, bandwidth, measured and model MBU, and the
// share of kernel time whose bytes ncu measured) and the verdict card's figures for a memory-bound stage,
// shared by the Markdown and HTML renderers. A blank cell is explained in the caption: the stage's
// time did not enclose its kernels, ncu measured none of its kernels, or report.json predates the keys.
#pragma once

#include <string>

#include "llmprof/report.hpp"

namespace llmprof::detail {

// Cells: "2.20 GB", "203 GB/s", "6.0%", "9.1%", "91%"; the not-computed mark when null.
std::string dram_per_step_cell(const ReportStage& stage);
std::string dram_bandwidth_cell(const ReportStage& stage);
std::string mbu_cell(const ReportStage& stage);
std::string mbu_model_cell(const ReportStage& stage);
std::string bytes_coverage_cell(const ReportStage& stage);

// What the DRAM columns are, and per stage why one of them is blank; plain text.
std::string dram_caption(const RunReportModel& model);

// The verdict card of a memory-bound stage: "MBU 17% measured · 24% model" and "step 190 µs, 17% of the
// DRAM limit (31.4 µs)" ("`mlp` range 190 µs, ..." where no step is known); empty for other stages or where the
// figures are absent.
std::string memory_bound_mbu_line(const ReportStage& stage);
std::string memory_bound_headroom_line(const ReportStage& stage);

}  // namespace llmprof::detail
