// Per-stage figures against the hardware limits: FLOP/s and DRAM bandwidth over the stage's time and over
// its kernel time, MFU, measured and model MBU, the headroom to the limit of the stage's bound, and the
// sentences that explain them (the MFU gap, measured bytes against the model's). They run after the
// timeline, which may replace a CPU range time that does not enclose the stage's GPU work.
#include <cmath>

#include "analysis/analysis_model.hpp"
#include "core/figure_checks.hpp"
#include "core/format.hpp"

namespace llmprof::detail {
namespace {

// A ratio above this, either way, between the profiled and the workload MFU gets a reason.
constexpr double kMfuGapRatio = 2.0;
// Measured bytes per step within this fraction of the model's read as "the model's bytes".
constexpr double kBytesMatchTolerance = 0.1;

std::string ratio_text(double ratio) { return format_number(ratio, ratio < 10 ? 2 : 3) + "x"; }

std::optional<double> peak_flop(const AnalysisReport& report, const std::string& precision) {
  const auto peak = report.device.peak_flop_per_s.find(precision);
  if (peak == report.device.peak_flop_per_s.end() || peak->second <= 0) return std::nullopt;
  return peak->second;
}

void fill_rates(const AnalysisReport& report, StageAnalysis& stage) {
  const double seconds = stage.rate_time_ns ? static_cast<double>(*stage.rate_time_ns) * 1e-9 : 0;
  const double busy_seconds = static_cast<double>(stage.kernel_time_ns.value_or(0)) * 1e-9;
  // Launches per second of the same time the other rates divide by (wall time, or the GPU-active time).
  if (seconds > 0 && stage.kernel_instances)
    stage.kernel_launches_per_s = static_cast<double>(*stage.kernel_instances) / seconds;
  if (stage.flop) {
    if (seconds > 0) stage.achieved_flop_per_s = *stage.flop / seconds;
    if (busy_seconds > 0) stage.flop_per_s_while_busy = *stage.flop / busy_seconds;
    const auto peak = peak_flop(report, stage.dominant_precision);
    if (stage.achieved_flop_per_s && peak) stage.mfu = *stage.achieved_flop_per_s / *peak;
  }
  const double peak_bandwidth = report.device.peak_dram_bytes_per_s.value_or(0);
  if (stage.dram_bytes) {
    if (seconds > 0) stage.dram_bytes_per_s = *stage.dram_bytes / seconds;
    if (busy_seconds > 0) stage.dram_bytes_per_s_while_busy = *stage.dram_bytes / busy_seconds;
    if (stage.dram_bytes_per_s && peak_bandwidth > 0) stage.mbu = *stage.dram_bytes_per_s / peak_bandwidth;
    if (stage.steps && *stage.steps > 0) stage.dram_bytes_per_step = *stage.dram_bytes / *stage.steps;
  }
  if (stage.rate_time_ns && stage.steps && *stage.steps > 0) {
    stage.step_ns = static_cast<double>(*stage.rate_time_ns) / *stage.steps;
  }
  if (stage.model_bytes_per_step && report.workload && report.workload->decode_s > 0 && peak_bandwidth > 0) {
    const double steps_per_s = static_cast<double>(report.workload->new_tokens) / report.workload->decode_s;
    stage.mbu_workload = *stage.model_bytes_per_step * steps_per_s / peak_bandwidth;
  }
}

// A derived figure goes with the input it came from: a stage whose DRAM bytes were withheld keeps no
// bandwidth, bytes per step or MBU computed from them (report.json kept a negative
// dram_bytes_per_step from withheld bytes, which report.md then withheld on its own).
void withhold_derived_of_withheld(StageAnalysis& stage) {
  if (!stage.dram_bytes) {
    stage.dram_bytes_per_s.reset();
    stage.dram_bytes_per_s_while_busy.reset();
    stage.dram_bytes_per_step.reset();
  }
  if (!stage.dram_bytes_per_s) stage.mbu.reset();
  if (!stage.flop) {
    stage.achieved_flop_per_s.reset();
    stage.flop_per_s_while_busy.reset();
  }
  if (!stage.achieved_flop_per_s) stage.mfu.reset();
  if (!stage.steps) {
    stage.dram_bytes_per_step.reset();
    stage.step_ns.reset();
  }
}

// ncu's peak is the sustained one: a little above it is measurement noise, far above it is not.
constexpr double kPeakNoise = 1.05;

// No stage moves bytes or does FLOP faster than the device can while its kernels run: a rate past the peak
// means the input is wrong (ncu bytes x1000 withheld MBU but printed 374 TB/s, 111x the peak), so
// the input and everything from it is withheld, with the figures that show why.
void withhold_rates_past_peak(const AnalysisReport& report, StageAnalysis& stage, std::vector<std::string>& warnings) {
  const std::string name = "stage '" + stage.qualified_name() + "': ";
  const auto peak_bandwidth = report.device.peak_dram_bytes_per_s;
  if (stage.dram_bytes_per_s_while_busy && peak_bandwidth && *peak_bandwidth > 0 &&
      *stage.dram_bytes_per_s_while_busy > kPeakNoise * *peak_bandwidth) {
    warnings.push_back(name + "its DRAM bytes (" + format_si(stage.dram_bytes, "B") + ", ncu bytes per launch x nsys "
                       "launches) over its kernel time are " + format_si(stage.dram_bytes_per_s_while_busy, "B/s") +
                       ", " + ratio_text(*stage.dram_bytes_per_s_while_busy / *peak_bandwidth) + " the device's peak of " +
                       format_si(peak_bandwidth, "B/s") + ": the bytes cannot be right, so DRAM bytes, bandwidth, "
                       "bytes per step and MBU are withheld (check ncu/raw.csv's dram__bytes columns and units)");
    stage.dram_bytes.reset();
  }
  const auto peak = peak_flop(report, stage.dominant_precision);
  if (stage.flop_per_s_while_busy && peak && *stage.flop_per_s_while_busy > kPeakNoise * *peak) {
    warnings.push_back(name + "its FLOP over its kernel time are " + format_si(stage.flop_per_s_while_busy, "FLOP/s") +
                       ", " + ratio_text(*stage.flop_per_s_while_busy / *peak) + " the device's " +
                       stage.dominant_precision + " peak of " + format_si(peak, "FLOP/s") +
                       ": the FLOP cannot be right, so FLOP, FLOP/s and MFU are withheld (check ncu/raw.csv's "
                       "instruction-count columns)");
    stage.flop.reset();
  }
  withhold_derived_of_withheld(stage);
  // The bytes the workload says a step must move, at the bare run's steps per second, past the device's peak: no
  // step can move them that fast, so the stated bytes are wrong (model_bytes_per_step = 1e15 was printed as
  // "measured 2.07 GB per step against the 1 PB the model must read: 0.0%", a finding). Both figures built on
  // them go.
  if (stage.mbu_workload && stage.model_bytes_per_step && peak_bandwidth && *peak_bandwidth > 0 &&
      *stage.mbu_workload > kPeakNoise) {
    warnings.push_back(name + "stage1/metrics.json says a step must move " +
                       format_si(*stage.model_bytes_per_step, "B") + "; at the bare run's step rate that is " +
                       format_si(*stage.mbu_workload * *peak_bandwidth, "B/s") + ", " +
                       ratio_text(*stage.mbu_workload) + " the device's peak of " + format_si(peak_bandwidth, "B/s") +
                       ": model_bytes_per_step cannot be right, so MBU (model) and the measured-against-model bytes "
                       "are withheld (check how the workload computes model_bytes_per_step)");
    stage.mbu_workload.reset();
    stage.model_bytes_per_step.reset();
  }
}

// A rate over the stage's time above the rate while its kernels run means the time does not enclose the
// kernels: every figure over that time is withheld. Inputs are checked first and what came from a
// withheld input goes with it, so that no writer (report.json, stages.csv, report.md, report.html) sees a
// figure another withholds.
void withhold_impossible_rates(const AnalysisReport& report, StageAnalysis& stage, std::vector<std::string>& warnings) {
  FigureChecker check(warnings, "stage '" + stage.qualified_name() + "'");
  // The inputs first: what is computed from a withheld one goes with it, with no warning of its own.
  static constexpr std::string_view kInputs[] = {"dram_bytes", "flop", "steps"};
  withhold_impossible_figures(stage, check, {}, kInputs);
  withhold_derived_of_withheld(stage);
  withhold_rates_past_peak(report, stage, warnings);
  const bool flop_beyond = stage.achieved_flop_per_s && stage.flop_per_s_while_busy &&
                           *stage.achieved_flop_per_s > *stage.flop_per_s_while_busy * 1.001;
  const bool bytes_beyond = stage.dram_bytes_per_s && stage.dram_bytes_per_s_while_busy &&
                            *stage.dram_bytes_per_s > *stage.dram_bytes_per_s_while_busy * 1.001;
  if (flop_beyond || bytes_beyond) {
    stage.rate_time_note = "its time (" + stage.rate_time_source +
                           ") is shorter than its kernel time, so achieved FLOP/s, bandwidth, MFU and MBU are withheld";
    warnings.push_back("stage '" + stage.qualified_name() + "': " + stage.rate_time_note);
    stage.achieved_flop_per_s.reset();
    stage.mfu.reset();
    stage.dram_bytes_per_s.reset();
    stage.mbu.reset();
    stage.step_ns.reset();
    stage.kernel_launches_per_s.reset();
  }
  if (stage.mbu && *stage.mbu > 1.0 && *stage.mbu <= kPeakNoise) stage.mbu = 1.0;
  withhold_impossible_figures(stage, check);  // every bound, the rates just computed among them
}

std::string covered_text(double coverage) {
  if (coverage >= 0.999) return "";
  return " (bytes measured for " + format_fraction_percent(coverage) + " of its kernel time)";
}

void fill_headroom(const AnalysisReport& report, StageAnalysis& stage) {
  if (!stage.kernel_bound || !stage.step_ns || *stage.step_ns <= 0 || !stage.steps) return;
  std::string limit, measured_for;  // the coverage goes last, after the share it qualifies
  if (*stage.kernel_bound == to_string(KernelBound::memory) && stage.dram_bytes_per_step && report.device.peak_dram_bytes_per_s) {
    stage.limit_step_ns = *stage.dram_bytes_per_step / *report.device.peak_dram_bytes_per_s * 1e9;
    limit = "peak DRAM bandwidth (" + format_si(report.device.peak_dram_bytes_per_s, "B/s") + ")";
    if (stage.dram_coverage < 0.999)
      measured_for = "; bytes measured for " + format_fraction_percent(stage.dram_coverage) + " of its kernel time";
  } else if (*stage.kernel_bound == to_string(KernelBound::compute) && stage.flop) {
    const auto peak = peak_flop(report, stage.dominant_precision);
    if (!peak) return;
    stage.limit_step_ns = *stage.flop / *stage.steps / *peak * 1e9;
    limit = "peak " + stage.dominant_precision + " FLOP/s (" + format_si(*peak, "FLOP/s") + ")";
    if (stage.flop_coverage < 0.999)
      measured_for = "; FLOP measured for " + format_fraction_percent(stage.flop_coverage) + " of its kernel time";
  } else {
    return;
  }
  stage.share_of_limit = *stage.limit_step_ns / *stage.step_ns;
  stage.headroom = "at 100% of " + limit + " a " + stage.step_noun() + " would take " +
                   format_duration_ns(*stage.limit_step_ns) + "; it takes " + format_duration_ns(*stage.step_ns) +
                   " (" + format_fraction_percent(stage.share_of_limit) + " of the limit" + measured_for + ")";
}

void fill_bytes_comparison(StageAnalysis& stage) {
  if (!stage.dram_bytes_per_step || !stage.model_bytes_per_step || *stage.model_bytes_per_step <= 0) return;
  const double ratio = *stage.dram_bytes_per_step / *stage.model_bytes_per_step;
  const std::string measured = "measured " + format_si(*stage.dram_bytes_per_step, "B") + " per " + stage.step_noun();
  const std::string model = format_si(*stage.model_bytes_per_step, "B") + " the model must read (weights + KV cache)";
  if (ratio > 1 + kBytesMatchTolerance) {
    stage.bytes_comparison = measured + ", " + ratio_text(ratio) + " the " + model +
                             ": the kernels move more than the model's bytes (activations through DRAM, weights "
                             "or KV cache read more than once)";
  } else {
    stage.bytes_comparison = measured + " against the " + model + ": " + format_fraction_percent(ratio) +
                             (ratio < 1 - kBytesMatchTolerance
                                  ? " (less than the model's bytes: part of them came from L2 cache" +
                                        std::string(stage.dram_coverage < 0.999 ? ", or from kernels ncu did not profile"
                                                                                : "") +
                                        ")"
                                  : "");
  }
  stage.bytes_comparison += covered_text(stage.dram_coverage);
}

// MFU (profiled) / MFU (workload) = (ncu FLOP / model FLOP) x (bare step time / profiled step time)
// x (the workload dtype's peak / the dominant precision's peak): each factor said in words.
void fill_mfu_gap(const AnalysisReport& report, StageAnalysis& stage) {
  if (!stage.mfu || !stage.mfu_workload || *stage.mfu_workload <= 0 || !report.workload) return;
  const double gap = *stage.mfu / *stage.mfu_workload;
  if (gap <= kMfuGapRatio && gap >= 1 / kMfuGapRatio) return;
  const auto& workload = *report.workload;
  if (stage.name != "decode" || !stage.flop || !stage.steps || !stage.step_ns || workload.new_tokens <= 0) return;
  const double model_per_step = workload.flop_per_token * static_cast<double>(workload.batch);
  const double measured_per_step = *stage.flop / *stage.steps;
  const double bare_step_ns = workload.decode_s / static_cast<double>(workload.new_tokens) * 1e9;
  if (model_per_step <= 0 || bare_step_ns <= 0) return;
  const double flop_ratio = measured_per_step / model_per_step;
  std::string text = "MFU (profiled) " + format_fraction_percent(stage.mfu) + " is " + ratio_text(gap) +
                     " MFU (workload) " + format_fraction_percent(stage.mfu_workload) + ": ncu counted " +
                     format_si(measured_per_step, "FLOP") + " per step against the model's " +
                     format_si(model_per_step, "FLOP") + " (" + ratio_text(flop_ratio);
  if (flop_ratio > kMfuGapRatio && workload.batch <= 16) {
    text += "; at batch " + std::to_string(workload.batch) +
            " the tensor-core kernels compute whole tiles, most of them padding";
  } else if (flop_ratio < 1 / kMfuGapRatio && stage.flop_coverage < 0.999) {
    text += "; FLOP measured for " + format_fraction_percent(stage.flop_coverage) + " of its kernel time only";
  }
  text += "), and a step took " + format_duration_ns(*stage.step_ns) + " profiled against " +
          format_duration_ns(bare_step_ns) + " in the bare run";
  const auto dominant = peak_flop(report, stage.dominant_precision);
  const auto dtype = peak_flop(report, workload.dtype);
  if (dominant && dtype && std::fabs(*dominant / *dtype - 1) > 0.01) {
    text += ", against the " + stage.dominant_precision + " peak instead of the " + workload.dtype + " one";
  }
  stage.mfu_gap_reason = text;
}

std::string bandwidth_sentence(const AnalysisReport& report, const StageAnalysis& stage) {
  if (!stage.dram_bytes || !stage.mbu) return "";
  std::string text = "DRAM ";
  if (stage.dram_bytes_per_step) text += format_si(stage.dram_bytes_per_step, "B") + " per " + stage.step_noun() + ", ";
  text += format_si(stage.dram_bytes_per_s, "B/s") + " over the stage's time: MBU " +
          format_fraction_percent(stage.mbu) + " of " + format_si(report.device.peak_dram_bytes_per_s, "B/s");
  if (stage.dram_bytes_per_s_while_busy) {
    text += " (" + format_si(stage.dram_bytes_per_s_while_busy, "B/s") + " while its kernels run)";
  }
  return text + covered_text(stage.dram_coverage);
}

void add_to_verdict(StageAnalysis& stage, const std::string& sentence) {
  if (sentence.empty()) return;
  stage.verdict += (stage.verdict.empty() ? "" : "; ") + sentence;
}

}  // namespace

void fill_stage_limits(AnalysisReport& report) {
  for (auto& stage : report.stages) {
    if (!stage.kernel_time_ns) continue;  // outside the nsys capture: nothing measured to rate
    fill_rates(report, stage);
    // A time withheld below is a warning already; one withheld before (no enclosing time) is a skipped figure.
    const bool time_withheld_before = !stage.rate_time_note.empty();
    withhold_impossible_rates(report, stage, report.warnings);
    fill_headroom(report, stage);
    fill_bytes_comparison(stage);
    fill_mfu_gap(report, stage);
    if (time_withheld_before && (stage.flop || stage.dram_bytes)) {
      report.skipped.push_back("stage '" + stage.qualified_name() + "': " + stage.rate_time_note);
    }
    if (stage.kernel_bound == to_string(KernelBound::memory)) add_to_verdict(stage, bandwidth_sentence(report, stage));
    add_to_verdict(stage, stage.headroom);
    add_to_verdict(stage, stage.bytes_comparison);
    add_to_verdict(stage, stage.mfu_gap_reason);
  }
}

}  // namespace llmprof::detail
