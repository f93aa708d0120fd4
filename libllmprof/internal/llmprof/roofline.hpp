// The roofline model of one profiled kernel launch, from the metrics ncu recorded for it.
//
// Which metrics (Nsight Compute 2025.3, `--set roofline`, checked on H100 against a GEMM whose
// exact work is known, tests/data/h100-nsight-2025.3/ncu/gemm_raw.csv):
// - duration: gpu__time_duration.sum (the details page's "Duration" when only that is present).
// - tensor-core FLOP: the per-source-precision aggregates sm__ops_path_tensor_src_{bf16_dst_fp32,
//   fp16, tf32_dst_fp32, fp64}.sum and sm__ops_path_tensor_src_fp8_sparsity_{off,on}.sum. The
//   sm__ops_path_tensor_op_{hmma,hgmma,...}_* metrics are parts of these aggregates (by
//   instruction and sparsity) and are NOT added again. Integer tensor ops (int8, int1) are not FLOP.
// - CUDA-core FLOP: sass_thread_inst_executed_op_{d,f,h}{fma,add,mul}_pred_on, weighted like
//   ncu's roofline section: FMA = 2 FLOP, ADD/MUL = 1, and the half-precision instructions are
//   packed half2 (HFMA2 = 4, HADD2/HMUL2 = 2). The raw .sum counts are used when present;
//   `--set roofline` records only smsp__...sum.per_cycle_elapsed, which is multiplied back by
//   smsp__cycles_elapsed.avg (ncu divides .sum by the unit's average elapsed cycles).
// - DRAM bytes: dram__bytes.sum, else dram__bytes_read.sum + dram__bytes_write.sum, else
//   dram__bytes.sum.per_second x duration (the roofline set has only the rate).
// - peaks, at the clocks of this launch: tensor = the largest dense (sparsity_off) instruction
//   peak of the precision, e.g. sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off
//   .sum.peak_sustained (ops/cycle) x sm__cycles_elapsed.avg.per_second; CUDA cores = the
//   sm__sass_thread_inst_executed_op_{f,d,h}fma_pred_on.sum.peak_sustained x FMA weight x SM clock;
//   DRAM = dram__bytes.sum.peak_sustained (bytes/cycle) x dram__cycles_elapsed.avg.per_second.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "llmprof/ncu_metrics.hpp"

namespace llmprof {

enum class KernelBound { compute, memory, latency };
const char* to_string(KernelBound bound) noexcept;
// The one spelling table (choice.hpp): report.json's records hold the bound as this text.
std::span<const std::string_view> choice_names(KernelBound) noexcept;

struct RooflineThresholds {
  // A launch below this percent of peak on BOTH compute and DRAM is latency/launch-bound: it
  // neither keeps the math units nor the memory busy (too little parallel work, waiting on
  // dependencies or on the launch itself). 30% follows the point below which ncu's
  // SpeedOfLight rules start suggesting latency problems.
  double latency_percent = 30.0;
};

// The bound of a kernel from its percent of peak compute and DRAM; nullopt when either is unknown.
std::optional<KernelBound> classify_bound(std::optional<double> pct_peak_compute, std::optional<double> pct_peak_dram,
                                          const RooflineThresholds& thresholds);

struct LaunchRoofline {
  std::int64_t launch_id = 0;
  std::string kernel_name;
  std::vector<NvtxRangeName> nvtx_stack;
  std::string grid_size, block_size;  // the launch configuration as ncu printed it: "(16, 1, 1)"
  std::string device_name;  // device__attribute_display_name when recorded
  std::optional<double> duration_ns;
  std::map<std::string, double> flop_by_precision;  // precision key (device_peaks.hpp) -> FLOP; non-zero only
  std::optional<double> flop;                       // nullopt when no FLOP metric was recorded
  std::optional<double> dram_bytes;
  std::optional<double> achieved_flop_per_s;
  std::optional<double> dram_bytes_per_s;
  std::optional<double> arithmetic_intensity;       // FLOP per DRAM byte
  std::map<std::string, double> peak_flop_per_s;    // precision key -> dense peak at this launch's clocks
  std::map<std::string, std::string> peak_sources;  // precision key or "dram" -> metric(s) used
  std::optional<double> peak_dram_bytes_per_s;
  std::string dominant_precision;  // most FLOP; empty when none
  // Sum over precisions of (FLOP/s of the precision / its peak), in percent: for a kernel using one
  // precision this is simply achieved / peak.
  std::optional<double> pct_peak_compute;
  std::optional<double> pct_peak_dram;
  std::optional<KernelBound> bound;
  std::vector<std::string> missing;  // what could not be computed and why
};

LaunchRoofline analyze_launch(const NcuKernelLaunch& launch, const RooflineThresholds& thresholds = {});

// The metric-name prefixes analyze_launch reads, for NcuParseOptions::keep_metric.
const std::vector<std::string>& roofline_metric_prefixes();

}  // namespace llmprof
