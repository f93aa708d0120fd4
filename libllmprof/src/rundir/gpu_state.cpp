// nvidia-smi readings of the GPU's state around a stage (see llmprof/gpu_state.hpp).
#include "llmprof/gpu_state.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/json_pretty.hpp"
#include "rundir/nvidia_smi_csv.hpp"

namespace llmprof {
namespace {

// nounits output: "1980", "69.88"; "[N/A]" or "[Not Supported]" where the board does not report it.
std::optional<double> reading(const std::string& field) {
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> hex_mask(const std::string& field) {
  if (field.size() < 3 || field[0] != '0' || (field[1] != 'x' && field[1] != 'X')) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(field.data() + 2, field.data() + field.size(), value, 16);
  if (error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return value;
}

struct QueryOutput {
  std::string text;
  std::string problem;
};

QueryOutput run_query(ProcessRunner& runner, const std::vector<std::string>& argv) {
  QueryOutput output;
  ProcessSpec spec;
  spec.argv = argv;
  spec.on_stdout_line = [&output](const std::string& line) { output.text += line + "\n"; };
  spec.timeout = std::chrono::seconds(20);
  const auto outcome = runner.run(spec);
  if (!outcome) {
    output.problem = "nvidia-smi is not available (" + outcome.error().message + "): GPU state not recorded";
  } else if (!outcome->succeeded()) {
    output.problem = "nvidia-smi " + outcome->describe() + ": GPU state not recorded";
  }
  return output;
}

std::string format_value(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

bool watched(int index, const std::vector<int>& gpu_indices) {
  return gpu_indices.empty() || std::find(gpu_indices.begin(), gpu_indices.end(), index) != gpu_indices.end();
}

boost::json::value optional_json(const std::optional<double>& value) {
  if (!value) return nullptr;
  return *value;
}

}  // namespace

std::vector<std::string> gpu_state_query_argv() {
  return {"nvidia-smi",
          "--query-gpu=index,uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu,"
          "clocks_throttle_reasons.active",
          "--format=csv,noheader,nounits"};
}

std::vector<std::string> gpu_processes_query_argv() {
  return {"nvidia-smi", "--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader,nounits"};
}

std::vector<GpuStateReading> parse_gpu_state_csv(std::string_view csv) {
  std::vector<GpuStateReading> gpus;
  for (const auto& fields : detail::nvidia_smi_rows(csv, 8)) {
    const auto index = reading(fields[0]);
    if (!index || *index < 0 || *index != static_cast<int>(*index)) continue;
    GpuStateReading gpu;
    gpu.index = static_cast<int>(*index);
    gpu.uuid = fields[1];
    gpu.sm_clock_mhz = reading(fields[2]);
    gpu.memory_clock_mhz = reading(fields[3]);
    gpu.temperature_c = reading(fields[4]);
    gpu.power_w = reading(fields[5]);
    gpu.utilization_pct = reading(fields[6]);
    gpu.throttle_reasons = hex_mask(fields[7]);
    gpus.push_back(gpu);
  }
  return gpus;
}

std::vector<GpuComputeProcess> parse_gpu_processes_csv(std::string_view csv) {
  std::vector<GpuComputeProcess> processes;
  for (const auto& fields : detail::nvidia_smi_rows(csv, 4)) {
    const auto pid = reading(fields[1]);
    if (!pid || *pid <= 0) continue;
    GpuComputeProcess process;
    process.gpu_uuid = fields[0];
    process.pid = static_cast<std::int64_t>(*pid);
    process.name = fields[2];
    process.used_memory_mib = reading(fields[3]);
    processes.push_back(process);
  }
  return processes;
}

std::vector<std::string> slowing_throttle_reasons(std::uint64_t mask) {
  // NVML's nvmlClocksThrottleReason* bits; 0x1 idle, 0x2 application clocks, 0x10 sync boost and 0x100
  // display clock are settings or states, not a limit that slows a running kernel.
  static constexpr std::pair<std::uint64_t, const char*> reasons[] = {{0x4, "sw_power_cap"},
                                                                      {0x8, "hw_slowdown"},
                                                                      {0x20, "sw_thermal_slowdown"},
                                                                      {0x40, "hw_thermal_slowdown"},
                                                                      {0x80, "hw_power_brake_slowdown"}};
  std::vector<std::string> names;
  for (const auto& [bit, name] : reasons) {
    if (mask & bit) names.emplace_back(name);
  }
  return names;
}

GpuStateSnapshot capture_gpu_state(ProcessRunner& runner, std::string stage, std::string moment, std::string utc) {
  GpuStateSnapshot snapshot;
  snapshot.stage = std::move(stage);
  snapshot.moment = std::move(moment);
  snapshot.utc = std::move(utc);
  const auto state = run_query(runner, gpu_state_query_argv());
  if (!state.problem.empty()) {
    snapshot.problem = state.problem;
    return snapshot;
  }
  snapshot.gpus = parse_gpu_state_csv(state.text);
  if (snapshot.gpus.empty()) snapshot.problem = "nvidia-smi listed no GPU state";
  const auto processes = run_query(runner, gpu_processes_query_argv());
  if (processes.problem.empty()) snapshot.processes = parse_gpu_processes_csv(processes.text);
  return snapshot;
}

std::vector<std::string> gpu_state_warnings(const GpuStateSnapshot& snapshot, const std::vector<int>& gpu_indices) {
  std::vector<std::string> warnings;
  const std::string when = snapshot.moment + " " + snapshot.stage;
  for (const auto& gpu : snapshot.gpus) {
    if (!watched(gpu.index, gpu_indices)) continue;
    if (gpu.throttle_reasons) {
      const auto reasons = slowing_throttle_reasons(*gpu.throttle_reasons);
      if (!reasons.empty()) {
        std::string text = "GPU " + std::to_string(gpu.index) + " was throttled " + when + " (";
        for (std::size_t i = 0; i < reasons.size(); ++i) text += (i ? ", " : "") + reasons[i];
        if (gpu.temperature_c) text += ", " + format_value(*gpu.temperature_c) + " C";
        if (gpu.sm_clock_mhz) text += ", SM " + format_value(*gpu.sm_clock_mhz) + " MHz";
        warnings.push_back(text + ")");
      }
    }
    for (const auto& process : snapshot.processes) {
      if (process.gpu_uuid != gpu.uuid) continue;
      std::string text = "another process was on GPU " + std::to_string(gpu.index) + " " + when + ": pid " +
                         std::to_string(process.pid) + " " + process.name;
      if (process.used_memory_mib) text += " (" + format_value(*process.used_memory_mib) + " MiB)";
      warnings.push_back(text + "; timings may be shared");
    }
  }
  return warnings;
}

std::string gpu_state_to_json(const std::vector<GpuStateSnapshot>& snapshots) {
  boost::json::array array;
  for (const auto& snapshot : snapshots) {
    boost::json::array gpus;
    for (const auto& gpu : snapshot.gpus) {
      boost::json::value mask = nullptr;
      if (gpu.throttle_reasons) {
        char text[24];
        std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(*gpu.throttle_reasons));
        mask = text;
      }
      boost::json::array reasons;
      if (gpu.throttle_reasons) {
        for (const auto& name : slowing_throttle_reasons(*gpu.throttle_reasons)) reasons.emplace_back(name);
      }
      gpus.emplace_back(boost::json::object{{"index", gpu.index},
                                            {"uuid", gpu.uuid},
                                            {"sm_clock_mhz", optional_json(gpu.sm_clock_mhz)},
                                            {"memory_clock_mhz", optional_json(gpu.memory_clock_mhz)},
                                            {"temperature_c", optional_json(gpu.temperature_c)},
                                            {"power_w", optional_json(gpu.power_w)},
                                            {"utilization_pct", optional_json(gpu.utilization_pct)},
                                            {"throttle_reasons", mask},
                                            {"slowing_throttle_reasons", reasons}});
    }
    boost::json::array processes;
    for (const auto& process : snapshot.processes) {
      processes.emplace_back(boost::json::object{{"gpu_uuid", process.gpu_uuid},
                                                 {"pid", process.pid},
                                                 {"name", process.name},
                                                 {"used_memory_mib", optional_json(process.used_memory_mib)}});
    }
    array.emplace_back(boost::json::object{
        {"stage", snapshot.stage},
        {"moment", snapshot.moment},
        {"utc", snapshot.utc},
        {"problem", snapshot.problem.empty() ? boost::json::value(nullptr) : boost::json::value(snapshot.problem)},
        {"gpus", std::move(gpus)},
        {"processes", std::move(processes)},
        {"warnings", boost::json::array(snapshot.warnings.begin(), snapshot.warnings.end())}});
  }
  return detail::pretty_json(boost::json::object{{"schema", "llmprof.gpu_state/1"}, {"snapshots", std::move(array)}});
}

}  // namespace llmprof
