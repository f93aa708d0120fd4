// Stage "select": the kernels of the chosen NVTX stage that ncu profiles (top-N or by coverage, never
// collectives), what more coverage would take, and the ncu --kernel-name regex with a launch bound that
// reaches each of them.
#include <boost/json.hpp>
#include <sstream>

#include "core/enum_table.hpp"
#include "core/format.hpp"
#include "llmprof/kernel_selection.hpp"
#include "llmprof/ncu_plan.hpp"
#include "pipeline/ncu_pass.hpp"
#include "pipeline/stage_choice.hpp"
#include "rundir/kernel_selection_json.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::select;

// selection.json holds the bound ncu runs with (raised / capped by ncu.*), not the selection's own.
std::string selection_json(KernelSelection selection, std::int64_t launch_count) {
  selection.launch_count = launch_count;
  return kernel_selection_file(selection);
}

// Coverages are read against their target, so three significant digits: 98.7% never reads as "99%".
std::string percent(double fraction) { return format_fraction_percent(fraction, PercentDigits::three_significant); }

// "3 more kernels for 95%, 9 more for 99%"; "99% is out of reach (collectives hold 12%)".
std::string more_coverage_text(const KernelSelection& selection) {
  std::string text;
  for (const auto& step : selection.more_coverage) {
    if (!text.empty()) text += ", ";
    if (!step.reachable) {
      text += percent(step.target) + " is out of reach (collectives hold " + percent(selection.collective_share) + ")";
      continue;
    }
    text += std::to_string(step.more_kernels) +
            (text.empty() ? (step.more_kernels == 1 ? " more kernel" : " more kernels") : " more") + " for " +
            percent(step.target);
  }
  return text;
}

std::string rule_text(const KernelSelection& selection) {
  if (!selection.coverage_target) return "top " + std::to_string(selection.kernels.size());
  std::string text = "coverage target " + percent(*selection.coverage_target) + ", at most " +
                     std::to_string(selection.max_kernels) + " kernels";
  if (selection.capped) text += " (the cap stopped it short of the target)";
  return text;
}

std::string collectives_text(const KernelSelection& selection) {
  if (selection.collectives_left_out.empty()) return "";
  return std::to_string(selection.collectives_left_out.size()) + " collective kernel(s) left out (" +
         percent(selection.collective_share) +
         " of the stage's kernel time): ncu replays kernels serially and a "
         "collective waits for peers, so profiling one hangs the workload";
}

std::string selection_log(const KernelSelection& selection) {
  std::ostringstream text;
  text.precision(3);
  text << "stage " << selection.stage << " (" << selection.source << "), " << rule_text(selection) << ": "
       << selection.kernels.size() << " of " << selection.stage_kernel_count << " kernels, coverage "
       << percent(selection.coverage) << " of the stage's kernel time\n";
  for (const auto& kernel : selection.kernels) {
    text << "  " << kernel.share * 100 << "%  x" << kernel.instances << "  " << kernel.name << "\n";
  }
  if (const auto more = more_coverage_text(selection); !more.empty()) text << "to cover more: " << more << "\n";
  if (const auto collectives = collectives_text(selection); !collectives.empty()) {
    text << collectives << ":\n";
    for (const auto& kernel : selection.collectives_left_out) {
      text << "  " << kernel.share * 100 << "%  x" << kernel.instances << "  " << kernel.name << "\n";
    }
  }
  text << "ncu --kernel-name " << selection.kernel_regex << "\n";
  return text.str();
}

Result<KernelNameBase> name_base(NcuKernelNameBase configured) {
  if (auto base = selection_name_base(configured)) return *base;
  const std::string name(choice_name(configured));
  return make_error(ErrorCode::unsupported,
                    "top-N selection cannot build a kernel regex for ncu.kernel_name_base=" + name,
                    "use ncu.kernel_name_base=demangled or function, or give ncu.kernel_regex yourself", name);
}

// The selection's bound, raised for launches_per_kernel and capped by ncu.max_launches.
std::int64_t launch_bound(PipelineRun& run, const KernelSelection& selection) {
  const auto& ncu = run.config.ncu;
  std::int64_t wanted = selection.launch_count + std::max<std::int64_t>(ncu.launches_per_kernel, 1) - 1;
  if (ncu.max_launches > 0 && wanted > ncu.max_launches) {
    const std::string text = "the selection needs --launch-count " + std::to_string(wanted) +
                             " to reach every kernel; capped at ncu.max_launches=" + std::to_string(ncu.max_launches) +
                             ", so the rarest kernels may not be profiled";
    // The per-kernel plan does not use the bound; it matters only where ncu falls back to the bounded plan.
    if (ncu.plan == NcuPlanMode::per_kernel)
      run.say(kStage, text + " by the bounded plan, should ncu fall back to it");
    else
      run.warn(kStage, text);
    wanted = ncu.max_launches;
  }
  return wanted;
}

}  // namespace

// One row per NcuKernelNameBase in declaration order; a mangled name has no base the selection's names are in.
constexpr detail::EnumRow<NcuKernelNameBase, std::optional<KernelNameBase>> kSelectionNameBases[] = {
    {NcuKernelNameBase::function, KernelNameBase::function},
    {NcuKernelNameBase::demangled, KernelNameBase::demangled},
    {NcuKernelNameBase::mangled, std::nullopt}};
static_assert(detail::rows_in_enum_order(kSelectionNameBases));

std::optional<KernelNameBase> selection_name_base(NcuKernelNameBase base) {
  return detail::enum_value(kSelectionNameBases, base, std::optional<KernelNameBase>());
}

namespace {

// The --set line that makes select and the ncu filter find a range: the step kind the capture holds most GPU time
// in, or, without one, run.stage = auto's verdict on why there is none.
std::string working_set_line(const PipelineRun& run) {
  auto choice = choose_step_kind(run);
  if (!choice) return "no step kind in the capture either (" + choice.error().message + ")";
  return "the step kind with the most GPU time is `" + choice->stage + "`: --set run.stage=" + choice->stage +
         " --set 'ncu.nvtx_include=[\"" + choice->stage + "/\"]' (or --set run.stage=auto)";
}

}  // namespace

Staged<SelectOutput> run_select_stage(PipelineRun& run, const NsysOutput& nsys) {
  SelectOutput output;
  if (!run.config.ncu.kernel_regex.empty()) {
    output.kernel_regex = run.config.ncu.kernel_regex;
    return {StageResult::skipped("ncu.kernel_regex is set, so ncu uses it as given"), std::move(output)};
  }
  if (!run.config.run.enable_ncu)
    return StageResult::skipped("ncu is disabled (run.enable_ncu = false), nothing to select for");
  if (!nsys.stats) return StageResult::skipped("no nsys tables to select from (see the nsys stage)");
  // Not a failure: a machine without a GPU runs no kernel, so there is nothing to select.
  if (nsys.no_kernels_without_gpu)
    return StageResult::skipped(*nsys.no_kernels_without_gpu, StageProblemKind::no_hardware);
  auto base = name_base(run.config.ncu.kernel_name_base);
  if (!base) return StageResult::failed(base.error().describe());
  if (!run.stage_choice.empty()) run.say(kStage, run.stage_choice);  // run.stage = auto: which kind, and why
  if (run.config.run.stage == kAutoStage && !run.discovered_stage && !run.whole_window_selection) {
    auto choice = choose_step_kind(run);
    const std::string why = "run.stage = auto found no step kind to select from: " +
                            (choice ? std::string("none was chosen") : choice.error().message);
    output.filter_cannot_match = why + "; set run.stage (and ncu.nvtx_include) to the range to profile";
    return {StageResult::failed(why), std::move(output)};
  }
  TopKernelRequest request;
  request.stage = run.selection_stage();
  request.n = static_cast<std::size_t>(std::max(run.config.run.top_n_kernels, 1));
  if (run.config.run.kernel_coverage > 0) request.coverage = run.config.run.kernel_coverage;
  request.max_kernels = static_cast<std::size_t>(std::max(run.config.run.max_kernels, 1));
  request.name_base = base.value();
  request.capture_gated_on_stage = nsys.gate() == run.selection_stage();
  if (run.whole_window_selection) {
    request.stage = "the captured window";
    request.whole_capture = true;
  }
  auto selection = select_top_kernels(nsys.stats.value(), request);
  if (!selection) {
    if (selection.error().code == ErrorCode::not_found && !run.config.nsys.export_sqlite)
      output.filter_cannot_match = selection.error().message;
    else if (selection.error().code == ErrorCode::not_found)
      output.filter_cannot_match = selection.error().message + "; " + working_set_line(run);
    return {StageResult::failed(selection.error().describe()), std::move(output)};
  }
  const std::int64_t launches = launch_bound(run, selection.value());
  output.kernel_regex = selection->kernel_regex;
  output.launch_bound = launches;
  for (const auto& kernel : selection->kernels) output.selected_kernels.push_back(kernel.name);
  output.selection = selection.value();
  StageReport& reported = run.stage_report(kStage);
  if (auto written =
          run.directory.write_json(RunLayout::kernel_selection(), selection_json(selection.value(), launches));
      written) {
    reported.artifacts.push_back(RunLayout::kernel_selection().string());
  } else {
    run.warn(kStage, written.error().describe());
  }
  if (auto written = run.directory.write_text(RunLayout::select_log(), selection_log(selection.value())); written) {
    reported.log_file = RunLayout::select_log().string();
  }
  std::string message = std::to_string(selection->kernels.size()) + " kernels of " + selection->stage + " (" +
                        rule_text(selection.value()) + ") cover " + percent(selection->coverage) +
                        " of its kernel time";
  if (nsys.kernels_from_node_capture) message += " (kernels of the node-traced capture, CUDA graphs' included)";
  if (const auto more = more_coverage_text(selection.value()); !more.empty()) message += "; " + more;
  run.say(kStage, message);
  if (const auto collectives = collectives_text(selection.value()); !collectives.empty()) run.warn(kStage, collectives);
  if (selection->capped) {
    run.warn(kStage, "run.max_kernels=" + std::to_string(selection->max_kernels) + " stopped the selection at " +
                         percent(selection->coverage) +
                         ", short of run.kernel_coverage=" + percent(*selection->coverage_target));
  }
  return {StageResult::ok(), std::move(output)};
}

}  // namespace llmprof::detail
