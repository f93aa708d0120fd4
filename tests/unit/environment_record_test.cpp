// env.json: GPUs from nvidia-smi (through a fake ProcessRunner), host/OS, and the JSON shape.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <cstdlib>

#include "llmprof/run_directory.hpp"
#include "rundir/run_records.hpp"

using llmprof::ProcessOutcome;
using llmprof::ProcessSpec;

namespace {

// Answers every run with canned stdout lines, or with the error a missing executable gives.
class FakeRunner final : public llmprof::ProcessRunner {
 public:
  std::vector<std::string> stdout_lines;
  bool executable_missing = false;
  int exit_code = 0;
  std::vector<std::vector<std::string>> argvs;

  llmprof::Result<ProcessOutcome> run(const ProcessSpec& spec) override {
    argvs.push_back(spec.argv);
    if (executable_missing) {
      return llmprof::make_error(llmprof::ErrorCode::not_found, "executable 'nvidia-smi' not found on PATH");
    }
    for (const auto& line : stdout_lines) {
      if (spec.on_stdout_line) spec.on_stdout_line(line);
    }
    ProcessOutcome outcome;
    outcome.exited = true;
    outcome.exit_code = exit_code;
    return outcome;
  }
  void request_stop() override {}
};

// One line as printed on the H100 machine (README of the fixtures: driver 580.159.04, 80 GB HBM3).
const std::string kH100Line = "0, NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB";

}  // namespace

TEST_CASE("nvidia-smi CSV rows become GPU records") {
  const auto gpus = llmprof::parse_nvidia_smi_gpus(kH100Line + "\n1, NVIDIA A100-SXM4-40GB, 535.54.03, 40960\n");
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].index == 0);
  CHECK(gpus[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(gpus[0].driver == "580.159.04");
  CHECK(gpus[0].memory_mib == 81559);
  CHECK(gpus[1].memory_mib == 40960);  // csv,nounits form
  CHECK(llmprof::parse_nvidia_smi_gpus("index, name, driver_version, memory.total [MiB]\n").empty());
  CHECK(llmprof::parse_nvidia_smi_gpus("0, GPU, 1.0, [N/A]\nNo devices were found\n").empty());
}

TEST_CASE("collect_environment asks nvidia-smi for the four fields") {
  FakeRunner runner;
  runner.stdout_lines = {kH100Line};
  const auto record = llmprof::collect_environment(runner, R"({"nsys":{"found":false}})");
  REQUIRE(runner.argvs.size() == 1);
  CHECK(runner.argvs[0] == std::vector<std::string>{"nvidia-smi", "--query-gpu=index,name,driver_version,memory.total",
                                                    "--format=csv,noheader"});
  REQUIRE(record.gpus.size() == 1);
  CHECK(record.gpus[0].memory_mib == 81559);
  CHECK_FALSE(record.host.empty());
  CHECK(record.os.find("Linux") != std::string::npos);
}

TEST_CASE("no nvidia-smi means no GPUs and a stated reason, not an error") {
  FakeRunner runner;
  runner.executable_missing = true;
  const auto record = llmprof::collect_environment(runner);
  CHECK(record.gpus.empty());
  REQUIRE(record.problems.size() >= 1);
  CHECK(record.problems.back().find("nvidia-smi") != std::string::npos);

  FakeRunner failing;
  failing.exit_code = 9;
  const auto failed = llmprof::collect_environment(failing);
  CHECK(failed.gpus.empty());
  CHECK(failed.problems.back() == "no GPU list: nvidia-smi exited with code 9");
}

TEST_CASE("CUDA_VISIBLE_DEVICES is recorded when set and null when not") {
  FakeRunner runner;
  ::setenv("CUDA_VISIBLE_DEVICES", "1,0", 1);
  CHECK(llmprof::collect_environment(runner).cuda_visible_devices == std::optional<std::string>("1,0"));
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  const auto record = llmprof::collect_environment(runner);
  CHECK_FALSE(record.cuda_visible_devices.has_value());
  const auto json = boost::json::parse(llmprof::environment_to_json(record)).as_object();
  CHECK(json.at("cuda_visible_devices").is_null());
}

TEST_CASE("env.json has the documented shape with the probe's JSON embedded") {
  llmprof::EnvironmentRecord record;
  record.host = "gpu-node-1";
  record.os = "Ubuntu 24.04.1 LTS; Linux 6.8.0 x86_64";
  record.gpus = llmprof::parse_nvidia_smi_gpus(kH100Line);
  record.cuda_visible_devices = "0";
  record.tools_json = R"({"ncu":{"version":"2025.3.1.0"}})";
  const auto json = boost::json::parse(llmprof::environment_to_json(record)).as_object();
  CHECK(json.at("host") == "gpu-node-1");
  const auto& gpu = json.at("gpus").as_array().at(0).as_object();
  CHECK(gpu.at("index") == 0);
  CHECK(gpu.at("name") == "NVIDIA H100 80GB HBM3");
  CHECK(gpu.at("driver") == "580.159.04");
  CHECK(gpu.at("memory_mib") == 81559);
  CHECK(json.at("cuda_visible_devices") == "0");
  CHECK(json.at("tools").as_object().at("ncu").as_object().at("version") == "2025.3.1.0");

  record.tools_json = "not json";  // kept as text rather than lost
  CHECK(boost::json::parse(llmprof::environment_to_json(record)).as_object().at("tools") == "not json");
}
