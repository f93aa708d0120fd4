// Stage 1 run.repeats times and nvidia-smi GPU state around the GPU stages, on a scripted runner:
// stage1/repeats.json, gpu_state.json, the stage's warnings and the report's "Repeats and noise".
// Expected statistics: tests/tools/statistics_expected.py (quoted where used).
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "fake_process_runner.hpp"
#include "llmprof/clock.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/gpu_state.hpp"
#include "llmprof/logging.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

// The recorded decode run's metrics with another decode time.
std::string metrics_with_decode(double decode_s) {
  std::string metrics = read_file(data_path("analysis/workload_metrics_decode.json"));
  const std::string recorded = "\"decode_s\": 0.177371307";
  metrics.replace(metrics.find(recorded), recorded.size(), "\"decode_s\": " + std::to_string(decode_s));
  return metrics;
}

FakeAnswer workload_run(double wall_s, double decode_s) {
  FakeAnswer answer = FakeAnswer::printing({"done"}).doing([decode_s](const ProcessSpec& spec) {
    write_file(*spec.environment.at("LLMPROF_METRICS_FILE"), metrics_with_decode(decode_s));
  });
  answer.wall_time = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(wall_s));
  return answer;
}

struct RepeatBench {
  TempDir temp;
  FakeProcessRunner runner;
  ManualClock clock;
  DeepProfileConfig config;
  DeepProfilerEnvironment environment;

  RepeatBench() {
    init_logging({LogLevel::error, true, nullptr});
    environment.path_variable = (temp / "empty-bin").string();  // no nsys, no ncu
    environment.use_default_tool_locations = false;
    config.run.runs_root = temp / "runs";
    config.run.run_id = "r1";
    config.run.min_free_space_gb = 0;
    config.run.enable_nsys = false;
    config.run.enable_ncu = false;
    config.run.repeats = 3;
    config.workload.argv = {"workload"};
    runner.on(command_is("workload"), workload_run(1.0, 0.17), 1);
    runner.on(command_is("workload"), workload_run(1.1, 0.18), 1);
    runner.on(command_is("workload"), workload_run(1.2, 0.175), 1);
  }

  fs::path main() const { return temp.path() / "runs" / "r1"; }

  RunSummary run() {
    DeepProfiler profiler(config, runner, clock, {}, environment);
    auto summary = profiler.run();
    REQUIRE(summary.has_value());
    return summary.value();
  }

  boost::json::object json(const std::string& relative) const {
    return boost::json::parse(read_file(main() / relative)).as_object();
  }
};

const StageRecord& stage_of(const RunSummary& summary, const std::string& name) {
  for (const auto& stage : summary.stages) {
    if (stage.name == name) return stage;
  }
  FAIL("no stage " << name);
  throw std::logic_error("unreachable");
}

bool has_warning(const StageRecord& stage, const std::string& text) {
  return std::any_of(stage.warnings.begin(), stage.warnings.end(), [&](const auto& w) { return w == text; });
}

}  // namespace

TEST_CASE("run.repeats: three bare runs, their statistics in stage1/repeats.json and the report") {
  RepeatBench bench;
  bench.runner.on(command_is("nvidia-smi"),
                  FakeAnswer::failing_to_start(make_error(ErrorCode::not_found, "nvidia-smi not found")));
  const RunSummary summary = bench.run();
  CHECK(stage_of(summary, "stage1").status == StageStatus::ok);
  CHECK(fs::exists(bench.main() / "stage1/stdout.log"));
  CHECK(fs::exists(bench.main() / "stage1/repeats/2/stdout.log"));
  CHECK(fs::exists(bench.main() / "stage1/repeats/3/metrics.json"));

  // statistics_expected.py: pipeline wall_s: n=3 mean=1.1 sd=0.1 t=4.30265273 ci=[0.8515862288, 1.348413771]
  // spread=0.2258307011; pipeline decode_s: n=3 mean=0.175 sd=0.005 t=4.30265273 ci=[0.1625793114, 0.1874206886]
  // spread=0.07097536319
  const auto repeats = bench.json("stage1/repeats.json");
  CHECK(repeats.at("schema").as_string() == "llmprof.repeats/1");
  CHECK(repeats.at("repeats").to_number<int>() == 3);
  const auto& wall = repeats.at("quantities").at("wall_s").as_object();
  CHECK(wall.at("mean").to_number<double>() == Approx(1.1));
  CHECK(wall.at("standard_deviation").to_number<double>() == Approx(0.1));
  CHECK(wall.at("confidence_low").to_number<double>() == Approx(0.8515862288).epsilon(1e-8));
  CHECK(wall.at("confidence_high").to_number<double>() == Approx(1.348413771).epsilon(1e-8));
  CHECK(wall.at("relative_spread").to_number<double>() == Approx(0.2258307011).epsilon(1e-8));
  CHECK_FALSE(wall.at("stable").as_bool());
  const auto& decode = repeats.at("quantities").at("decode_s").as_object();
  CHECK(decode.at("samples").as_array().size() == 3);
  CHECK(decode.at("confidence_low").to_number<double>() == Approx(0.1625793114).epsilon(1e-8));
  CHECK(decode.at("relative_spread").to_number<double>() == Approx(0.07097536319).epsilon(1e-8));
  CHECK(repeats.at("quantities").as_object().contains("prefill_s"));

  const auto& stage1 = stage_of(summary, "stage1");
  CHECK(has_warning(
      stage1, "wall_s is not stable over 3 runs (95% CI wider than +-2% of the mean): compare such runs with care"));

  // Without nvidia-smi the run says so once and goes on.
  const auto gpu_state = bench.json("gpu_state.json");
  const auto& snapshots = gpu_state.at("snapshots").as_array();
  REQUIRE(snapshots.size() == 1);
  CHECK_THAT(std::string(snapshots[0].at("problem").as_string()), Catch::Contains("nvidia-smi is not available"));

  const std::string report = read_file(bench.main() / "report.md");
  CHECK_THAT(report, Catch::Contains("## Repeats and noise"));
  CHECK_THAT(report, Catch::Contains("| wall_s | 3 | 1.10 s | 100 ms | 852 ms – 1.35 s | ±23% (not stable) |"));
  CHECK_THAT(report, Catch::Contains("GPU state: nvidia-smi is not available"));
}

TEST_CASE("GPU state: a throttled GPU and another process on it become stage warnings") {
  RepeatBench bench;
  bench.config.run.repeats = 1;
  bench.config.run.device_index = 0;
  const std::string state_query = gpu_state_query_argv()[1];
  const std::string process_query = gpu_processes_query_argv()[1];
  // Before stage1: cool, one other process; after: thermally throttled (0x20), nobody else.
  bench.runner.on(argv_contains(state_query),
                  FakeAnswer::printing({"0, GPU-aaaa, 1980, 2619, 41, 70.5, 0, 0x0000000000000001",
                                        "1, GPU-bbbb, 1980, 2619, 40, 69.0, 0, 0x0000000000000020"}),
                  1);
  bench.runner.on(argv_contains(state_query),
                  FakeAnswer::printing({"0, GPU-aaaa, 1410, 2619, 87, 310.25, 0, 0x0000000000000020",
                                        "1, GPU-bbbb, 1980, 2619, 40, 69.0, 0, 0x0000000000000000"}));
  bench.runner.on(argv_contains(process_query),
                  FakeAnswer::printing({"GPU-aaaa, 4242, python3, 2048", "GPU-bbbb, 77, other, 10"}), 1);
  bench.runner.on(argv_contains(process_query), FakeAnswer::printing({}));
  bench.runner.on(command_is("nvidia-smi"), FakeAnswer::printing({"0, NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB"}));
  const RunSummary summary = bench.run();
  const auto& stage1 = stage_of(summary, "stage1");
  CHECK(has_warning(stage1,
                    "another process was on GPU 0 before stage1: pid 4242 python3 (2048 MiB); timings may be shared"));
  CHECK(has_warning(stage1, "GPU 0 was throttled after stage1 (sw_thermal_slowdown, 87 C, SM 1410 MHz)"));
  // GPU 1 is not the workload's (run.device_index = 0): its throttle bit and process are recorded, not warned.
  for (const auto& warning : stage1.warnings) CHECK(warning.find("GPU 1") == std::string::npos);

  const auto gpu_state = boost::json::parse(read_file(bench.main() / "gpu_state.json")).as_object();
  const auto& snapshots = gpu_state.at("snapshots").as_array();
  REQUIRE(snapshots.size() == 2);
  CHECK(snapshots[0].at("moment").as_string() == "before");
  CHECK(snapshots[1].at("stage").as_string() == "stage1");
  const auto& after_gpu = snapshots[1].at("gpus").as_array()[0].as_object();
  CHECK(after_gpu.at("sm_clock_mhz").to_number<double>() == 1410);
  CHECK(after_gpu.at("power_w").to_number<double>() == 310.25);
  CHECK(after_gpu.at("throttle_reasons").as_string() == "0x0000000000000020");
  CHECK(snapshots[0].at("processes").as_array().size() == 2);

  const std::string report = read_file(bench.main() / "report.md");
  CHECK_THAT(report, Catch::Contains("- **GPU:** GPU 0 was throttled after stage1"));
}

TEST_CASE("nvidia-smi CSV parsing and throttle reasons") {
  const auto gpus = parse_gpu_state_csv("0, GPU-aaaa, 1980, 2619, 35, [N/A], 3, 0x0000000000000084\nheader, junk\n");
  REQUIRE(gpus.size() == 1);
  CHECK_FALSE(gpus[0].power_w.has_value());
  CHECK(gpus[0].utilization_pct == 3);
  CHECK(gpus[0].throttle_reasons == 0x84u);
  CHECK(slowing_throttle_reasons(0x84) == std::vector<std::string>{"sw_power_cap", "hw_power_brake_slowdown"});
  CHECK(slowing_throttle_reasons(0x1 | 0x2 | 0x10 | 0x100).empty());  // idle, app clocks, sync boost, display
  const auto processes = parse_gpu_processes_csv("GPU-aaaa, 12, python, [N/A]\nGPU-aaaa, x, bad, 1\n");
  REQUIRE(processes.size() == 1);
  CHECK(processes[0].pid == 12);
  CHECK_FALSE(processes[0].used_memory_mib.has_value());
}
