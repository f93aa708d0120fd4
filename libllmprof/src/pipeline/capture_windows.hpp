// Capture windows of a repeat capture (nsys --capture-range-end=repeat[:N]): nsys writes one report per
// window, numbered BASE.1, BASE.2, ...; each is resolved (a .qdstrm imported), listed and exported.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "llmprof/config.hpp"
#include "llmprof/nsys_report_file.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

struct PipelineRun;
struct StageResult;

struct CaptureWindowReport {
  int number = 0;                   // nsys's numbering, from 1
  std::filesystem::path report;     // absolute .nsys-rep (or .qdrep)
  std::filesystem::path directory;  // relative to MAIN: where its stats and SQLite export go
  std::vector<std::string> notes;   // what resolving the report said (an import, a non-zero exit)
};

// True when the capture opens and closes repeatedly, one report per window.
bool captures_windows(const NsysConfig& config, bool gated);

// The window numbers 1..k for which a numbered report (BASE.<k>.nsys-rep, .qdrep or .qdstrm) exists,
// stopping at the first gap; nsys numbers without gaps.
std::vector<int> numbered_windows(const std::filesystem::path& base);

// Each numbered report resolved like a single one (request.output_base is BASE). Empty when nsys wrote none.
Result<std::vector<CaptureWindowReport>> resolve_capture_windows(ProcessRunner& runner, const NsysInfo& nsys,
                                                           const ReportResolveRequest& request);

// The windows after the first: `nsys stats` and the SQLite export into nsys/window-<k>/, and the list of all
// of them in nsys/windows.json. A window whose export fails is warned about and left out of the list.
StageResult export_capture_windows(PipelineRun& run, const NsysInfo& nsys, std::vector<CaptureWindowReport>& windows);

}  // namespace llmprof::detail
