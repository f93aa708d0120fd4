// The pipeline with a workload that opens its own capture windows (cudaProfilerStart/Stop), on a scripted
// runner: nsys --capture-range=cudaProfilerApi --capture-range-end=repeat:2, the two numbered reports found,
// exported and listed; ncu only inside the window (--profile-from-start off) in ncu/cmd.txt.
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include "fake_process_runner.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/tool_probe.hpp"
#include "pipeline_bench.hpp"
#include "run_manifest_reading.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

TEST_CASE("two capture windows from the workload: numbered reports exported and listed, ncu inside the window") {
  Bench bench;
  bench.config.nsys.capture_range = NsysCaptureRange::cuda_profiler_api;
  bench.config.nsys.capture_range_end = NsysCaptureRangeEnd::repeat;
  bench.config.nsys.capture_windows = 2;
  bench.script_workload();
  // nsys numbers the reports of a repeat capture BASE.1, BASE.2 (recorded with nsys 2022.4.2).
  bench.runner.on(nsys_capture(),
                  FakeAnswer::printing({"Collecting data...",
                                        "Generated:", "\t" + (bench.main() / "nsys/profile.1.nsys-rep").string(),
                                        "\t" + (bench.main() / "nsys/profile.2.nsys-rep").string()})
                      .writing((bench.main() / "nsys/profile.1.nsys-rep").string(), "window 1")
                      .writing((bench.main() / "nsys/profile.2.nsys-rep").string(), "window 2"));
  bench.script_ncu_report();
  bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys: " << nsys.reason);
  CHECK(nsys.status == StageStatus::ok);

  const std::string nsys_commands = read_file(bench.main() / "nsys/cmd.txt");
  CHECK(nsys_commands.find("--capture-range=cudaProfilerApi --capture-range-end=repeat:2") != std::string::npos);
  CHECK(nsys_commands.find("--nvtx-capture") == std::string::npos);
  // Window 1 into nsys/, window 2 into nsys/window-2/: stats and export of each report.
  CHECK(read_file(bench.main() / "nsys/window-2/cmd.txt").find("profile.2.nsys-rep") != std::string::npos);
  CHECK(fs::is_directory(bench.main() / "nsys/window-2"));
  const auto windows = boost::json::parse(read_file(bench.main() / "nsys/windows.json")).as_object();
  CHECK(windows.at("bound").as_int64() == 2);
  const auto& listed = windows.at("windows").as_array();
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].at("number").as_int64() == 1);
  CHECK(listed[0].at("directory").as_string() == "nsys");
  CHECK(listed[1].at("report").as_string() == "nsys/profile.2.nsys-rep");
  CHECK(listed[1].at("directory").as_string() == "nsys/window-2");

  const std::string ncu_commands = read_file(bench.main() / "ncu/cmd.txt");
  CHECK(ncu_commands.find("--target-processes all --profile-from-start off") != std::string::npos);
}

TEST_CASE("with an NVTX gate ncu profiles from the start, as before") {
  Bench bench;
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  bench.run();
  CHECK(read_file(bench.main() / "ncu/cmd.txt").find("--profile-from-start") == std::string::npos);
}

// Issue 33: without an NVIDIA driver nsys cannot see a cudaProfilerStart call, so the diagnosis must not say the
// workload never made it; on a GPU machine it may. (The driver is this machine's: /proc/driver/nvidia/version.)
TEST_CASE("a cudaProfilerApi window that never opens: 'never called' only where a driver could have seen the call") {
  Bench bench;
  bench.config.nsys.capture_range = NsysCaptureRange::cuda_profiler_api;
  bench.config.run.on_empty_gate = OnEmptyGate::fail;
  bench.script_workload();
  bench.runner.on(nsys_capture(),
                  FakeAnswer::printing({"Processing events...", "Generated:", "    No reports were generated"}));
  bench.script_ncu_report(false);
  bench.run();
  const StageRecord& nsys = stage_of(bench.manifest(), "nsys");
  INFO(nsys.reason);
  CHECK(nsys.status == StageStatus::failed);
  CHECK_THAT(nsys.reason, Catch::Contains("the capture range cudaProfilerApi never opened"));
  if (detect_nvidia_driver().present) {
    // A driver is no usable GPU: both causes are named, neither is claimed.
    CHECK_THAT(nsys.reason, Catch::Contains("Either the workload never called it (torch.cuda.profiler.start()), or "
                                            "it called it without a CUDA context to start"));
  } else {
    CHECK_THAT(nsys.reason, Catch::Contains("this machine has no NVIDIA driver"));
    CHECK_THAT(nsys.reason, !Catch::Contains("never called"));
  }
}
