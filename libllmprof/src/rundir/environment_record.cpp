// env.json: what machine a run happened on (host, OS, GPUs, CUDA_VISIBLE_DEVICES, tools).
#include <sys/utsname.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/json_pretty.hpp"
#include "core/text.hpp"
#include "llmprof/run_directory.hpp"
#include "rundir/nvidia_smi_csv.hpp"
#include "rundir/run_records.hpp"

namespace llmprof {
namespace json = boost::json;
namespace {

using detail::trim;

// PRETTY_NAME from /etc/os-release, e.g. "Debian GNU/Linux 12 (bookworm)".
std::string os_release_name() {
  std::ifstream in("/etc/os-release");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string value = line.substr(12);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) value = value.substr(1, value.size() - 2);
    return value;
  }
  return {};
}

std::string describe_os(std::vector<std::string>& problems) {
  std::string os = os_release_name();
  if (os.empty()) problems.push_back("/etc/os-release has no PRETTY_NAME");
  utsname system{};
  if (::uname(&system) == 0) {
    const std::string kernel = std::string(system.sysname) + " " + system.release + " " + system.machine;
    os = os.empty() ? kernel : os + "; " + kernel;
  }
  return os;
}

std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return {};
  return buffer;
}

}  // namespace

std::vector<GpuRecord> parse_nvidia_smi_gpus(std::string_view csv) {
  std::vector<GpuRecord> gpus;
  for (const auto& fields : detail::nvidia_smi_rows(csv, 4)) {
    try {
      GpuRecord gpu;
      std::size_t used = 0;
      gpu.index = std::stoi(fields[0], &used);
      if (used != fields[0].size()) continue;
      gpu.name = fields[1];
      gpu.driver = fields[2];
      // "81559 MiB" (csv) or "81559" (csv,nounits); nvidia-smi reports memory.total in MiB.
      gpu.memory_mib = std::stoll(fields[3], &used);
      const std::string_view unit = trim(std::string_view(fields[3]).substr(used));
      if (!unit.empty() && unit != "MiB") continue;
      gpus.push_back(gpu);
    } catch (const std::exception&) {
      continue;  // "[N/A]" or a header line: not a GPU row
    }
  }
  return gpus;
}

EnvironmentRecord collect_environment(ProcessRunner& runner, std::string tools_json) {
  EnvironmentRecord record;
  record.host = host_name();
  record.os = describe_os(record.problems);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr)
    record.cuda_visible_devices = visible;
  record.tools_json = std::move(tools_json);

  std::string output;
  ProcessSpec spec;
  spec.argv = {"nvidia-smi", "--query-gpu=index,name,driver_version,memory.total", "--format=csv,noheader"};
  spec.on_stdout_line = [&output](const std::string& line) { output += line + "\n"; };
  spec.timeout = std::chrono::seconds(20);  // a wedged driver can make nvidia-smi hang
  const auto outcome = runner.run(spec);
  if (!outcome) {
    record.problems.push_back("no GPU list: " + outcome.error().describe());
  } else if (!outcome->succeeded()) {
    const std::string how = outcome->timed_out ? "timed out"
                            : outcome->signal  ? "was killed by signal " + std::to_string(*outcome->signal)
                                               : "exited with code " + std::to_string(outcome->exit_code);
    record.problems.push_back("no GPU list: nvidia-smi " + how);
  } else {
    record.gpus = parse_nvidia_smi_gpus(output);
    if (record.gpus.empty()) record.problems.push_back("nvidia-smi listed no GPUs");
  }
  return record;
}

std::string environment_to_json(const EnvironmentRecord& environment) {
  json::array gpus;
  for (const auto& gpu : environment.gpus) {
    gpus.emplace_back(
        json::object{{"index", gpu.index}, {"name", gpu.name}, {"driver", gpu.driver}, {"memory_mib", gpu.memory_mib}});
  }
  boost::system::error_code error;
  json::value tools = detail::parse_json_text(environment.tools_json, error);
  if (error) tools = environment.tools_json;  // keep what the probe said rather than lose it
  json::array problems;
  for (const auto& problem : environment.problems) problems.emplace_back(problem);
  const json::object root = {
      {"host", environment.host},
      {"os", environment.os},
      {"gpus", std::move(gpus)},
      {"cuda_visible_devices",
       environment.cuda_visible_devices ? json::value(*environment.cuda_visible_devices) : json::value(nullptr)},
      {"tools", std::move(tools)},
      {"problems", std::move(problems)}};
  return detail::pretty_json(root);
}

}  // namespace llmprof
