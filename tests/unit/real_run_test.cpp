// A whole run directory recorded on the H100 (deep-profile run, llmprof-decode --preset 1b, bf16,
// gated on decode; tests/data/h100-1b-decode): the analysis must reproduce figures computed
// independently from its CSV files with Python's csv module:
//   decode kernel time  = sum of "Total Time (ns)" over nvtx_kern_sum rows with Range ":decode" = 312,095,260
//   decode projection   = nvtx_gpu_proj_sum ":decode" Total Proj Time = 2,774,445,119
//   decode wall time    = nvtx_sum ":decode" Total Time = 2,774,688,310
//   busy fraction       = 312,095,260 / max(wall, projection) = 312,095,260 / 2,774,688,310 = 0.112479...
// nsys wrote summary_cuda_gpu_mem_time_sum.csv as a zero-byte file ("PROCESSED (EMPTY RESULTS)"): the
// run must still analyse, with an empty memory-operation table.
#include <catch2/catch.hpp>

#include "llmprof/analysis.hpp"
#include "llmprof/nsys_stats.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

TEST_CASE("an empty nsys stats report is an empty table, not a failure") {
  const auto stats = load_nsys_stats(data_path("h100-1b-decode/nsys/summary"));
  REQUIRE(stats.has_value());
  REQUIRE(stats->memory_operations);
  CHECK(stats->memory_operations->empty());
  REQUIRE(stats->kernels);
  CHECK(stats->kernels->front().name == "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT");
  CHECK(stats->kernels->front().time.total_time_ns == 56583852);
  // The per-file parser still rejects an empty file: there it means the tool failed.
  CHECK_FALSE(parse_nsys_gpu_memory_time(data_path("h100-1b-decode/nsys/summary_cuda_gpu_mem_time_sum.csv")));
}

TEST_CASE("the recorded H100 decode run analyses to independently computed figures") {
  AnalysisOptions options;
  options.capture_gated_on_stage = true;
  options.top_n = 10;
  const auto report = analyze_run_directory(data_path("h100-1b-decode"), options);
  REQUIRE(report.has_value());
  const StageAnalysis* decode = nullptr;
  for (const auto& stage : report->stages) {
    if (stage.name == "decode") decode = &stage;
  }
  REQUIRE(decode != nullptr);
  CHECK(decode->kernel_time_ns == 312095260);
  REQUIRE(decode->gpu_projection_ns);
  CHECK(*decode->gpu_projection_ns == 2774445119);
  REQUIRE(decode->gpu_busy_fraction);
  // Busy over the time the stage took: the larger of its wall time (nvtx_sum: 2774688310 ns) and projection.
  CHECK(*decode->gpu_busy_fraction == Approx(312095260.0 / 2774688310.0).epsilon(1e-9));
  CHECK_THAT(decode->verdict, Catch::Contains("host/launch-bound"));
  // Workload MFU: 2,152,792,064 FLOP/token x 128 tokens / 1.487527 s (bare decode), over the bf16 peak.
  REQUIRE(decode->model_flop_per_s);
  CHECK(*decode->model_flop_per_s == Approx(2152792064.0 * 128 / 1.4875269710000001).epsilon(1e-9));

  REQUIRE_FALSE(report->kernels.empty());
  CHECK(report->kernels.front().name == "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT");
  CHECK(report->kernels.front().instances == 4096);
  // Batch-1 GEMV on tensor cores: DRAM-bound (the weights stream once), far from the compute roof.
  REQUIRE(report->kernels.front().bound);
  CHECK(*report->kernels.front().bound == "memory");
  REQUIRE(report->kernels.front().pct_peak_dram);
  CHECK(*report->kernels.front().pct_peak_dram > 50.0);
  CHECK(report->device.name == "NVIDIA H100 80GB HBM3");
}
