// Capture windows of a repeat capture: find nsys's numbered reports, resolve and export each.
//
// Naming recorded with nsys 2022.4.2 (`--capture-range-end=repeat:2 -o rep`): "Generated: rep.1.qdstrm
// rep.2.qdstrm"; NVIDIA's user guide describes the same numbering for `repeat[:N]` ("subsequent capture
// ranges will trigger more collections", one report each).
#include "pipeline/capture_windows.hpp"

#include <boost/json.hpp>
#include <system_error>

#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::nsys;

fs::path numbered_base(const fs::path& base, int window) {
  return fs::path(base.string() + "." + std::to_string(window));
}

bool any_report_at(const fs::path& numbered) {
  std::error_code error;
  for (const char* extension : {".nsys-rep", ".qdrep", ".qdstrm"}) {
    if (fs::is_regular_file(numbered.string() + extension, error)) return true;
  }
  return false;
}

}  // namespace

bool captures_windows(const NsysConfig& config, bool gated) {
  return gated && config.capture_range != NsysCaptureRange::none &&
         config.capture_range_end == NsysCaptureRangeEnd::repeat;
}

std::vector<int> numbered_windows(const fs::path& base) {
  std::vector<int> windows;
  for (int window = 1; any_report_at(numbered_base(base, window)); ++window) windows.push_back(window);
  return windows;
}

Result<std::vector<CaptureWindowReport>> resolve_capture_windows(ProcessRunner& runner, const NsysInfo& nsys,
                                                           const ReportResolveRequest& request) {
  std::vector<CaptureWindowReport> windows;
  for (int number : numbered_windows(request.output_base)) {
    ReportResolveRequest one = request;
    one.output_base = numbered_base(request.output_base, number);
    auto resolved = resolve_report(runner, nsys, one);
    if (!resolved) {
      Error error = resolved.error();
      error.message = "capture window " + std::to_string(number) + ": " + error.message;
      return error;
    }
    CaptureWindowReport window;
    window.number = number;
    window.report = resolved->report;
    window.directory = number == 1 ? RunLayout::nsys_directory() : RunLayout::nsys_window_directory(number);
    window.notes = std::move(resolved->notes);
    windows.push_back(std::move(window));
  }
  return windows;
}

StageResult export_capture_windows(PipelineRun& run, const NsysInfo& nsys, std::vector<CaptureWindowReport>& windows) {
  boost::json::array listed;
  std::vector<CaptureWindowReport> exported;
  for (auto& window : windows) {
    if (window.number > 1) {
      std::error_code error;
      fs::create_directories(run.directory.layout().resolve(window.directory), error);
      NsysStats stats;
      StageResult result = export_nsys_stats(run, nsys, window.report, window.directory, stats);
      if (result.status == StageStatus::ok && run.config.nsys.export_sqlite)
        result = export_nsys_sqlite(run, nsys, window.report, window.directory);
      if (result.status == StageStatus::interrupted) return result;
      if (result.status != StageStatus::ok) {
        run.warn(kStage, "capture window " + std::to_string(window.number) + " was not exported: " + result.reason);
        continue;
      }
      run.stage_report(kStage).artifacts.push_back(fs::relative(window.report, fs::absolute(run.directory.path())).string());
    }
    boost::json::object entry;
    entry["number"] = window.number;
    entry["report"] = fs::relative(window.report, fs::absolute(run.directory.path())).string();
    entry["directory"] = window.directory.string();
    if (run.config.nsys.export_sqlite)
      entry["sqlite"] = (window.directory / RunLayout::nsys_sqlite().filename()).string();
    listed.push_back(std::move(entry));
    exported.push_back(window);
  }
  windows = std::move(exported);
  boost::json::object document;
  document["schema"] = "llmprof.capture_windows/1";
  document["capture_range"] = std::string(choice_name(run.config.nsys.capture_range));
  document["capture_range_end"] = "repeat";
  document["bound"] = run.config.nsys.capture_windows;
  document["windows"] = std::move(listed);
  if (auto written = run.directory.write_json(RunLayout::nsys_windows(), boost::json::serialize(document)); !written)
    run.warn(kStage, "could not write " + RunLayout::nsys_windows().string() + ": " + written.error().describe());
  else
    run.stage_report(kStage).artifacts.push_back(RunLayout::nsys_windows().string());
  return StageResult::ok();
}

}  // namespace llmprof::detail
