// run.json's record of each stage, written by the stage table alone (deep_profiler.cpp): what a stage reported,
// the files it left unlisted, what run.json keeps of its typed output, and the records a resumed run restarts.
#include "pipeline/stage_records.hpp"

#include <algorithm>
#include <set>

namespace llmprof::detail {
namespace fs = std::filesystem;

void write_manifest_or_warn(PipelineRun& run) {
  if (auto written = run.directory.write_manifest(run.clock); !written) {
    if (written.error().code == ErrorCode::no_space) run.disk_full = written.error().describe();
    run.say_about_run("could not rewrite run.json: " + written.error().describe(), true);
  }
}

// Files a stage left in its own folder but did not list (an interrupted nsys keeps its .nsys-rep)
// are added to its report's artifacts: nothing on disk goes unrecorded.
void record_unlisted_files(PipelineRun& run, Stage stage) {
  const std::optional<fs::path> folder = RunLayout::stage_directory(stage);
  if (!folder) return;
  std::set<std::string> listed;
  const auto list = [&listed](const auto& files) {
    listed.insert(files.artifacts.begin(), files.artifacts.end());
    if (files.cmd_file) listed.insert(*files.cmd_file);
    if (files.log_file) listed.insert(*files.log_file);
  };
  for (const auto& record : run.directory.manifest().stages) list(record);
  StageReport& reported = run.stage_report(stage);  // written into the record when the stage ends
  list(reported);
  std::vector<std::string> found;
  std::error_code error;
  for (fs::recursive_directory_iterator it(run.directory.path() / *folder, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code ignored;
    const std::string relative = it->path().lexically_relative(run.directory.path()).string();
    if (it->is_regular_file(ignored) && it->path().filename().string().front() != '.' && !listed.count(relative)) {
      found.push_back(relative);
    }
  }
  std::sort(found.begin(), found.end());
  reported.artifacts.insert(reported.artifacts.end(), found.begin(), found.end());
}

// What run.json records of a stage's typed output, written here rather than by the stage: the nsys stage's
// capture record (unset when it captured nothing, so a re-run nsys stage never leaves the earlier record).
void record_outputs(PipelineRun& run, Stage stage, const StageOutputs& outputs) {
  if (stage == Stage::nsys) run.directory.manifest().capture = outputs.nsys.capture;
}

// The one writer of what a stage reported into its run.json record. The stage table writes a stage's report when
// the stage returns and again when it ends (the GPU state read after the stage warns in between), so it adds:
// the lists are appended, and the fields the report set replace the record's.
void apply_stage_report(StageRecord& record, StageReport&& report) {
  if (report.command) record.command = std::move(report.command);
  if (report.cmd_file) record.cmd_file = std::move(report.cmd_file);
  if (report.log_file) record.log_file = std::move(report.log_file);
  if (report.exit_code) record.exit_code = *report.exit_code;
  if (report.ncu_set) record.ncu_set = std::move(report.ncu_set);
  const auto append = [](auto& into, auto&& from) {
    into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  append(record.artifacts, std::move(report.artifacts));
  append(record.warnings, std::move(report.warnings));
  append(record.workload_endings, std::move(report.workload_endings));
  append(record.ranks, std::move(report.ranks));
}

// What `stage` reported goes into its record; the report starts afresh for the stage's next run.
void record_stage_report(PipelineRun& run, Stage stage) {
  auto pending = run.stage_reports.find(stage);
  if (pending == run.stage_reports.end()) return;
  apply_stage_report(run.directory.stage(stage), std::move(pending->second));
  run.stage_reports.erase(pending);
}

std::vector<ResumptionRecord::PreviousStage> restart_stage_records(PipelineRun& run, const std::vector<Stage>& rerun) {
  StageRecord& probe = run.directory.stage(Stage::probe);  // the probe runs again: its record starts afresh
  probe = StageRecord{};
  probe.name = to_string(Stage::probe);
  std::vector<ResumptionRecord::PreviousStage> previous;
  for (const Stage stage : rerun) {
    StageRecord& record = run.directory.stage(stage);
    previous.push_back({to_string(stage), record.status, record.reason});
    record = StageRecord{};
    record.name = to_string(stage);
  }
  return previous;
}

}  // namespace llmprof::detail
