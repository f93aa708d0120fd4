// Per-launch roofline from ncu metrics; see roofline.hpp for which metrics and why.
#include "llmprof/roofline.hpp"

#include <algorithm>
#include <array>

#include "llmprof/choice.hpp"
#include "llmprof/device_peaks.hpp"

namespace llmprof {
namespace {

struct TensorPrecision {
  std::string_view key;
  std::vector<std::string_view> counts;       // aggregates, added together
  std::vector<std::string_view> dense_peaks;  // ops/cycle metrics; the largest is the peak
};

const std::vector<TensorPrecision>& tensor_precisions() {
  static const std::vector<TensorPrecision> table = {
      {precision::bf16,
       {"sm__ops_path_tensor_src_bf16_dst_fp32.sum"},
       {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"}},
      {precision::fp16,
       {"sm__ops_path_tensor_src_fp16.sum"},
       {"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum.peak_sustained"}},
      {precision::tf32,
       {"sm__ops_path_tensor_src_tf32_dst_fp32.sum"},
       {"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"}},
      {precision::fp8,
       {"sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8_sparsity_on.sum"},
       {"sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained"}},
      {precision::fp64_tensor,
       {"sm__ops_path_tensor_src_fp64.sum"},
       {"sm__ops_path_tensor_src_fp64.sum.peak_sustained"}},
  };
  return table;
}

struct CudaCoreOp {
  std::string_view precision;
  std::string_view op;  // "ffma" ...
  double flop_per_instruction;
};

// Weights as in ncu's SpeedOfLight_RooflineChart (derived__*_x2 / _x4 metrics).
constexpr std::array<CudaCoreOp, 9> cuda_core_ops{{
    {precision::fp32, "ffma", 2},
    {precision::fp32, "fadd", 1},
    {precision::fp32, "fmul", 1},
    {precision::fp64, "dfma", 2},
    {precision::fp64, "dadd", 1},
    {precision::fp64, "dmul", 1},
    {precision::fp16_cuda_core, "hfma", 4},
    {precision::fp16_cuda_core, "hadd", 2},
    {precision::fp16_cuda_core, "hmul", 2},
}};

// Thread-instruction count of one op: the raw .sum (sm__ or smsp__), else the per-cycle rate times
// the SMSP's elapsed cycles.
std::optional<double> instruction_count(const NcuKernelLaunch& launch, std::string_view op) {
  const std::string base = "sass_thread_inst_executed_op_" + std::string(op) + "_pred_on.sum";
  if (auto value = launch.metric("sm__" + base)) return value;
  if (auto value = launch.metric("smsp__" + base)) return value;
  const auto rate = launch.metric("smsp__" + base + ".per_cycle_elapsed");
  const auto cycles = launch.metric("smsp__cycles_elapsed.avg");
  if (rate && cycles) return *rate * *cycles;
  return std::nullopt;
}

std::optional<double> sm_clock_hz(const NcuKernelLaunch& launch) {
  if (auto hz = launch.metric("sm__cycles_elapsed.avg.per_second")) return hz;
  return launch.metric("smsp__cycles_elapsed.avg.per_second");
}

void add_tensor_flop(const NcuKernelLaunch& launch, LaunchRoofline& result, bool& any_flop_metric) {
  const auto clock = sm_clock_hz(launch);
  for (const auto& tensor : tensor_precisions()) {
    double flop = 0;
    for (auto name : tensor.counts) {
      if (auto value = launch.metric(name)) {
        any_flop_metric = true;
        flop += *value;
      }
    }
    if (flop > 0) result.flop_by_precision[std::string(tensor.key)] += flop;
    double best = 0;
    std::string_view best_name;
    for (auto name : tensor.dense_peaks) {
      if (auto per_cycle = launch.metric(name); per_cycle && *per_cycle > best) {
        best = *per_cycle;
        best_name = name;
      }
    }
    if (best > 0 && clock) {
      result.peak_flop_per_s[std::string(tensor.key)] = best * *clock;
      result.peak_sources[std::string(tensor.key)] =
          "ncu " + std::string(best_name) + " x sm__cycles_elapsed.avg.per_second";
    }
  }
}

void add_cuda_core_flop(const NcuKernelLaunch& launch, LaunchRoofline& result, bool& any_flop_metric) {
  for (const auto& op : cuda_core_ops) {
    if (auto count = instruction_count(launch, op.op)) {
      any_flop_metric = true;
      if (*count > 0) result.flop_by_precision[std::string(op.precision)] += *count * op.flop_per_instruction;
    }
  }
  const auto clock = sm_clock_hz(launch);
  const std::array<std::pair<std::string_view, const CudaCoreOp*>, 3> fma{
      {{precision::fp32, &cuda_core_ops[0]},
       {precision::fp64, &cuda_core_ops[3]},
       {precision::fp16_cuda_core, &cuda_core_ops[6]}}};
  for (const auto& [key, op] : fma) {
    const std::string name = "sm__sass_thread_inst_executed_op_" + std::string(op->op) + "_pred_on.sum.peak_sustained";
    if (auto per_cycle = launch.metric(name); per_cycle && clock && *per_cycle > 0) {
      result.peak_flop_per_s[std::string(key)] = *per_cycle * op->flop_per_instruction * *clock;
      result.peak_sources[std::string(key)] = "ncu " + name + " x " +
                                              std::to_string(static_cast<int>(op->flop_per_instruction)) +
                                              " x sm__cycles_elapsed.avg.per_second";
    }
  }
}

// A metric that must be in `base_unit` after normalisation; any other unit (one ncu printed that
// normalize_to_base_unit does not know) withholds it instead of guessing nanoseconds or bytes.
std::optional<double> metric_in(const NcuKernelLaunch& launch, std::string_view name, std::string_view base_unit,
                                LaunchRoofline& result) {
  const auto found = launch.metrics.find(name);
  if (found == launch.metrics.end()) return std::nullopt;
  if (found->second.unit != base_unit) {
    result.missing.push_back(std::string(name) + " is in '" + found->second.unit + "', not a unit convertible to " +
                             std::string(base_unit) + ": withheld (ncu/raw.csv units row)");
    return std::nullopt;
  }
  return found->second.value;
}

void add_dram(const NcuKernelLaunch& launch, LaunchRoofline& result) {
  if (auto bytes = metric_in(launch, "dram__bytes.sum", "byte", result)) {
    result.dram_bytes = bytes;
  } else if (auto read = launch.metric("dram__bytes_read.sum"), write = launch.metric("dram__bytes_write.sum");
             read && write) {
    result.dram_bytes = *read + *write;
  } else if (auto rate = launch.metric("dram__bytes.sum.per_second"); rate && result.duration_ns) {
    result.dram_bytes = *rate * *result.duration_ns * 1e-9;
  } else {
    result.missing.push_back(
        "DRAM bytes: none of dram__bytes.sum, dram__bytes_read/write.sum, "
        "dram__bytes.sum.per_second recorded");
  }
  const auto per_cycle = launch.metric("dram__bytes.sum.peak_sustained");
  const auto clock = launch.metric("dram__cycles_elapsed.avg.per_second");
  if (per_cycle && clock && *per_cycle > 0) {
    result.peak_dram_bytes_per_s = *per_cycle * *clock;
    result.peak_sources["dram"] = "ncu dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second";
  }
}

void add_percentages(const NcuKernelLaunch& launch, LaunchRoofline& result) {
  if (result.duration_ns && *result.duration_ns > 0) {
    const double seconds = *result.duration_ns * 1e-9;
    if (result.flop) result.achieved_flop_per_s = *result.flop / seconds;
    if (result.dram_bytes) result.dram_bytes_per_s = *result.dram_bytes / seconds;
    if (result.flop) {
      double percent = 0;
      bool complete = true;
      for (const auto& [key, flop] : result.flop_by_precision) {
        const auto peak = result.peak_flop_per_s.find(key);
        if (peak == result.peak_flop_per_s.end() || peak->second <= 0) {
          complete = false;
          result.missing.push_back("percent of peak compute: no ncu peak metric for precision " + key);
          continue;
        }
        percent += 100.0 * flop / seconds / peak->second;
      }
      if (complete) result.pct_peak_compute = percent;
    }
  }
  if (result.dram_bytes_per_s && result.peak_dram_bytes_per_s) {
    result.pct_peak_dram = 100.0 * *result.dram_bytes_per_s / *result.peak_dram_bytes_per_s;
  } else if (auto percent = launch.metric("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")) {
    result.pct_peak_dram = percent;
    result.peak_sources["dram_percent"] = "ncu gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
  } else if (auto printed = launch.metric("DRAM Throughput")) {
    result.pct_peak_dram = printed;  // details page: "GPU Speed Of Light Throughput / DRAM Throughput"
    result.peak_sources["dram_percent"] = "ncu details page DRAM Throughput";
  }
  if (result.flop && result.dram_bytes && *result.dram_bytes > 0) {
    result.arithmetic_intensity = *result.flop / *result.dram_bytes;
  }
}

}  // namespace

// KernelBound's one spelling table (choice.hpp): to_string writes with it, parse_choice reads with it.
std::span<const std::string_view> choice_names(KernelBound) noexcept {
  static constexpr std::string_view names[] = {"compute", "memory", "latency"};
  return names;
}

// The table holds string literals, so each entry's data() is NUL-terminated.
const char* to_string(KernelBound bound) noexcept { return choice_name(bound).data(); }

std::optional<KernelBound> classify_bound(std::optional<double> pct_peak_compute, std::optional<double> pct_peak_dram,
                                          const RooflineThresholds& thresholds) {
  if (!pct_peak_compute || !pct_peak_dram) return std::nullopt;
  if (*pct_peak_compute < thresholds.latency_percent && *pct_peak_dram < thresholds.latency_percent) {
    return KernelBound::latency;
  }
  return *pct_peak_compute >= *pct_peak_dram ? KernelBound::compute : KernelBound::memory;
}

const std::vector<std::string>& roofline_metric_prefixes() {
  static const std::vector<std::string> prefixes = {"gpu__time_duration",
                                                    "Duration",
                                                    "sm__ops_path_tensor_",
                                                    "sm__sass_thread_inst_executed_op_",
                                                    "smsp__sass_thread_inst_executed_op_",
                                                    "smsp__cycles_elapsed",
                                                    "sm__cycles_elapsed",
                                                    "dram__",
                                                    "gpu__dram_throughput",
                                                    "DRAM Throughput",
                                                    "device__attribute_display_name"};
  return prefixes;
}

LaunchRoofline analyze_launch(const NcuKernelLaunch& launch, const RooflineThresholds& thresholds) {
  // The launch's identity, field by field; the figures below are computed
  // (copies between two types look alike to the duplicates tool by shape only).
  LaunchRoofline result;
  result.launch_id = launch.id;
  result.kernel_name = launch.kernel_name;
  result.nvtx_stack = launch.nvtx_stack;
  result.grid_size = launch.grid_size;
  result.block_size = launch.block_size;
  if (auto name = launch.text_metric("device__attribute_display_name")) result.device_name = std::string(*name);
  const bool has_duration = launch.metrics.count("gpu__time_duration.sum") > 0;
  result.duration_ns = metric_in(launch, has_duration ? "gpu__time_duration.sum" : "Duration", "ns", result);
  if (!result.duration_ns && !has_duration && !launch.metrics.count("Duration")) {
    result.missing.push_back("duration: gpu__time_duration.sum not recorded");
  }

  bool any_flop_metric = false;
  add_tensor_flop(launch, result, any_flop_metric);
  add_cuda_core_flop(launch, result, any_flop_metric);
  if (any_flop_metric) {
    double total = 0;
    double most = 0;
    for (const auto& [key, flop] : result.flop_by_precision) {
      total += flop;
      if (flop > most) {
        most = flop;
        result.dominant_precision = key;
      }
    }
    result.flop = total;
  } else {
    result.missing.push_back(
        "FLOP: no sm__ops_path_tensor_src_* or sass_thread_inst_executed_op_* metric recorded "
        "(profile with ncu.set = \"llmprof\" or \"roofline\")");
  }
  add_dram(launch, result);
  add_percentages(launch, result);
  result.bound = classify_bound(result.pct_peak_compute, result.pct_peak_dram, thresholds);
  return result;
}

}  // namespace llmprof
