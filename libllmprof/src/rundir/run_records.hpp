// What RunDirectory is built from (llmprof/run_directory.hpp): run.json, env.json and inputs.json to and from
// text, and the environment reader. Internal: the pipeline and tests use them; a harness reads a run with
// read_manifest and load_run_report.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_directory.hpp"

namespace llmprof {

// Manifest <-> JSON ("llmprof.run/1").
// The MAIN directory a command was given, before anything is read from it: not_found when it does not exist
// or is a file (naming which, so `analyze run.json` is not told its directory is missing), io_error when it
// cannot be read. `what_for` names the command's use of it ("to analyse").
Result<void> check_main_directory(const std::filesystem::path& main_directory, const std::string& what_for);

std::string manifest_to_json(const RunManifest& manifest);
Result<RunManifest> manifest_from_json(const std::string& json_text);

// {"host","os","gpus":[{"index","name","driver","memory_mib"}],"cuda_visible_devices":str|null,
//  "tools":{...},"problems":[...]}. Throws nothing; tools_json that is not JSON is stored as a string.
std::string environment_to_json(const EnvironmentRecord& environment);
// Host name, OS (/etc/os-release + uname), CUDA_VISIBLE_DEVICES, and GPUs from
// `nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader` run through
// `runner` (no nvidia-smi, or one that fails: no GPUs and a line in problems, not an error).
EnvironmentRecord collect_environment(ProcessRunner& runner, std::string tools_json = "{}");
// Rows of that nvidia-smi query ("0, NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB"); bad rows are skipped.
std::vector<GpuRecord> parse_nvidia_smi_gpus(std::string_view csv);
// inputs.json text for a workload.
std::string inputs_to_json(const WorkloadRecord& workload);

}  // namespace llmprof
