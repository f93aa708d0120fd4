// The report's "Repeats and noise" part: stage 1's repeated bare runs (stage1/repeats.json) with their
// statistics, and what nvidia-smi saw around the GPU stages (gpu_state.json).
#pragma once

#include <filesystem>
#include <sstream>

#include "llmprof/report.hpp"

namespace llmprof::detail {

// Fills model.repeats / gpu_state_*; absent files leave them empty. Errors name the file and field.
Result<void> read_repeats_and_gpu_state(const std::filesystem::path& main_directory, RunReportModel& model);
void write_repeats_markdown(const RunReportModel& model, std::ostringstream& out);
void write_repeats_html(const RunReportModel& model, std::ostringstream& out);

}  // namespace llmprof::detail
