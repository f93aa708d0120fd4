// The GPU's state around a profiling stage, from nvidia-smi: SM and memory clocks, temperature, power,
// utilisation, the active clock throttle reasons, and the compute processes on it. A stage that ran on a
// throttled or shared GPU is slower for reasons that are not the workload's; the run says so.
//
// These are point samples taken just before and just after a stage (nvidia-smi is not running while
// the stage runs), so a throttle that came and went inside the stage is not seen; a thermal or power
// limit that persists, and another process holding the GPU, are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/process.hpp"

namespace llmprof {

struct GpuStateReading {
  int index = 0;
  std::string uuid;
  std::optional<double> sm_clock_mhz, memory_clock_mhz, temperature_c, power_w, utilization_pct;
  std::optional<std::uint64_t> throttle_reasons;  // nvidia-smi clocks_throttle_reasons.active bitmask
};

struct GpuComputeProcess {
  std::string gpu_uuid;
  std::int64_t pid = 0;
  std::string name;
  std::optional<double> used_memory_mib;
};

struct GpuStateSnapshot {
  std::string stage;    // "stage1", "nsys", "ncu"
  std::string moment;   // "before" or "after"
  std::string utc;      // ISO 8601
  std::string problem;  // why there is no reading (nvidia-smi missing, failed); empty when there is
  std::vector<GpuStateReading> gpus;
  std::vector<GpuComputeProcess> processes;
  std::vector<std::string> warnings;  // gpu_state_warnings for the GPUs the workload used
};

// The nvidia-smi command lines capture_gpu_state runs (for tests and documentation).
std::vector<std::string> gpu_state_query_argv();
std::vector<std::string> gpu_processes_query_argv();

// `--format=csv,noheader,nounits` output of the queries above; lines that do not parse are skipped.
std::vector<GpuStateReading> parse_gpu_state_csv(std::string_view csv);
std::vector<GpuComputeProcess> parse_gpu_processes_csv(std::string_view csv);

// Names of the throttle reasons in a bitmask that slow a running kernel (power cap, thermal, hardware
// slowdown, power brake): "sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
// "hw_power_brake_slowdown". Idle, application-clock, sync-boost and display bits are not throttling.
std::vector<std::string> slowing_throttle_reasons(std::uint64_t mask);

// Runs both queries through `runner` (20 s limit each: a wedged driver can hang nvidia-smi). Never
// fails: an nvidia-smi that is missing or fails leaves `problem` set and the readings empty.
GpuStateSnapshot capture_gpu_state(ProcessRunner& runner, std::string stage, std::string moment, std::string utc);

// What about a snapshot should be said: "GPU 0 was throttled after ncu (sw_thermal_slowdown, 84 C)",
// "another process was on GPU 0 before stage1: pid 4242 python (2048 MiB)". Only the GPUs in
// `gpu_indices` are looked at (empty: all).
std::vector<std::string> gpu_state_warnings(const GpuStateSnapshot& snapshot, const std::vector<int>& gpu_indices);

// MAIN/gpu_state.json: {"schema": "llmprof.gpu_state/1", "snapshots": [...]} in capture order.
std::string gpu_state_to_json(const std::vector<GpuStateSnapshot>& snapshots);

}  // namespace llmprof
