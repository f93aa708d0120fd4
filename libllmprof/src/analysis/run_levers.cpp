// The levers of one stage, ranked by measured gain (see run_levers.hpp).
#include "analysis/run_levers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/format.hpp"
#include "rundir/report_model_views.hpp"

namespace llmprof::detail {
namespace {

// Below this share of kernel time with measured bytes (or FLOP), a limit per step would mostly be a guess.
constexpr double kMinimumCoverage = 0.5;

std::string coverage_note(double coverage, const char* what) {
  if (coverage >= 0.995) return "";
  return " (" + std::string(what) + " measured for " + format_fraction_percent(coverage) + " of its kernel time)";
}

// Steps of the stage, in its unit (ReportStage::step_basis: steps where one is known, else the range's instances);
// a report.json older than the unit has it completed when read (complete_step_units).
std::optional<double> stage_steps(const ReportStage& stage) {
  if (positive(stage.steps)) return stage.steps;
  return std::nullopt;
}

void measure_steps(const RunReportModel& model, const ReportStage& stage, const TimelineStage* timed,
                   VerdictStage& levers) {
  const auto steps = stage_steps(stage);
  const auto& bare = model.bare_run;
  // The bare run's time per decode step stands for a stage that counts the same decode steps.
  if (bare && positive(bare->time_per_output_token_s) && steps && stage.counts_steps() &&
      std::fabs(*steps - static_cast<double>(bare->new_tokens)) < 0.5) {
    levers.step_ns = bare->time_per_output_token_s * 1e9;
    levers.step_from_bare_run = true;
  }
  const double per_instance =
      steps && timed && timed->cpu_duration.count > 0 ? *steps / static_cast<double>(timed->cpu_duration.count) : 0;
  if (timed && timed->headroom && per_instance > 0 && timed->headroom->predicted_step_ns > 0) {
    levers.gpu_work_step_ns = timed->headroom->predicted_step_ns / per_instance;
    levers.profiled_step_ns = timed->headroom->current_step_ns / per_instance;
  } else if (timed && timed->gpu_busy_fraction && steps && timed->gpu_busy_ns > 0) {
    levers.gpu_work_step_ns = static_cast<double>(timed->gpu_busy_ns) / *steps;
  }
  if (!levers.profiled_step_ns && positive(stage.step_ns)) levers.profiled_step_ns = stage.step_ns;
  if (levers.profiled_step_ns && !positive(levers.profiled_step_ns)) levers.profiled_step_ns.reset();
  if (!levers.step_ns) levers.step_ns = levers.profiled_step_ns;
}

std::string step_text(const ReportStage& stage, const VerdictStage& levers) {
  return format_duration_ns(*levers.step_ns) + " " + per_unit(stage) +
         (levers.step_from_bare_run ? " in the bare run" : " under the profiler");
}

// Why the timeline gives no GPU figures for the stage (timeline_stage_of found none): there is no timeline, it has no
// such range, its capture traced no CUDA work, or no GPU work launched inside the range was recorded.
std::string untimed_reason(const RunReportModel& model, const ReportStage& stage) {
  if (!model.timeline) return "no nsys SQLite timeline for this stage";
  const auto found = std::find_if(
      model.timeline->stages.begin(), model.timeline->stages.end(),
      [&](const TimelineStage& timed) { return timed.name == stage.name && timed.domain == stage.domain; });
  if (found == model.timeline->stages.end())
    return "the nsys SQLite timeline holds no `" + stage.qualified_name() + "` range";
  if (model.timeline->cuda_untraced)
    return "the capture traced no CUDA work (nsys.trace without cuda), so the timeline has no GPU work for it";
  return "the timeline recorded no GPU work launched inside its ranges";
}

VerdictLever launch_overhead_lever(const RunReportModel& model, const ReportStage& stage, const VerdictStage& levers,
                                   const TimelineStage* timed) {
  VerdictLever lever{"launch overhead", std::nullopt, "", "", "", ReportSection::stage_instances};
  if (!timed) {
    lever.withheld = untimed_reason(model, stage) + ": its GPU work per step is not measured";
  } else if (!timed->headroom) {
    lever.withheld =
        verdict_class(stage.verdict) == "host/launch-bound"
            ? "its GPU work per step has no steady-state figure"
            : "not launch-bound (" + verdict_class(stage.verdict) +
                  (stage.gpu_busy_fraction ? ", GPU busy " + format_fraction_percent(stage.gpu_busy_fraction)
                                           : std::string()) +
                  ")";
  } else if (!levers.gpu_work_step_ns || !levers.step_ns) {
    lever.withheld = "the steps of this stage are not counted";
  } else {
    lever.figure = "GPU work " + format_duration_ns(*levers.gpu_work_step_ns) + " " + per_unit(stage) +
                   " (timeline) against " + step_text(stage, levers);
    if (*levers.step_ns > *levers.gpu_work_step_ns)
      lever.speedup = *levers.step_ns / *levers.gpu_work_step_ns;
    else
      lever.withheld = "the step already takes no longer than its GPU work";
  }
  return lever;
}

// The step the kernel levers shorten: the GPU work of a launch-bound stage (its launch overhead goes first),
// else the step itself.
std::optional<double> kernel_base(const VerdictStage& levers, const VerdictLever& launch) {
  if (launch.speedup) return levers.gpu_work_step_ns;
  return levers.step_ns;
}

// The gain of reaching a roofline limit. A step measured shorter than its limit breaks an invariant (the bytes or
// FLOP, the peak or the step is wrong): then the limit is dropped, not printed.
void judge_against_limit(std::optional<double>& limit_ns, const std::optional<double>& base_ns,
                         const VerdictLever& launch, const std::string& limit_name, VerdictLever& lever) {
  if (!limit_ns) return;
  if (!base_ns) {
    lever.withheld = "its step time is not measured";
  } else if (*base_ns < *limit_ns * 0.95) {
    lever.withheld = "the step (" + format_duration_ns(*base_ns) + ") is shorter than the " + limit_name + " limit (" +
                     format_duration_ns(*limit_ns) + "): its inputs disagree, so no limit is given";
    lever.figure.clear();
    limit_ns.reset();
  } else if (*base_ns <= *limit_ns) {
    lever.withheld = "the step already runs at the " + limit_name + " limit";
  } else {
    lever.speedup = *base_ns / *limit_ns;
    if (launch.speedup) lever.after = "launch overhead";
  }
}

VerdictLever hbm_lever(const RunReportModel& model, const ReportStage& stage, VerdictStage& levers,
                       const VerdictLever& launch) {
  VerdictLever lever{"HBM limit", std::nullopt, "", "", "", ReportSection::stages};
  const auto& peak = model.device.peak_dram_bytes_per_s;
  if (!stage.dram_keys_recorded) {
    lever.withheld = "report.json predates measured DRAM bytes: re-run `deep-profile analyze` on this run";
  } else if (!positive(stage.dram_bytes_per_step)) {
    lever.withheld = "no DRAM bytes measured by ncu for its kernels";
  } else if (stage.dram_coverage < kMinimumCoverage) {
    lever.withheld = "bytes measured for only " + format_fraction_percent(stage.dram_coverage) + " of its kernel time";
  } else if (!positive(peak)) {
    lever.withheld = "no peak DRAM bandwidth for this device";
  } else {
    levers.hbm_limit_step_ns = *stage.dram_bytes_per_step / *peak * 1e9;
    lever.figure = format_si(stage.dram_bytes_per_step, "B") + " " + per_unit(stage) + " at " + format_si(peak, "B/s") +
                   " = " + format_duration_ns(*levers.hbm_limit_step_ns) + coverage_note(stage.dram_coverage, "bytes");
  }
  judge_against_limit(levers.hbm_limit_step_ns, kernel_base(levers, launch), launch, "HBM", lever);
  return lever;
}

VerdictLever compute_lever(const RunReportModel& model, const ReportStage& stage, VerdictStage& levers,
                           const VerdictLever& launch) {
  VerdictLever lever{"compute limit", std::nullopt, "", "", "", ReportSection::stages};
  const auto steps = stage_steps(stage);
  std::optional<double> peak;
  for (const auto& [precision, flop_per_s] : model.device.peak_flop_per_s)
    if (precision == stage.dominant_precision) peak = flop_per_s;
  if (stage.flop && *stage.flop == 0 && stage.flop_coverage >= kMinimumCoverage) {
    levers.compute_limit_step_ns = 0;  // measured: no floating-point work, so the HBM limit alone bounds the step
    lever.withheld = "ncu counted no FLOP in its kernels";
    return lever;
  }
  if (!positive(stage.flop)) {
    lever.withheld = "no FLOP counted by ncu for its kernels";
  } else if (!steps) {
    lever.withheld = "the steps of this stage are not counted";
  } else if (stage.flop_coverage < kMinimumCoverage) {
    lever.withheld = "FLOP measured for only " + format_fraction_percent(stage.flop_coverage) + " of its kernel time";
  } else if (!positive(peak)) {
    lever.withheld = "no peak FLOP/s for its precision (" +
                     (stage.dominant_precision.empty() ? std::string("not identified") : stage.dominant_precision) +
                     ")";
  } else {
    const double flop_per_step = *stage.flop / *steps;
    levers.compute_limit_step_ns = flop_per_step / *peak * 1e9;
    lever.figure = format_si(flop_per_step, "FLOP") + " " + per_unit(stage) + " at " + format_si(peak, "FLOP/s") +
                   " (" + stage.dominant_precision + ") = " + format_duration_ns(*levers.compute_limit_step_ns) +
                   coverage_note(stage.flop_coverage, "FLOP");
  }
  judge_against_limit(levers.compute_limit_step_ns, kernel_base(levers, launch), launch, "compute", lever);
  return lever;
}

// A step cannot beat the larger of its two roofline limits, so only that one is a lever; with one of them
// unmeasured, which binds is unknown and the other's gain would be an upper bound: withheld too.
void keep_binding_limit(VerdictStage& levers, VerdictLever& hbm, VerdictLever& compute) {
  if (!levers.hbm_limit_step_ns && !levers.compute_limit_step_ns) return;
  if (!levers.hbm_limit_step_ns || !levers.compute_limit_step_ns) {
    VerdictLever& known = levers.hbm_limit_step_ns ? hbm : compute;
    const VerdictLever& unknown = levers.hbm_limit_step_ns ? compute : hbm;
    if (!known.speedup) return;
    known.speedup.reset();
    known.after.clear();
    known.withheld =
        "the " + unknown.name + " is not measured (" + unknown.withheld + "), so which limit binds is unknown";
    return;
  }
  if (*levers.hbm_limit_step_ns >= *levers.compute_limit_step_ns) {
    compute.speedup.reset();
    compute.after.clear();
    compute.withheld = "below the HBM limit (" + format_duration_ns(*levers.hbm_limit_step_ns) + "), which binds first";
  } else {
    hbm.speedup.reset();
    hbm.after.clear();
    hbm.withheld =
        "below the compute limit (" + format_duration_ns(*levers.compute_limit_step_ns) + "), which binds first";
  }
}

VerdictLever graph_idle_lever(const RunReportModel& model, const ReportStage& stage, const TimelineStage* timed) {
  VerdictLever lever{"idle between graph replays", std::nullopt, "", "", "", ReportSection::stage_instances};
  if (!timed) {
    lever.withheld = untimed_reason(model, stage);
    return lever;
  }
  const auto& replays = timed->graph_replays;
  if (!replays || replays->gap.count <= 0 || replays->replay_gpu.mean_ns <= 0) {
    lever.withheld = "no pair of consecutive CUDA graph replays in this stage";
    return lever;
  }
  lever.figure = "GPU idle " + format_duration_ns(replays->gap.mean_ns) + " between replays (" +
                 format_count(replays->gap.count) + " pairs) against " +
                 format_duration_ns(replays->replay_gpu.mean_ns) + " of GPU time per replay";
  if (replays->gap.mean_ns > 0)
    lever.speedup = (replays->replay_gpu.mean_ns + replays->gap.mean_ns) / replays->replay_gpu.mean_ns;
  else
    lever.withheld = "the replays follow each other without a gap";
  return lever;
}

VerdictLever straggler_lever(const RunReportModel& model, const VerdictStage& levers) {
  VerdictLever lever{"straggler rank", std::nullopt, "", "", "", ReportSection::ranks};
  const auto& straggler = model.straggler;
  if (!straggler) {
    lever.withheld = model.cross_rank_markdown.empty() ? "a single-rank run, with no other rank to wait for"
                                                       : "no per-rank step start lag in analysis/ranks.csv";
    return lever;
  }
  // The lag was measured under the profiler, so it is set against the step under the profiler.
  if (!levers.profiled_step_ns) {
    lever.withheld = "the stage's step under the profiler is not measured";
    return lever;
  }
  const double step = *levers.profiled_step_ns;
  lever.figure = "rank " + std::to_string(straggler->rank) + " starts its steps " +
                 format_duration_ns(straggler->mean_step_start_lag_ns) +
                 " after the earliest rank on average, against " + format_duration_ns(step) +
                 " per step under the profiler (" + std::to_string(straggler->ranks) + " ranks)";
  if (straggler->mean_step_start_lag_ns > 0 && straggler->mean_step_start_lag_ns < step)
    lever.speedup = step / (step - straggler->mean_step_start_lag_ns);
  else
    lever.withheld = "no rank starts its steps later than the others";
  return lever;
}

void rank_levers(std::vector<VerdictLever>& levers) {
  auto tier = [](const VerdictLever& lever) { return !lever.speedup ? 2 : lever.after.empty() ? 0 : 1; };
  std::stable_sort(levers.begin(), levers.end(), [&](const VerdictLever& a, const VerdictLever& b) {
    if (tier(a) != tier(b)) return tier(a) < tier(b);
    return a.speedup.value_or(0) > b.speedup.value_or(0);
  });
}

}  // namespace

std::string per_unit(const ReportStage& stage) { return "per " + stage.step_noun(); }

bool positive(const std::optional<double>& value) { return value && std::isfinite(*value) && *value > 0; }

VerdictStage stage_levers(const RunReportModel& model, const ReportStage& stage, bool main) {
  VerdictStage levers;
  levers.stage = stage.qualified_name();
  levers.main = main;
  const TimelineStage* timed = timeline_stage_of(model, stage);
  measure_steps(model, stage, timed, levers);
  VerdictLever launch = launch_overhead_lever(model, stage, levers, timed);
  VerdictLever hbm = hbm_lever(model, stage, levers, launch);
  VerdictLever compute = compute_lever(model, stage, levers, launch);
  keep_binding_limit(levers, hbm, compute);
  levers.levers = {launch, hbm, compute, graph_idle_lever(model, stage, timed), straggler_lever(model, levers)};
  rank_levers(levers.levers);
  return levers;
}

}  // namespace llmprof::detail
