// The invariants of the analysis' derived figures, checked where they are made (issue: a GPU
// projection smaller than the kernel time printed "GPU busy 31374356%" and a GPU-bound verdict).
// Figures that are plain numbers rather than optional (shares) fall back to 0 with the warning.
#include "analysis/analysis_model.hpp"
#include "core/figure_checks.hpp"

namespace llmprof::detail {

void withhold_impossible_figures(StageAnalysis& stage, std::vector<std::string>& warnings) {
  FigureChecker check(warnings, "stage '" + stage.qualified_name() + "'");
  check.non_negative(stage.wall_ns, "wall_ns", "nsys nvtx_sum");
  check.non_negative(stage.gpu_projection_ns, "gpu_projection_ns", "nsys nvtx_gpu_proj_sum");
  // Busy <= span: the kernels of a range cannot keep the GPU busy longer than the range's projection.
  check.fraction(stage.gpu_busy_fraction, "gpu_busy_fraction",
                 "kernel time (" + stage.kernel_time_source + ") / GPU projection (nsys nvtx_gpu_proj_sum)");
  check.non_negative(stage.flop, "flop", "ncu FLOP per launch x nsys instances");
  check.non_negative(stage.achieved_flop_per_s, "achieved_flop_per_s", "flop / wall_ns");
  check.non_negative(stage.flop_per_s_while_busy, "flop_per_s_while_busy", "flop / kernel time");
  check.fraction(stage.mfu, "mfu", "achieved_flop_per_s / the device's peak (ncu peak metrics or datasheet)");
  check.non_negative(stage.model_flop_per_s, "model_flop_per_s", "stage1/metrics.json");
  check.fraction(stage.mfu_workload, "mfu_workload", "stage1/metrics.json FLOP/token x tokens/s / the device's peak");
  std::optional<double> coverage = stage.flop_coverage;
  check.fraction(coverage, "flop_coverage", "ncu-profiled kernel time / kernel time");
  stage.flop_coverage = coverage.value_or(0);
  for (auto& kernel : stage.top_kernels) {
    std::optional<double> share = kernel.share;
    check.fraction(share, "share of '" + kernel.name + "'", "its time / the stage's kernel time");
    kernel.share = share.value_or(0);
  }
}

void withhold_impossible_figures(KernelAnalysis& kernel, std::vector<std::string>& warnings) {
  FigureChecker check(warnings, "kernel '" + kernel.name.substr(0, 80) + "'");
  check.fraction(kernel.share_of_total, "share_of_total", kernel.time_source);
  check.non_negative(kernel.flop_per_launch, "flop_per_launch", "ncu FLOP metrics");
  check.non_negative(kernel.dram_bytes_per_launch, "dram_bytes_per_launch", "ncu dram__bytes");
  check.non_negative(kernel.arithmetic_intensity, "arithmetic_intensity", "ncu FLOP / DRAM bytes");
  check.non_negative(kernel.achieved_flop_per_s, "achieved_flop_per_s", "ncu FLOP / gpu__time_duration");
  check.percent(kernel.pct_peak_compute, "pct_peak_compute", "ncu FLOP rate / ncu peak");
  check.percent(kernel.pct_peak_dram, "pct_peak_dram", "ncu DRAM throughput / ncu peak");
  // A bound judged on a withheld percentage is no longer supported by anything.
  if (!kernel.pct_peak_compute || !kernel.pct_peak_dram) kernel.bound.reset();
}

}  // namespace llmprof::detail
