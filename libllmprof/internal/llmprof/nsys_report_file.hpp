// Report path resolver: after `nsys profile -o BASE`, the report file, or the reason there is none.
//
// nsys may write BASE.nsys-rep (2021.4+), BASE.qdrep (older), only BASE.qdstrm (its importer failed,
// e.g. libdw.so.1 missing on the recorded H100), or nothing ("No reports were generated" when an NVTX
// capture gate never opened, with exit status 0). Later steps get a report path or an Error saying why,
// never a "file does not exist" of their own.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"
#include "llmprof/tool_probe.hpp"

namespace llmprof {

struct ReportResolveRequest {
  std::filesystem::path output_base;              // the -o BASE given to nsys profile
  std::string profiler_output;                    // nsys profile's captured stdout+stderr text (may be empty)
  std::optional<ProcessOutcome> profile_outcome;  // how nsys profile ended, when known
  std::chrono::milliseconds import_timeout{std::chrono::minutes(30)};
  // The nsys profile argv, when known: lets an error name the NVTX gate (--nvtx-capture) that never opened.
  std::vector<std::string> profile_argv;
  // Called with the exact QdstrmImporter argv just before resolve_report runs it (the pipeline records
  // it in nsys/cmd.txt, so the import can be repeated by hand).
  std::function<void(const std::vector<std::string>&)> on_import;
};

struct ResolvedReport {
  std::filesystem::path report;
  bool imported_from_qdstrm = false;
  std::vector<std::string> notes;  // e.g. "nsys exited with exit code 1 but wrote the report"
};

// Errors: ErrorCode::no_report with a message saying why (NVTX gate never opened / importer cannot load
// its libraries / the .qdstrm is truncated or corrupted / application failed / nothing written) and a hint
// with the fix; subject = the base path.
Result<ResolvedReport> resolve_report(ProcessRunner& runner, const NsysInfo& nsys, const ReportResolveRequest& request);

// True when nsys profile's output says its capture gate never opened, so it captured nothing: 2025.3 prints
// "No reports were generated"; 2022.4 prints "Generated:" with no file under it (taken as the gate only when
// `profile_argv` has an --nvtx-capture). resolve_report's no_report error says so in words; callers that act
// on it (run.on_empty_gate) ask here.
bool capture_gate_never_opened(std::string_view profiler_output, const std::vector<std::string>& profile_argv);

// The paths listed under "Generated:" in nsys profile's output (tab-indented lines); "No reports were
// generated" is not a path and is left out.
std::vector<std::filesystem::path> parse_generated_files(std::string_view profiler_output);

// The NVTX capture expression in an nsys profile argv ("--nvtx-capture=decode", "--nvtx-capture decode",
// "-p decode"); empty when there is none.
std::string nvtx_capture_expression(const std::vector<std::string>& profile_argv);

}  // namespace llmprof
