// The ncu stage by the per-kernel plan (llmprof/ncu_plan.hpp): ncu/plan.json and plan.log before ncu
// runs, one ncu pass per plan pass (one in the common case) with --filter-mode per-launch-config, progress
// with an ETA, every pass's rows in raw.csv, then the check of the rows against the plan and the
// measured cost per launch (kept in the runs root for the next plan's estimate).
#include <algorithm>
#include <sstream>

#include "core/file_text.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "llmprof/ncu_metrics.hpp"
#include "pipeline/ncu_launch_cost.hpp"
#include "pipeline/ncu_pass.hpp"
#include "pipeline/ncu_plan_launches.hpp"
#include "pipeline/ncu_sets.hpp"
#include "pipeline/tool_call.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::ncu;

std::vector<ProfiledLaunch> profiled_launches(const fs::path& csv) {
  std::vector<ProfiledLaunch> rows;
  NcuParseOptions options;
  options.keep_metric = [](std::string_view) { return false; };
  auto scanned = for_each_ncu_launch(csv, options, [&rows](const NcuKernelLaunch& launch) {
    rows.push_back({launch.kernel_name, launch.grid_size, launch.block_size});
    return true;
  });
  if (!scanned) rows.clear();
  return rows;
}

std::string check_text(const NcuPlanCheck& check) {
  std::ostringstream text;
  text.precision(3);
  text << check.profiled_planned_launches << " of " << check.planned_launches << " planned launches profiled ("
       << check.rows << " rows), coverage reached " << check.coverage_reached * 100 << "% of the stage's kernel time (measured "
       << check.coverage_measured * 100 << "%, extrapolated " << check.coverage_extrapolated * 100 << "%)";
  if (!check.not_profiled.empty()) {
    text << "; not profiled:";
    for (std::size_t i = 0; i < check.not_profiled.size() && i < 6; ++i) {
      const auto& miss = check.not_profiled[i];
      text << (i ? "," : "") << " " << kernel_function_name(miss.kernel) << " " << miss.config << " (" << miss.profiled
           << "/" << miss.planned << ")";
    }
    if (check.not_profiled.size() > 6) text << " and " << check.not_profiled.size() - 6 << " more";
  }
  return text.str();
}

// One plan pass after the first: its CSV exported and appended to raw.csv; failures only warn.
void run_later_pass(PipelineRun& run, const NcuInfo& ncu, const NcuPassFilter& filter, NcuPlanProgress& progress,
                    NcuPassEnd& end) {
  const RunLayout layout = run.directory.layout();
  const std::string label = "plan " + filter.output_name;
  NcuAttempt attempt = run_ncu_pass(run, ncu, filter, filter.output_name + ".log", end, &progress);
  const fs::path report = layout.resolve(RunLayout::ncu_report(filter.output_name));
  if (attempt.problem || !attempt.succeeded() || attempt.diagnosis.no_kernels_profiled ||
      !fs::exists(report)) {
    run.warn(kStage, label + " profiled nothing; see " + RunLayout::ncu_log(filter.output_name + ".log").string());
    return;
  }
  const fs::path csv = RunLayout::ncu_csv(filter.output_name);
  if (export_ncu_raw_csv(run, ncu, fs::absolute(report), csv.parent_path(), csv.filename().string()).status !=
          StageStatus::ok ||
      !append_ncu_raw_rows(layout.resolve(RunLayout::ncu_raw_csv()), layout.resolve(csv))) {
    run.warn(kStage, label + ": its CSV could not be merged into raw.csv; it stays in " + csv.string());
    return;
  }
  run.stage_report(kStage).artifacts.push_back(RunLayout::ncu_report(filter.output_name).string());
}

NcuPassFilter pass_filter(const NcuPlanPass& pass, std::size_t index) {
  NcuPassFilter filter;
  filter.kernel_regex = pass.kernel_regex;
  filter.by_mangled_name = pass.by_mangled_name;
  filter.launch_skip = pass.launch_skip;
  filter.launch_count = pass.launch_count;
  filter.filter_mode = NcuFilterMode::per_launch_config;
  filter.output_name = index == 0 ? "profile" : "plan_" + std::to_string(index + 1);
  return filter;
}

// The first pass decides the stage: its failures are the stage's, its CSV is raw.csv. `profiled_nothing`:
// ncu said "No kernels were profiled", for the bounded plan's unfiltered retry to take over.
std::optional<StageResult> run_first_pass(PipelineRun& run, const NcuInputs& inputs, const NcuPlanPass& pass,
                                          NcuPlanProgress& progress, NcuPassEnd& end,
                                          std::optional<NcuAttempt>& profiled_nothing) {
  const NcuInfo& ncu = inputs.probe.ncu;
  NcuAttempt attempt = run_ncu_pass(run, ncu, pass_filter(pass, 0), "profile.log", end, &progress);
  if (attempt.problem) return *attempt.problem;
  if (auto skip = ncu_driver_skip(attempt, inputs)) return *skip;
  if (attempt.diagnosis.no_kernels_profiled) {
    profiled_nothing = std::move(attempt);
    return std::nullopt;
  }
  if (auto error = ncu_output_error(attempt.diagnosis, attempt.filters)) return StageResult::failed(error->describe());
  if (!attempt.succeeded())
    return outcome_problem(*attempt.outcome, to_string(kStage), run.stage_report(kStage).log_file.value_or(""));
  const fs::path report = run.directory.layout().resolve(RunLayout::ncu_report());
  if (!fs::exists(report))
    return StageResult::failed("ncu finished but wrote no " + RunLayout::ncu_report().string() + "; see " +
                               run.stage_report(kStage).log_file.value_or(""));
  run.stage_report(kStage).artifacts.push_back(RunLayout::ncu_report().string());
  check_report_size(run, kStage, report);
  if (run.stopping()) return StageResult::interrupted("interrupted after ncu profiled");
  StageResult exported = export_ncu_raw_csv(run, ncu, fs::absolute(report), RunLayout::ncu_directory(),
                                            RunLayout::ncu_raw_csv().filename().string());
  if (exported.status != StageStatus::ok) return exported;
  return std::nullopt;
}

// Returns the measured cost per launch, when there is one.
std::optional<double> record_measurement(PipelineRun& run, const NcuPlan& plan, const NcuPlanCheck& check,
                                         double stage_s) {
  const NcuCostMeasurement measured = measure_ncu_cost(plan, check, stage_s);
  const std::string json = ncu_plan_json(plan, check, measured.seconds_per_launch);
  if (auto written = run.directory.write_json(RunLayout::ncu_plan(), json); !written)
    run.warn(kStage, written.error().describe());
  run.say(kStage,
          check_text(check) +
              (measured.seconds_per_launch ? "; measured " + format_seconds(*measured.seconds_per_launch) + " per launch"
                                           : ""),
          !check.not_profiled.empty());
  if (!measured.seconds_per_launch) return std::nullopt;
  NcuLaunchCost cost{run.config.ncu.set, ncu_workload_key(run), run.directory.path().filename().string(),
                     *measured.seconds_per_launch, measured.start_up_overhead_s};
  if (!record_ncu_launch_cost(ncu_launch_cost_file(run), cost))
    run.say(kStage, "could not write " + ncu_launch_cost_file(run).string() +
                        ": the next plan estimates with the configuration's ncu figures");
  return measured.seconds_per_launch;
}

// The recovery pass's end: like a plan pass's, once each of its kernels came and as many launches as their planned
// configurations hold (ncu profiles every configuration of a filtered kernel again), at twice that if a kernel
// never came; its estimate one replay and those launches.
NcuPassEnd recovery_pass_end(const PipelineRun& run, const NcuPlan& plan, const std::vector<std::string>& kernels,
                             bool by_mangled_name) {
  NcuPassEnd end;
  end.label = "the recovery pass";
  std::int64_t launches = 0;
  for (const auto& config : plan.configs)
    if (std::find(kernels.begin(), kernels.end(), config.kernel) != kernels.end())
      launches += std::int64_t(config.ordinals.size());
  end.bound = ncu_pass_bound(run.config.ncu, plan.seconds_per_pass + double(launches) * plan.seconds_per_launch);
  if (!run.config.ncu.end_workload_when_planned || launches == 0) return end;
  end.planned_launches = launches;
  for (const auto& kernel : kernels) {
    const auto mangled = plan.mangled_names.find(kernel);
    end.expect_kernel(kernel, by_mangled_name && mangled != plan.mangled_names.end() ? mangled->second
                                                                                     : std::vector<std::string>{});
  }
  return end;
}

// One pass over every kernel with a planned (kernel, configuration) that got no row. On the H100 (ncu 2025.3.1,
// the 1b eager decode) a demangled-name pass mixing nvjet GEMMs with elementwise kernels reached
// 1 of 6 planned nvjet configurations; passes by mangled name (when the nsys export has them) reached all, so
// this is the safety net for exports without mangled names and for configurations ncu met in another order.
// One such pass replaces the one-pass-per-kernel follow-ups (35 s each there) for everything it reaches.
NcuPlanCheck recover_shortfalls(PipelineRun& run, const NcuPlan& plan, const NcuInfo& ncu, const NcuPlanCheck& check,
                                NcuPlanProgress& progress) {
  std::vector<std::string> kernels;
  std::int64_t launch_count = 1;
  for (const auto& miss : check.not_profiled) {
    if (std::find(kernels.begin(), kernels.end(), miss.kernel) == kernels.end()) kernels.push_back(miss.kernel);
    launch_count = std::max(launch_count, miss.planned);
  }
  const KernelNameBase base = selection_name_base(run.config.ncu.kernel_name_base).value_or(KernelNameBase::demangled);
  NcuKernelFilter names = ncu_kernel_filter(plan, kernels, base);
  NcuPassFilter filter;
  filter.kernel_regex = std::move(names.kernel_regex);
  filter.by_mangled_name = names.by_mangled_name;
  filter.launch_skip = plan.passes.front().launch_skip;
  filter.launch_count = launch_count;
  filter.filter_mode = NcuFilterMode::per_launch_config;
  filter.output_name = "recovery";
  run.say(kStage, "one recovery pass over the " + std::to_string(kernels.size()) +
                      " kernel(s) whose planned launch configurations got no row");
  NcuPassEnd end = recovery_pass_end(run, plan, kernels, filter.by_mangled_name);
  run_later_pass(run, ncu, filter, progress, end);
  const NcuPlanCheck after =
      check_ncu_plan(plan, profiled_launches(run.directory.layout().resolve(RunLayout::ncu_raw_csv())), base);
  run.say(kStage, "after the recovery pass: " + check_text(after), !after.not_profiled.empty());
  return after;
}

// ncu's figures for a configuration stand for all its launches (the analysis scales FLOP and bytes by
// the launch count): one warning when the planned launches ran much shorter or longer than the rest.
void warn_unrepresentative(PipelineRun& run, const NcuPlan& plan) {
  if (plan.unrepresentative_configs.empty()) return;
  const PlannedConfig& heaviest = plan.configs[plan.unrepresentative_configs.front()];
  std::ostringstream ratio;
  ratio.precision(2);
  ratio << planned_duration_ratio(heaviest);
  const std::optional<double> share =
      plan.stage_kernel_time_ns > 0 ? std::optional(double(heaviest.stage_time_ns) / double(plan.stage_kernel_time_ns))
                                    : std::nullopt;
  run.warn(kStage, std::to_string(plan.unrepresentative_configs.size()) +
                       " planned configuration(s) whose planned launches ran more than " +
                       format_fraction_percent(kRepresentativeTolerance) +
                       " shorter or longer than their configuration's mean (nsys durations), heaviest " +
                       kernel_function_name(heaviest.kernel) + " (" + format_fraction_percent(share) +
                       " of the stage's kernel time, " + ratio.str() +
                       "x): their ncu figures describe those launches, not the stage; ncu/plan.log lists them");
}

// "pass 1: estimated 22.5 s, measured 16.1 s (0.72x); first profiled launch at 9.1 s (start-up by the nsys
// capture 6.4 s)": how the estimate held, pass by pass (each wanted within 1.5x).
std::string pass_timing_text(double start_up_s, std::size_t index, const NcuPlanCheck::PassTiming& timing) {
  std::ostringstream text;
  text.precision(3);
  text << "pass " << index + 1 << ": estimated " << timing.estimated_seconds << " s, measured "
       << timing.measured_seconds << " s";
  if (timing.estimated_seconds > 0) text << " (" << timing.measured_seconds / timing.estimated_seconds << "x)";
  if (timing.first_launch_seconds) {
    text << "; first profiled launch at " << *timing.first_launch_seconds << " s";
    if (start_up_s > 0) text << " (start-up by the nsys capture " << start_up_s << " s)";
  }
  return text.str();
}

// What the passes did beyond the plan, after it in plan.log: the workloads ended early and the stage's time.
void append_plan_log(PipelineRun& run, const NcuPlanCheck& check, double plan_start_up) {
  std::string text = read_text(run.directory.path() / RunLayout::ncu_plan_log());
  for (const auto& ending : check.workload_endings) text += "  " + ending + "\n";
  for (std::size_t i = 0; i < check.pass_timings.size(); ++i) text += "  " + pass_timing_text(plan_start_up, i, check.pass_timings[i]) + "\n";
  text += "  passes took " + format_seconds(check.stage_seconds) + "; " + check_text(check) + "\n";
  (void)run.directory.write_text(RunLayout::ncu_plan_log(), text);
}

// The estimate is what the plan was chosen by: a stage far past it (launch configurations the launch table did
// not have, an ncu slower per launch than measured) is said in the stage's warnings, hence the report.
void warn_past_estimate(PipelineRun& run, const NcuPlan& plan, std::chrono::steady_clock::time_point started) {
  const double stage_s = std::chrono::duration<double>(run.clock.now() - started).count();
  if (plan.estimated_seconds <= 0 || stage_s <= kPastEstimateFactor * plan.estimated_seconds) return;
  run.warn(kStage, "the ncu passes took " + format_seconds(stage_s) + ", more than " +
                       format_number(kPastEstimateFactor) + "x the plan's estimate of " +
                       format_seconds(plan.estimated_seconds) + " (see ncu/plan.log)");
}

// Whether this ncu can run the per-kernel plan and the plan has a launch to profile; says why not when not.
bool plan_can_run(PipelineRun& run, const NcuPlan& plan, const NcuInfo& ncu) {
  if (!ncu.has_filter_mode("per-launch-config")) {
    const std::string listed =
        ncu.filter_modes.empty() ? "its --help could not be read" : "its --help lists " + join(ncu.filter_modes, ", ");
    const std::string why =
        "this ncu has no --filter-mode per-launch-config (" + listed +
        "; Nsight Compute 2025.3 has it): profiling by the bounded plan instead (ncu.plan = bounded)";
    // An ncu that is too old is worth a note in the summary; an unreadable --help only a line.
    if (ncu.filter_modes.empty())
      run.say(kStage, why);
    else
      run.note(kStage, why);
    return false;
  }
  if (plan.passes.empty()) {
    run.note(kStage,
             "the per-kernel plan has no launch to profile (see ncu/plan.log): profiling by the bounded plan instead");
    return false;
  }
  return true;
}

// A plan none of whose launches ncu's rows meet, after the recovery and follow-up passes, measured nothing of
// the planned kernels: the stage failed (0 of 23 planned launches, 67 s, and the stage said ok). A
// plan met in part is ok: the recovery pass's warning names the launches still missing and the coverage reached.
StageResult plan_outcome(PipelineRun& run, const NcuPlan& plan) {
  const NcuPlanCheck final_check =
      check_ncu_plan(plan, profiled_launches(run.directory.layout().resolve(RunLayout::ncu_raw_csv())),
                     selection_name_base(run.config.ncu.kernel_name_base).value_or(KernelNameBase::demangled));
  if (final_check.planned_launches == 0 || final_check.profiled_planned_launches > 0) return StageResult::ok();
  return StageResult::failed("ncu's rows meet none of the " + std::to_string(final_check.planned_launches) +
                             " planned launches (" + std::to_string(final_check.rows) +
                             " rows, all of other kernels or launch configurations; ncu/plan.log lists the plan): "
                             "no figure of the planned kernels was measured, and the analysis has no ncu data for them");
}

}  // namespace

std::optional<StageResult> run_planned_ncu(PipelineRun& run, const NcuInputs& inputs,
                                           std::optional<NcuAttempt>& profiled_nothing) {
  if (run.config.ncu.plan != NcuPlanMode::per_kernel || !inputs.select.selection) return std::nullopt;
  const auto base = selection_name_base(run.config.ncu.kernel_name_base);
  if (!base) return std::nullopt;  // select refuses mangled names before this
  const NcuPlan plan = plan_launches(run, *inputs.select.selection, *base, inputs.nsys);
  const NcuInfo& ncu = inputs.probe.ncu;
  if (!plan_can_run(run, plan, ncu)) return std::nullopt;
  const std::string text = ncu_plan_text(plan);
  (void)run.directory.write_text(RunLayout::ncu_plan_log(), text);
  if (auto written = run.directory.write_json(RunLayout::ncu_plan(), ncu_plan_json(plan)); written)
    run.stage_report(kStage).artifacts.push_back(RunLayout::ncu_plan().string());
  run.say(kStage, text.substr(0, text.find('\n')));
  if (const std::string bound = ncu_plan_bound_text(plan); !bound.empty()) run.note(kStage, bound);
  warn_unrepresentative(run, plan);
  const auto started = run.clock.now();
  NcuPlanProgress progress{plan.planned_launches, 0, plan.seconds_per_launch, started, plan.estimated_seconds};
  std::vector<std::string> endings;
  std::vector<NcuPlanCheck::PassTiming> timings;
  const auto timed = [&](std::size_t index, const NcuPassEnd& end, std::chrono::steady_clock::time_point from) {
    timings.push_back({plan.passes[index].estimated_seconds,
                       std::chrono::duration<double>(run.clock.now() - from).count(), end.first_launch_at_s});
    if (end.ended_at_s) endings.push_back(end.describe());
  };
  {
    NcuPassEnd end = ncu_pass_end(run, plan, 0);
    const auto from = run.clock.now();
    if (auto problem = run_first_pass(run, inputs, plan.passes.front(), progress, end, profiled_nothing))
      return problem;
    if (profiled_nothing) return std::nullopt;  // the same kernels under a bounded count would profile nothing either
    timed(0, end, from);
  }
  for (std::size_t i = 1; i < plan.passes.size() && !run.stopping(); ++i) {
    NcuPassEnd end = ncu_pass_end(run, plan, i);
    const auto from = run.clock.now();
    run_later_pass(run, ncu, pass_filter(plan.passes[i], i), progress, end);
    timed(i, end, from);
  }
  if (run.stopping()) return StageResult::interrupted("interrupted between ncu plan passes");
  NcuPlanCheck check =
      check_ncu_plan(plan, profiled_launches(run.directory.layout().resolve(RunLayout::ncu_raw_csv())),
                     selection_name_base(run.config.ncu.kernel_name_base).value_or(KernelNameBase::demangled));
  check.workload_endings = endings;
  check.pass_timings = timings;
  check.stage_seconds = std::chrono::duration<double>(run.clock.now() - started).count();
  append_plan_log(run, check, plan.start_up_seconds);
  const auto measured =
      record_measurement(run, plan, check, std::chrono::duration<double>(run.clock.now() - started).count());
  if (check.not_profiled.empty() || run.stopping()) {
    warn_past_estimate(run, plan, started);
    return StageResult::ok();
  }
  NcuPlanCheck recovered = recover_shortfalls(run, plan, ncu, check, progress);
  recovered.workload_endings = endings;
  recovered.pass_timings = timings;
  recovered.stage_seconds = std::chrono::duration<double>(run.clock.now() - started).count();
  // plan.json's check is the final one: what the stage's rows hold after the recovery pass.
  if (auto written = run.directory.write_json(RunLayout::ncu_plan(), ncu_plan_json(plan, recovered, measured));
      !written)
    run.warn(kStage, written.error().describe());
  // A kernel still without any row (ncu's order differed from nsys's, a configuration the plan did not
  // know) gets the bounded follow-up pass.
  if (!recovered.kernels_without_rows.empty() && !run.stopping()) profile_missed_kernels(run, inputs);
  warn_past_estimate(run, plan, started);
  return plan_outcome(run, plan);
}

}  // namespace llmprof::detail
