// The coverage rule of select_top_kernels (fewest heaviest kernels reaching a fraction of the stage's
// kernel time, under a cap), what more coverage would take, and collectives left out. Expected figures
// come from tests/tools/selection_expected.py (Python csv module), read from its committed output
// tests/data/oracles/selection.txt (tests/support/oracle.hpp), which ctest checks against the oracle.
#include <catch2/catch.hpp>

#include <string>

#include "llmprof/kernel_selection.hpp"
#include "oracle.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;

namespace {

// A figure of selection_expected.py's line that starts with `line_start`.
double expected(const std::string& line_start, const std::string& key) {
  return oracle_figure("selection", line_start, key);
}

NsysStats load_stats(const std::string& prefix) {
  auto stats = load_nsys_stats(data_path(prefix));
  REQUIRE(stats.has_value());
  return std::move(stats).value();
}

TopKernelRequest coverage_request(double target, std::size_t cap) {
  TopKernelRequest request;
  request.stage = "decode";
  request.coverage = target;
  request.max_kernels = cap;
  return request;
}

void check_step(const CoverageStep& step, double target, std::size_t more) {
  CHECK(step.target == target);
  CHECK(step.reachable);
  CHECK(step.more_kernels == more);
}

NvtxKernelRow decode_row(const std::string& name, std::int64_t time_ns, std::int64_t instances) {
  NvtxKernelRow row;
  row.range = NvtxRangeName{"", "decode"};
  row.kernel_name = name;
  row.kernel_instances = instances;
  row.time.total_time_ns = time_ns;
  row.time.count = instances;
  return row;
}

// 1000 ns of decode, 360 of it in two NCCL kernels.
NsysStats synthetic_stage_with_collectives() {
  NsysStats stats;
  stats.range_kernels = std::vector<NvtxKernelRow>{
      decode_row("gemm_a", 500, 10),
      decode_row("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096>)", 300, 10),
      decode_row("layer_norm", 100, 20),
      decode_row("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", 60, 5),
      decode_row("copy", 40, 40),
  };
  return stats;
}

}  // namespace

TEST_CASE("coverage 90% of ns1 decode: 8 kernels reach 94.3%, one more for 95%") {
  // selection_expected.py: ns1 decode target=0.9 cap=30: stage_time=1435206 distinct=10 selected=8
  // coverage=0.943341 steps 0.95:+1 0.99:+2
  auto selection = select_top_kernels(load_stats("h100-nsight-2025.3/nsys/ns1_st"), coverage_request(0.9, 30));
  REQUIRE(selection.has_value());
  const std::string line = "ns1 decode target=0.9 cap=30:";
  CHECK(selection->kernels.size() == expected(line, "selected"));
  CHECK(selection->coverage == Approx(expected(line, "coverage")).margin(1e-6));
  CHECK(selection->coverage_target == 0.9);
  CHECK(selection->max_kernels == 30);
  CHECK_FALSE(selection->capped);
  REQUIRE(selection->more_coverage.size() == 2);
  check_step(selection->more_coverage[0], 0.95, 1);
  check_step(selection->more_coverage[1], 0.99, 2);
  CHECK(selection->more_coverage[1].kernels == 10);
  CHECK(selection->collectives_left_out.empty());
  CHECK(selection->collective_share == 0);
}

TEST_CASE("the cap stops a coverage selection short and says so") {
  // selection_expected.py: ns1 decode target=0.9 cap=3: selected=3 coverage=0.527994
  // steps 0.8:+3 0.9:+5 0.95:+6 0.99:+7
  auto selection = select_top_kernels(load_stats("h100-nsight-2025.3/nsys/ns1_st"), coverage_request(0.9, 3));
  REQUIRE(selection.has_value());
  CHECK(selection->kernels.size() == expected("ns1 decode target=0.9 cap=3:", "selected"));
  CHECK(selection->capped);
  CHECK(selection->coverage == Approx(expected("ns1 decode target=0.9 cap=3:", "coverage")).margin(1e-6));
  REQUIRE(selection->more_coverage.size() == 4);
  check_step(selection->more_coverage[0], 0.8, 3);
  check_step(selection->more_coverage[1], 0.9, 5);
  check_step(selection->more_coverage[2], 0.95, 6);
  check_step(selection->more_coverage[3], 0.99, 7);
}

TEST_CASE("top-N selections say what more coverage would take too") {
  // selection_expected.py: ns1 decode top5: coverage=0.790562 steps 0.8:+1 0.9:+3 0.95:+4 0.99:+5
  TopKernelRequest request;
  request.stage = "decode";
  request.n = 5;
  auto selection = select_top_kernels(load_stats("h100-nsight-2025.3/nsys/ns1_st"), request);
  REQUIRE(selection.has_value());
  CHECK_FALSE(selection->coverage_target.has_value());
  REQUIRE(selection->more_coverage.size() == 4);
  check_step(selection->more_coverage[0], 0.8, 1);
  check_step(selection->more_coverage[1], 0.9, 3);
  check_step(selection->more_coverage[3], 0.99, 5);
}

TEST_CASE("the recorded H100 1b decode: top-10 covers 70.5%, 90% takes 19 of 29 kernels") {
  // selection_expected.py: 1b decode (gated capture) target=0.9 cap=30: stage_time=312095260 distinct=29
  // selected=19 coverage=0.908676 steps 0.95:+3 0.99:+7; top10: coverage=0.704874 steps 0.8:+4 0.9:+9
  const auto stats = load_stats("h100-1b-decode/nsys/summary");
  auto request = coverage_request(0.9, 30);
  request.capture_gated_on_stage = true;
  auto selection = select_top_kernels(stats, request);
  REQUIRE(selection.has_value());
  const std::string line = "1b decode (gated capture) target=0.9 cap=30:";
  CHECK(selection->stage_kernel_time_ns == expected(line, "stage_time"));
  CHECK(selection->stage_kernel_count == expected(line, "distinct"));
  CHECK(selection->kernels.size() == expected(line, "selected"));
  CHECK(selection->coverage == Approx(expected(line, "coverage")).margin(1e-6));
  REQUIRE(selection->more_coverage.size() == 2);
  check_step(selection->more_coverage[0], 0.95, 3);
  check_step(selection->more_coverage[1], 0.99, 7);

  request.coverage.reset();
  request.n = 10;
  auto top10 = select_top_kernels(stats, request);
  REQUIRE(top10.has_value());
  CHECK(top10->coverage == Approx(expected("1b decode top10 target=None cap=10:", "coverage")).margin(1e-6));
  check_step(top10->more_coverage[0], 0.8, 4);
  check_step(top10->more_coverage[1], 0.9, 9);
}

TEST_CASE("collectives are left out of the selection and the regex, with their share stated") {
  // selection_expected.py: synthetic target=0.9: selected=3 coverage=0.640000 collective_share=0.360000,
  // every step unreachable; target=0.5: selected=1 coverage=0.500000 (an exact hit counts)
  const auto stats = synthetic_stage_with_collectives();
  auto selection = select_top_kernels(stats, coverage_request(0.9, 30));
  REQUIRE(selection.has_value());
  REQUIRE(selection->kernels.size() == 3);
  CHECK(selection->kernels[0].name == "gemm_a");
  CHECK(selection->kernels[1].name == "layer_norm");
  CHECK(selection->kernels[2].name == "copy");
  CHECK(selection->coverage == Approx(expected("synthetic target=0.9 cap=30:", "coverage")));
  CHECK_FALSE(selection->capped);  // not the cap: the collectives make 90% unreachable
  REQUIRE(selection->collectives_left_out.size() == 2);
  CHECK(selection->collectives_left_out[0].name.rfind("ncclDevKernel_AllReduce", 0) == 0);
  CHECK(selection->collective_time_ns == 360);
  CHECK(selection->collective_share == Approx(expected("synthetic target=0.9 cap=30:", "collective_share")));
  REQUIRE(selection->more_coverage.size() == 4);
  for (const auto& step : selection->more_coverage) CHECK_FALSE(step.reachable);
  CHECK(selection->kernel_regex.find("nccl") == std::string::npos);
  // Launch bound: the selected kernels' launches (10 + 20 + 40) minus the rarest (10) plus one.
  CHECK(selection->launch_count == 61);

  auto exact = select_top_kernels(stats, coverage_request(0.5, 30));
  REQUIRE(exact.has_value());
  CHECK(exact->kernels.size() == 1);
  CHECK(exact->coverage == 0.5);

  TopKernelRequest top;
  top.stage = "decode";
  top.n = 2;
  auto top2 = select_top_kernels(stats, top);
  REQUIRE(top2.has_value());
  CHECK(top2->kernels[1].name == "layer_norm");  // the NCCL kernel with more time is skipped
}

TEST_CASE("a stage of collectives only, and bad rules, are errors") {
  NsysStats stats;
  stats.range_kernels =
      std::vector<NvtxKernelRow>{decode_row("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096>)", 9, 1)};
  auto refused = select_top_kernels(stats, coverage_request(0.9, 30));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("every kernel of stage 'decode' is a collective") != std::string::npos);

  const auto synthetic = synthetic_stage_with_collectives();
  CHECK(select_top_kernels(synthetic, coverage_request(0, 30)).error().code == ErrorCode::invalid_argument);
  CHECK(select_top_kernels(synthetic, coverage_request(1.5, 30)).error().code == ErrorCode::invalid_argument);
  CHECK(select_top_kernels(synthetic, coverage_request(0.9, 0)).error().code == ErrorCode::invalid_argument);
  CHECK(select_top_kernels(synthetic, coverage_request(1.0, 30)).has_value());
}

TEST_CASE("collective kernel names") {
  CHECK(is_collective_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)"));
  CHECK(is_collective_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"));
  CHECK(is_collective_kernel("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData *, ...)"));
  CHECK(is_collective_kernel("void tensorrt_llm::kernels::oneShotAllReduceKernel<half, 8>(AllReduceParams)"));
  CHECK(is_collective_kernel("void c10d::symmetric_memory::multimem_all_reduce_kernel<float, 4>(float *)"));
  CHECK_FALSE(is_collective_kernel("nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT"));
  CHECK_FALSE(is_collective_kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(T3)"));
  CHECK_FALSE(is_collective_kernel(
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>(int, T2, T3)"));
}
