// The ncu passes the stage runs (see ncu_pass.hpp): one pass's command and run, its raw page as CSV, the
// follow-up passes for selected kernels a pass missed, and the driver check. The stage's entry
// (stage_ncu.cpp) and the per-kernel plan (stage_ncu_plan.cpp) both call into this file, and it calls
// neither, so the ncu path reads one way: stage -> plan -> passes.
#include "core/duration.hpp"
#include "core/format.hpp"
#include "core/file_text.hpp"
#include "core/text.hpp"
#include "llmprof/kernel_name.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/ncu_command.hpp"
#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/ncu_metrics.hpp"
#include "llmprof/ncu_progress.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/shell_quote.hpp"
#include "pipeline/ncu_pass.hpp"
#include "pipeline/ncu_sets.hpp"
#include "pipeline/tool_call.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::ncu;

NcuCommand profile_command(const PipelineRun& run, const NcuInfo& ncu, const NcuPassFilter& filter) {
  return ncu_profile_command(
      run, ncu, filter.kernel_regex, filter.launch_count,
      fs::absolute(run.directory.layout().resolve(RunLayout::ncu_output_base(filter.output_name))), filter.launch_skip,
      filter.filter_mode, filter.by_mangled_name);
}

}  // namespace

NcuCommand ncu_profile_command(const PipelineRun& run, const NcuInfo& ncu,
                               const std::optional<std::string>& kernel_regex, std::optional<std::int64_t> launch_count,
                               const fs::path& output, std::optional<std::int64_t> launch_skip,
                               std::optional<NcuFilterMode> filter_mode, bool by_mangled_name) {
  const NcuConfig& config = run.config.ncu;
  NcuProfileOptions options = ncu_profile_options(config);  // the ncu section, mapped in one place (config layer)
  options.ncu = ncu.path;
  if (!options.own_sections.empty())
    if (auto folder = find_llmprof_section_folder(run.environment)) options.section_folders.insert(options.section_folders.begin(), *folder);
  // A workload that opens its own window (cudaProfilerStart/Stop) is profiled by ncu inside it only. Without
  // this ncu profiles from the start of the process: on the H100 a serving-shaped workload brought new launch
  // configurations with every warm-up batch size and was still under ncu after 386 s, against 15 launches
  // in 212 s with --profile-from-start off (ncu 2025.3.1).
  // The capture the run followed counts, not only the configured one: a workload without NVTX of its own whose
  // window the nsys stage followed is profiled inside that window too.
  options.profile_from_start = run.capture_range() != NsysCaptureRange::cuda_profiler_api;
  if (run.discovered_stage) options.nvtx_include = {*run.discovered_stage + "/"};  // discover, or run.stage = auto
  if (run.whole_window_selection) options.nvtx_include.clear();  // auto without a kind: the window is the stage
  if (kernel_regex) {
    options.kernel_name = *kernel_regex;
    options.kernel_name_base = by_mangled_name ? NcuKernelNameBase::mangled : config.kernel_name_base;
  }
  if (launch_skip) options.launch_skip = *launch_skip;
  options.filter_mode = filter_mode;
  if (launch_count) options.launch_count = *launch_count;
  options.output = output;
  options.force_overwrite = true;
  options.application = run.workload.argv;
  return NcuCommand::profile(ncu, std::move(options));
}

namespace {

void report_line(PipelineRun& run, const std::string& line, NcuPlanProgress* plan, NcuPassEnd& end) {
  // "==PROF== Connected to process 4242 (/usr/bin/python3)" (ncu 2022.3 and 2025.3.1): the processes ncu profiles,
  // which lead the pass end to the application's root.
  if (const auto pid = parse_ncu_connected_process(line)) end.ending->add_target(*pid);
  auto progress = parse_ncu_progress_line(line);
  if (!progress) return;
  if (progress->passes > 0) end.finished_launch(progress->kernel_name, run.clock.now());
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::tool_progress;
  event.stage = to_string(kStage);
  event.message = line;
  if (plan && progress->passes > 0) event.plan_progress = plan->finished_launch(run.clock.now());
  event.kernel_name = progress->kernel_name;
  event.kernel_index = progress->index;
  event.kernel_total = progress->total;
  event.passes = progress->passes;
  run.emit(event);
}

}  // namespace

namespace {

// A pass that ran past its own timeout (the bound, then the time ncu may take to write its report): what ncu wrote
// before it was killed is kept, and the stage says so; without a report the stage fails naming both limits.
void keep_after_timeout(PipelineRun& run, const NcuPassFilter& filter, const NcuPassEnd& end, NcuAttempt& attempt) {
  if (!attempt.problem || !attempt.outcome || !attempt.outcome->timed_out) return;
  const std::string limits = " (" + end.name() + "'s bound " + format_seconds(end.bound.seconds) + ", " +
                             end.bound.source + ", then " + format_seconds(kReportWriteAllowance_s) +
                             " for ncu to write its report, within ncu.timeout_s; raise ncu.pass_timeout_s or "
                             "ncu.timeout_s to give it longer)";
  const fs::path report = run.directory.layout().resolve(RunLayout::ncu_report(filter.output_name));
  if (!fs::exists(report)) {
    attempt.problem->reason += limits;
    return;
  }
  run.warn(kStage, "ncu ran past its timeout and was killed" + limits + "; " +
                       RunLayout::ncu_report(filter.output_name).string() + ", which it had written, is kept");
  attempt.problem.reset();
  attempt.kept_after_timeout = true;
}

}  // namespace

NcuAttempt run_ncu_pass(PipelineRun& run, const NcuInfo& ncu, const NcuPassFilter& filter, const std::string& log_name,
                        NcuPassEnd& end, NcuPlanProgress* plan) {
  NcuAttempt attempt;
  NcuCommand command = profile_command(run, ncu, filter);
  for (const auto& warning : command.drop_unknown_sections(ncu)) run.warn(kStage, warning);
  if (auto valid = command.validate(ncu); !valid) {
    attempt.problem = StageResult::failed("invalid ncu options: " + valid.error().describe());
    return attempt;
  }
  ToolCall call = profiler_call(run, kStage, command.argv(), RunLayout::ncu_log(log_name), run.config.ncu.timeout_s);
  call.recorded_argv = command.without_overwrite().argv();
  call.recorded_comment = kRecordedWithoutOverwrite;
  call.on_line = [&run, plan, &end](const std::string& line) { report_line(run, line, plan, end); };
  end.started = run.clock.now();
  // Every pass ends its workload at its bound if its plan has not; ncu itself is killed only past the time it may
  // then take to write its report.
  call.end_descendants = end.ending;
  call.descendants_kill_grace = seconds_to_milliseconds(run.config.ncu.workload_end_grace_s);
  call.end_descendants_after = seconds_to_milliseconds(end.bound.seconds);
  call.timeout = std::min(call.timeout, seconds_to_milliseconds(end.bound.seconds + run.config.ncu.workload_end_grace_s +
                                                                kReportWriteAllowance_s));
  for (const auto& include : run.config.ncu.nvtx_include) attempt.filters += "--nvtx-include " + include + " ";
  if (filter.kernel_regex) attempt.filters += "--kernel-name " + *filter.kernel_regex;
  attempt.problem = run_profiler_call(run, call, RunLayout::ncu_commands(), to_string(kStage), attempt.outcome);
  keep_after_timeout(run, filter, end, attempt);
  if (attempt.problem) return attempt;
  attempt.diagnosis = diagnose_ncu_output(read_text(run.directory.path() / call.log_file));
  settle_ended_workload(run, end, attempt);
  warn_about_cupti_conflict(run, kStage, call.log_file);
  return attempt;
}

std::string NcuPlanProgress::finished_launch(std::chrono::steady_clock::time_point now) {
  ++finished;
  const double elapsed_s = std::chrono::duration<double>(now - started).count();
  const double per_launch = finished > 0 && elapsed_s > 0 ? elapsed_s / double(finished) : seconds_per_launch;
  const double eta_s = double(std::max<std::int64_t>(planned - finished, 0)) * per_launch;
  std::string line = "launch " + std::to_string(finished) + " of " + std::to_string(planned) + " planned, ETA " +
                     format_seconds(eta_s);
  if (estimated_seconds > 0 && elapsed_s > kPastEstimateFactor * estimated_seconds)
    line += "; past " + format_number(kPastEstimateFactor) + "x the estimate of " + format_seconds(estimated_seconds);
  return line;
}

std::string kernel_list(const std::vector<std::string>& names) {
  std::string joined;
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) joined += (i ? ", " : "") + names[i];
  if (names.size() > 8) joined += " and " + std::to_string(names.size() - 8) + " more";
  return joined.empty() ? "none listed" : joined;
}

// ncu --import REPORT --page raw --csv > <directory>/<csv_name>, through a temporary so that a failed
// or interrupted export never leaves a truncated CSV. `directory` is relative to MAIN.
StageResult export_ncu_raw_csv(PipelineRun& run, const NcuInfo& ncu, const fs::path& report, const fs::path& directory,
                               const std::string& csv_name) {
  const fs::path csv = directory / csv_name;
  const NcuCommand command = NcuCommand::import_csv(ncu.path, report, NcuPage::raw, run.config.ncu.print_units_base);
  ToolCall call{kStage, command.argv()};
  call.log_file = directory / RunLayout::ncu_import_log().filename();
  call.stdout_file = csv.string() + ".partial";
  call.timeout = seconds_to_milliseconds(run.config.ncu.postprocess_timeout_s);
  append_command(run, directory / RunLayout::ncu_commands().filename(), call);
  auto outcome = run_tool(run, call);
  const fs::path partial = run.directory.path() / call.stdout_file;
  std::error_code ignored;
  if (!outcome) return StageResult::failed("could not start ncu --import: " + outcome.error().describe());
  if (!outcome->succeeded()) {
    fs::remove(partial, ignored);
    return outcome_problem(outcome.value(), "ncu --import --page raw --csv", call.log_file.string());
  }
  std::error_code error;
  if (fs::file_size(partial, error) == 0 || error) {
    return StageResult::failed("ncu --import wrote no CSV; see " + call.log_file.string());
  }
  fs::rename(partial, run.directory.layout().resolve(csv), error);
  if (error)
    return StageResult::failed("could not rename " + call.stdout_file.string() + " to " + csv.string() + ": " +
                               error.message());
  run.stage_report(kStage).artifacts.push_back(csv.string());
  return StageResult::ok();
}

StageResult export_raw_csv_of(PipelineRun& run, const NcuInfo& ncu, const fs::path& report, const fs::path& csv) {
  return export_ncu_raw_csv(run, ncu, report, csv.parent_path(), csv.filename().string());
}

namespace {

// The nsys capture's NVTX gate never opened and nothing took its place (no ungated re-run, no discovery), and
// ncu's --nvtx-include names the same push/pop range: ncu can profile nothing either. On the H100 such a pass ran
// a Hugging Face generate() with no `decode` range under ncu until an outer timeout stopped it 44 s later.
std::optional<std::string> unopened_gate_filter(const PipelineRun& run, const NsysOutput& nsys) {
  if (!nsys.unopened_gate || run.discovered_stage || run.whole_window_selection) return std::nullopt;
  const std::string& range = *nsys.unopened_gate;
  const auto& includes = run.config.ncu.nvtx_include;
  const std::string filter = range + "/";
  if (std::find(includes.begin(), includes.end(), filter) == includes.end()) return std::nullopt;
  return "nsys's NVTX gate on `" + range + "` never opened, so ncu's --nvtx-include " + filter +
         " cannot match either (see the nsys stage); set run.stage and ncu.nvtx_include to a range the workload "
         "opens, or ncu.nvtx_include = [] to profile without an NVTX filter";
}

}  // namespace

std::optional<StageResult> ncu_stage_precondition(const PipelineRun& run, const NcuInputs& inputs) {
  if (!run.config.run.enable_ncu) return StageResult::skipped("disabled (run.enable_ncu = false)");
  if (inputs.workload.failure) return StageResult::skipped("not run: " + *inputs.workload.failure);
  if (inputs.nsys.halt_profiling)
    return StageResult::skipped("not run: " + *inputs.nsys.halt_profiling, StageProblemKind::failure);
  const NcuInfo& ncu = inputs.probe.ncu;
  if (!ncu.found) {
    const std::string why = ncu.problems.empty() ? "ncu (Nsight Compute) was not found" : ncu.problems.front();
    return StageResult::skipped(why + "; install Nsight Compute or set ncu.path", StageProblemKind::environment);
  }
  if (inputs.probe.low_disk_space)
    return StageResult::skipped(*inputs.probe.low_disk_space, StageProblemKind::environment);
  if (run.config.ncu.set == kLlmprofNcuSet) {
    std::vector<fs::path> searched;
    if (!find_llmprof_section_folder(run.environment, &searched)) {
      std::vector<std::string> folders;
      for (const auto& folder : searched) folders.push_back(folder.string());
      return StageResult::skipped("ncu.set = \"llmprof\" needs " + std::string(kLlmprofSectionFile) +
                                      " from libllmprof's configuration, found in none of: " + join(folders, ", ") +
                                      "; install libllmprof with its configuration, set LLMPROF_CONFIG_DIR, or set "
                                      "ncu.set = \"roofline\"",
                                  StageProblemKind::environment);
    }
  }
  // A filter that cannot match spent 12.8 s of ncu on the H100 for nothing.
  if (inputs.select.filter_cannot_match && run.config.ncu.kernel_regex.empty())
    return StageResult::skipped("not run: its NVTX filter could not match: " + *inputs.select.filter_cannot_match,
                                StageProblemKind::failure);
  if (auto gate = unopened_gate_filter(run, inputs.nsys))
    return StageResult::skipped("not run: " + *gate, StageProblemKind::failure);
  return std::nullopt;
}

namespace {

// Names of the kernels in an ncu raw CSV (metrics are not converted: only the names are needed).
std::vector<std::string> profiled_kernel_names(const fs::path& csv) {
  std::vector<std::string> names;
  NcuParseOptions options;
  options.keep_metric = [](std::string_view) { return false; };
  auto scanned = for_each_ncu_launch(csv, options, [&names](const NcuKernelLaunch& launch) {
    names.push_back(launch.kernel_name);
    return true;
  });
  if (!scanned) names.clear();
  return names;
}

// Selected kernels that no row of raw.csv matches. The bounded first pass profiles the first
// launches that match the selection, so a kernel that only appears late (e.g. an attention GEMM
// chosen for longer contexts) can be missed.
std::vector<std::string> missed_kernels(const std::vector<std::string>& selected,
                                        const std::vector<std::string>& profiled, KernelNameBase base) {
  std::vector<std::string> missed;
  for (const auto& name : selected) {
    std::string pattern = kernel_name_regex({name}, base);
    if (pattern.rfind("regex:", 0) == 0) pattern.erase(0, 6);
    const std::regex matcher(pattern);
    const bool seen = std::any_of(profiled.begin(), profiled.end(), [&](const std::string& profiled_name) {
      return std::regex_search(base == KernelNameBase::function ? kernel_function_name(profiled_name) : profiled_name,
                               matcher);
    });
    if (!seen) missed.push_back(name);
  }
  return missed;
}

}  // namespace

bool append_ncu_raw_rows(const fs::path& target, const fs::path& extra) {
  const auto target_text = read_file_text(target), extra_text = read_file_text(extra);
  if (!target_text || !extra_text) return false;
  std::istringstream first(*target_text), second(*extra_text);
  std::string target_header, target_units, extra_header, extra_units;
  if (!std::getline(first, target_header) || !std::getline(first, target_units)) return false;
  if (!std::getline(second, extra_header) || !std::getline(second, extra_units)) return false;
  if (target_header != extra_header || target_units != extra_units) return false;
  const auto rows = second.eof() ? extra_text->size() : static_cast<std::size_t>(second.tellg());
  std::ofstream out(target, std::ios::app);
  out << std::string_view(*extra_text).substr(rows);
  return static_cast<bool>(out);
}

// One bounded follow-up pass per selected kernel the first pass missed, each filtered on that
// kernel alone (ncu.launches_per_kernel launches), merged into raw.csv. Failures only warn: the
// first pass already gave a usable raw.csv.
std::optional<std::int64_t> recorded_kernel_launches(const NcuInputs& inputs) {
  return inputs.nsys.stats ? count_kernel_launches(*inputs.nsys.stats) : std::nullopt;
}

void profile_missed_kernels(PipelineRun& run, const NcuInputs& inputs) {
  const NcuInfo& ncu = inputs.probe.ncu;
  const SelectOutput& select = inputs.select;
  const RunLayout layout = run.directory.layout();
  const fs::path raw = layout.resolve(RunLayout::ncu_raw_csv());
  // A selection exists only where its name base does (the select stage refuses mangled).
  const auto selection_base = selection_name_base(run.config.ncu.kernel_name_base);
  if (!selection_base) return;
  const KernelNameBase base = *selection_base;
  const std::vector<std::string> missed = missed_kernels(select.selected_kernels, profiled_kernel_names(raw), base);
  if (missed.empty()) return;
  run.note(kStage,
           std::to_string(missed.size()) + " selected kernel(s) did not occur within the first --launch-count " +
               std::to_string(select.launch_bound.value_or(0)) + " launches; profiling each in its own bounded pass");
  // The stage record keeps naming the main pass; follow-up commands are in ncu/cmd.txt.
  const StageReport saved = run.stage_report(kStage);
  std::size_t index = 0;
  for (const auto& name : missed) {
    if (run.stopping()) return;
    ++index;
    NcuPassFilter filter;
    filter.kernel_regex = kernel_name_regex({name}, base);
    filter.launch_count = std::max<std::int64_t>(run.config.ncu.launches_per_kernel, 1);
    filter.output_name = "followup_" + std::to_string(index);
    const std::string label = "follow-up pass " + std::to_string(index) + " (" + kernel_function_name(name) + ")";
    const std::string log_name = filter.output_name + ".log";
    NcuPassEnd end = counted_pass_end(run, label, *filter.launch_count, recorded_kernel_launches(inputs));
    NcuAttempt attempt = run_ncu_pass(run, ncu, filter, log_name, end);
    const fs::path report = layout.resolve(RunLayout::ncu_report(filter.output_name));
    if (attempt.problem || !attempt.succeeded() || attempt.diagnosis.no_kernels_profiled ||
        !fs::exists(report)) {
      run.warn(kStage, label + " profiled nothing; see " + RunLayout::ncu_log(log_name).string());
      continue;
    }
    const fs::path csv = RunLayout::ncu_csv(filter.output_name);
    if (export_raw_csv_of(run, ncu, fs::absolute(report), csv).status != StageStatus::ok ||
        !append_ncu_raw_rows(raw, layout.resolve(csv))) {
      run.warn(kStage, label + ": its CSV could not be merged into raw.csv; it stays in " + csv.string());
      continue;
    }
    run.stage_report(kStage).artifacts.push_back(RunLayout::ncu_report(filter.output_name).string());
  }
  StageReport& report = run.stage_report(kStage);
  report.command = saved.command;
  report.log_file = saved.log_file;
}

std::optional<StageResult> ncu_driver_skip(const NcuAttempt& attempt, const NcuInputs& inputs) {
  if (!attempt.diagnosis.no_cuda_driver) return std::nullopt;
  // No retry: no filter makes a driver appear. Expected on a machine without a GPU, a problem elsewhere.
  const auto error = ncu_output_error(attempt.diagnosis, attempt.filters);
  const NvidiaDriver& driver = inputs.probe.nvidia_driver;
  const std::string why = error->message + (driver.present ? "" : " (this machine has none: " + driver.evidence + ")");
  return StageResult::skipped(why, driver.present ? StageProblemKind::environment : StageProblemKind::no_hardware);
}

}  // namespace llmprof::detail
