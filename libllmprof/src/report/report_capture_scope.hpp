// Which capture each figure of the report comes from, where two disagree: the nsys stats tables (CSV
// summaries) cannot see kernels inside CUDA graphs traced whole (--cuda-graph-trace=graph, nsys's
// default) and measure busy against the GPU projection, while the timeline (nsys SQLite export) counts
// graph executions as GPU work and measures busy over the time the stage was active (recorded with
// nsys 2025.3 on the H100 CUDA-graph decodes of examples/graphs-h100).
#pragma once

#include <string>

#include "llmprof/report.hpp"
#include "rundir/report_model_views.hpp"

namespace llmprof::detail {

// timeline_stage_of, the timeline stage behind a Stages row, is shared with the analysis:
// rundir/report_model_views.hpp.

// The timeline stage that stands for the kernel table: the ncu selection's stage when the timeline has
// it, else the outermost stage with the most recorded GPU time. nullptr without a timeline.
const TimelineStage* kernel_table_stage(const RunReportModel& model);

// Whether the kernel table misses graph kernels: a graph-traced capture whose kernel-table stage ran
// some of its GPU time inside CUDA graph executions.
bool kernel_table_misses_graph_kernels(const RunReportModel& model);

// One paragraph on the capture the kernel table comes from and what it leaves out, with figures
// ("these kernels are the 0.90% of `decode`'s recorded GPU time launched outside CUDA graphs; 99.1% ran
// inside 14 CUDA graph executions ..."); empty when the capture has no CUDA graphs. Plain text.
std::string kernel_table_scope(const RunReportModel& model);

// Sets top_kernel_selection_notes.listed_share_of_gpu_time when the kernel table misses graph kernels.
void annotate_selection_scope(RunReportModel& model);

// The Stages table: "99% (timeline)" or "15% (stats)", the kernel count with the graph executions the
// stats cannot see ("0 + 128 graph executions"), and the caption naming each source.
std::string stage_busy_cell(const RunReportModel& model, const ReportStage& stage);
std::string stage_kernels_cell(const RunReportModel& model, const ReportStage& stage);
std::string stages_caption(const RunReportModel& model);

// A share as a percentage that never reads "100%" or "0%" unless it is exactly that.
std::string share_text(double fraction);

}  // namespace llmprof::detail
