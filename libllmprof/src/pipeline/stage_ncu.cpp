// Stage "ncu": Nsight Compute on the selected kernels only, by the per-kernel plan (stage_ncu_plan.cpp)
// or bounded launches, then the raw page as CSV (MAIN/ncu/raw.csv). "No kernels were profiled" gets one bounded re-run
// without the kernel filter; without a selection (nsys skipped or failed) ncu runs unfiltered and bounded from the
// start.
#include "core/duration.hpp"
#include "core/file_text.hpp"
#include "llmprof/kernel_name.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/ncu_command.hpp"
#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/ncu_metrics.hpp"
#include "llmprof/ncu_progress.hpp"
#include "llmprof/shell_quote.hpp"
#include "pipeline/ncu_pass.hpp"
#include "pipeline/tool_call.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::ncu;

NcuPassFilter selection_filter(const SelectOutput& select, bool filtered) {
  NcuPassFilter filter;
  if (filtered) {
    filter.kernel_regex = select.kernel_regex;
    filter.launch_count = select.launch_bound;
  }
  return filter;
}

// A pass of the bounded plan, or its unfiltered re-run: its --launch-count launches (ncu.max_launches without
// one) end its workload.
NcuAttempt run_counted_pass(PipelineRun& run, const NcuInputs& inputs, const NcuPassFilter& filter,
                            const std::string& log_name, std::string label) {
  const std::int64_t launches = filter.launch_count.value_or(std::max<std::int64_t>(run.config.ncu.max_launches, 0));
  NcuPassEnd end = counted_pass_end(run, std::move(label), launches, recorded_kernel_launches(inputs));
  return run_ncu_pass(run, inputs.probe.ncu, filter, log_name, end);
}

}  // namespace

StageResult run_ncu_stage(PipelineRun& run, const NcuInputs& inputs) {
  if (auto skip = ncu_stage_precondition(run, inputs)) return *skip;
  run.stage_report(kStage).ncu_set = run.config.ncu.set;  // run.json: which metrics fed the figures
  const NcuInfo& ncu = inputs.probe.ncu;
  const bool filtered = inputs.select.kernel_regex.has_value();
  bool complete_selection = !inputs.select.selected_kernels.empty();
  if (!filtered)
    run.say(kStage, "no kernel selection (see the select stage): profiling unfiltered, bounded to ncu.max_launches");
  std::optional<NcuAttempt> planned_nothing;
  if (filtered) {
    if (auto planned = run_planned_ncu(run, inputs, planned_nothing)) return *planned;
  }
  NcuAttempt attempt = planned_nothing ? std::move(*planned_nothing)
                                       : run_counted_pass(run, inputs, selection_filter(inputs.select, filtered),
                                                          "profile.log", "the ncu pass");
  if (attempt.problem) return *attempt.problem;
  if (auto skip = ncu_driver_skip(attempt, inputs)) return *skip;
  if (attempt.diagnosis.no_kernels_profiled && filtered && run.config.ncu.retry_without_filter) {
    run.note(kStage, "ncu profiled no kernels with " + attempt.filters +
                         " (ncu listed: " + kernel_list(attempt.diagnosis.available_kernels) +
                         "); re-running once without the kernel filter, bounded to --launch-count " +
                         std::to_string(run.config.ncu.max_launches));
    run.stage_report(kStage).warnings.push_back("the kernel filter matched nothing; " + RunLayout::ncu_report().string() +
                                          " comes from an unfiltered re-run");
    attempt = run_counted_pass(run, inputs, selection_filter(inputs.select, false), "profile_unfiltered.log",
                               "the unfiltered re-run");
    complete_selection = false;  // the unfiltered pass is not a selection to complete
    if (attempt.problem) return *attempt.problem;
  }
  if (auto error = ncu_output_error(attempt.diagnosis, attempt.filters)) return StageResult::failed(error->describe());
  if (!attempt.succeeded())
    return outcome_problem(*attempt.outcome, to_string(kStage), run.stage_report(kStage).log_file.value_or(""));
  const fs::path report = run.directory.layout().resolve(RunLayout::ncu_report());
  if (!fs::exists(report)) {
    return StageResult::failed("ncu finished but wrote no " + RunLayout::ncu_report().string() + "; see " +
                               run.stage_report(kStage).log_file.value_or(""));
  }
  run.stage_report(kStage).artifacts.push_back(RunLayout::ncu_report().string());
  check_report_size(run, kStage, report);
  if (run.stopping()) return StageResult::interrupted("interrupted after ncu profiled");
  StageResult exported = export_raw_csv_of(run, ncu, fs::absolute(report));
  if (exported.status != StageStatus::ok || !complete_selection) return exported;
  profile_missed_kernels(run, inputs);
  return exported;
}

}  // namespace llmprof::detail
