// nsys stats report parsers on every nsys fixture. Counts and sums were computed independently
// with Python's csv module: python3 tests/tools/fixture_facts.py.
#include <catch2/catch.hpp>

#include <numeric>
#include <sstream>

#include "llmprof/nsys_stats.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

namespace {

std::filesystem::path nsys_file(const std::string& name) { return data_path("h100-nsight-2025.3/nsys/" + name); }

template <typename Rows>
std::int64_t total_ns(const Rows& rows) {
  std::int64_t sum = 0;
  for (const auto& row : rows) sum += row.time.total_time_ns;
  return sum;
}

}  // namespace

TEST_CASE("parse_nsys_range_name splits domain and name") {
  CHECK(parse_nsys_range_name(":prefill") == NvtxRangeName{"", "prefill"});
  CHECK(parse_nsys_range_name("llm:decode") == NvtxRangeName{"llm", "decode"});
  CHECK(parse_nsys_range_name("llm:layer:0") == NvtxRangeName{"llm", "layer:0"});
  CHECK(parse_nsys_range_name("bare") == NvtxRangeName{"", "bare"});
  CHECK(NvtxRangeName{"", "prefill"}.qualified() == ":prefill");
  CHECK(NvtxRangeName{"llm", "decode"}.qualified() == "llm:decode");
}

TEST_CASE("cuda_gpu_kern_sum: rows, totals and quoted names with commas") {
  const auto rows = parse_nsys_kernel_summary(nsys_file("ns1_st_cuda_gpu_kern_sum.csv"));
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 17);
  CHECK(total_ns(*rows) == 1939822);
  std::int64_t instances = 0;
  for (const auto& row : *rows) instances += row.time.count;
  CHECK(instances == 435);
  const auto& first = rows->front();
  CHECK(first.name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT");
  CHECK(first.time.time_percent == 16.6);
  CHECK(first.time.total_time_ns == 322025);
  CHECK(first.time.count == 64);
  CHECK(first.time.average_ns == 5031.6);
  CHECK(first.time.median_ns == 5104.0);
  CHECK(first.time.min_ns == 4448);
  CHECK(first.time.max_ns == 5824);
  CHECK(first.time.stddev_ns == 460.1);
  CHECK((*rows)[1].name ==
        "void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::Half, float, (bool)0>(int, T2, const T1 *, "
        "const T1 *, const T1 *, T2 *, T2 *, T1 *)");
  const auto with_comma =
      std::count_if(rows->begin(), rows->end(), [](const auto& r) { return r.name.find(',') != std::string::npos; });
  CHECK(with_comma == 9);

  const auto decode_only = parse_nsys_kernel_summary(nsys_file("ns2_st_cuda_gpu_kern_sum.csv"));
  REQUIRE(decode_only.has_value());
  CHECK(decode_only->size() == 10);
  CHECK(total_ns(*decode_only) == 1425187);
}

TEST_CASE("nvtx_sum: range names normalised") {
  const auto rows = parse_nsys_nvtx_summary(nsys_file("ns1_st_nvtx_sum.csv"));
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].range == NvtxRangeName{"", "prefill"});
  CHECK((*rows)[0].style == "PushPop");
  CHECK((*rows)[0].time.total_time_ns == 1280269408);
  CHECK((*rows)[0].time.time_percent == 87.8);
  CHECK((*rows)[1].range == NvtxRangeName{"", "decode"});
  CHECK((*rows)[1].time.total_time_ns == 177371307);
  CHECK(total_ns(*rows) == 1457640715);

  const auto gated = parse_nsys_nvtx_summary(nsys_file("ns2_st_nvtx_sum.csv"));
  REQUIRE(gated.has_value());
  REQUIRE(gated->size() == 1);
  CHECK(gated->front().range.name == "decode");
  CHECK(gated->front().time.total_time_ns == 128287443);
}

TEST_CASE("nvtx_sum: a range with an empty name is refused, naming the line") {
  // Kept, it became a report.json stage with an empty name that `report` refused (exit 4): no report.
  std::string text = llmprof::testing::read_file(nsys_file("ns1_st_nvtx_sum.csv"));
  text.replace(text.find(":decode"), 7, ":");
  std::istringstream in(text);
  const auto rows = parse_nsys_nvtx_summary(in, "nvtx.csv");
  REQUIRE_FALSE(rows.has_value());
  CHECK_THAT(rows.error().message, Catch::Contains("nvtx.csv:3: column 'Range': an NVTX range with an empty name"));
}

TEST_CASE("nvtx_kern_sum: kernels outside any range have no range") {
  const auto rows = parse_nsys_nvtx_kernel_summary(nsys_file("ns1_st_nvtx_kern_sum.csv"));
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 20);
  CHECK(total_ns(*rows) == 1939822);  // equals the kernel summary's total: every kernel once
  std::int64_t kernels = 0;
  for (const auto& row : *rows) kernels += row.kernel_instances;
  CHECK(kernels == 435);
  const auto outside = std::count_if(rows->begin(), rows->end(), [](const auto& r) { return !r.range; });
  CHECK(outside == 2);
  const auto& decode = (*rows)[2];
  REQUIRE(decode.range.has_value());
  CHECK(*decode.range == NvtxRangeName{"", "decode"});
  CHECK(decode.process_id == 468);
  CHECK(decode.thread_id == 468);
  CHECK(decode.range_instances == 1);
  CHECK(decode.kernel_instances == 64);
  CHECK(decode.time.count == 64);
  CHECK(decode.time.total_time_ns == 322025);
  CHECK(decode.time.time_percent == 0);  // this report has no Time (%) column
  CHECK(decode.kernel_name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT");
}

TEST_CASE("nvtx_gpu_proj_sum") {
  const auto rows = parse_nsys_nvtx_gpu_projection(nsys_file("ns1_st_nvtx_gpu_proj_sum.csv"));
  REQUIRE(rows.has_value());
  REQUIRE(rows->size() == 2);
  const auto& prefill = (*rows)[0];
  CHECK(prefill.range == NvtxRangeName{"", "prefill"});
  CHECK(prefill.total_projection_ns == 1226511862);
  CHECK(prefill.total_range_ns == 1280269408);
  CHECK(prefill.range_instances == 1);
  CHECK(prefill.total_gpu_operations == 44);
  CHECK(prefill.average_range_level == 0.0);
  CHECK((*rows)[1].total_gpu_operations == 345);
  CHECK((*rows)[0].total_projection_ns + (*rows)[1].total_projection_ns == 1383329745);
}

TEST_CASE("cuda_api_sum and cuda_gpu_mem_time_sum") {
  const auto api = parse_nsys_cuda_api_summary(nsys_file("ns1_st_cuda_api_sum.csv"));
  REQUIRE(api.has_value());
  CHECK(api->size() == 28);
  CHECK(total_ns(*api) == 428845174);
  CHECK(api->front().name == "cuLibraryLoadData");
  CHECK(api->front().time.count == 30);
  CHECK((*api)[2].name == "cudaLaunchKernel");
  CHECK((*api)[2].time.count == 246);

  const auto memory = parse_nsys_gpu_memory_time(nsys_file("ns1_st_cuda_gpu_mem_time_sum.csv"));
  REQUIRE(memory.has_value());
  REQUIRE(memory->size() == 2);
  CHECK(memory->front().operation == "[CUDA memcpy Host-to-Device]");
  CHECK(memory->front().time.count == 51);
  CHECK(total_ns(*memory) == 33259108);
}

TEST_CASE("load_nsys_stats reads every report under a prefix") {
  const auto stats = load_nsys_stats(data_path("h100-nsight-2025.3/nsys/ns1_st"));
  REQUIRE(stats.has_value());
  REQUIRE(stats->kernels);
  CHECK(stats->kernels->size() == 17);
  REQUIRE(stats->ranges);
  CHECK(stats->ranges->size() == 2);
  REQUIRE(stats->range_kernels);
  CHECK(stats->range_kernels->size() == 20);
  REQUIRE(stats->range_projections);
  REQUIRE(stats->cuda_api);
  REQUIRE(stats->memory_operations);

  // ns2 has only two of the six reports: the others are absent, not errors.
  const auto partial = load_nsys_stats(data_path("h100-nsight-2025.3/nsys/ns2_st"));
  REQUIRE(partial.has_value());
  CHECK(partial->kernels->size() == 10);
  CHECK(partial->ranges->size() == 1);
  CHECK_FALSE(partial->range_kernels);
  CHECK_FALSE(partial->cuda_api);

  const auto none = load_nsys_stats(data_path("h100-nsight-2025.3/nsys/absent"));
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code == ErrorCode::not_found);
  CHECK_THAT(none.error().message, Catch::Contains("absent"));
}

TEST_CASE("nsys bad input gives errors naming file and problem") {
  const std::string good = llmprof::testing::read_file(nsys_file("ns1_st_cuda_gpu_kern_sum.csv"));
  SECTION("missing column") {
    std::string text = good;
    text.replace(text.find("Med (ns)"), 8, "Median");
    std::istringstream in(text);
    const auto rows = parse_nsys_kernel_summary(in, "kern.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("kern.csv") && Catch::Contains("'Med (ns)'"));
  }
  SECTION("truncated file") {
    std::istringstream in(good.substr(0, good.find("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT") - 12));
    const auto rows = parse_nsys_kernel_summary(in, "kern.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("kern.csv:6:") && Catch::Contains("truncated row"));
  }
  SECTION("cut inside a quoted name") {
    std::istringstream in(good.substr(0, good.find("vectorized_layer_norm_kernel")));
    const auto rows = parse_nsys_kernel_summary(in, "kern.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("kern.csv:3:") && Catch::Contains("unterminated"));
  }
  SECTION("bad number") {
    std::string text = good;
    text.replace(text.find("322025"), 6, "32x025");
    std::istringstream in(text);
    const auto rows = parse_nsys_kernel_summary(in, "kern.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("kern.csv:2: column 'Total Time (ns)': not an integer"));
  }
  SECTION("a kernel row written twice") {
    // The first data row again: kept, it doubled that kernel's time (its share went from 18% to 31%
    // on the 1B decode capture).
    const auto second_line = good.find('\n') + 1;
    const auto third_line = good.find('\n', second_line) + 1;
    std::string text = good;
    text.insert(third_line, good.substr(second_line, third_line - second_line));
    std::istringstream in(text);
    const auto rows = parse_nsys_kernel_summary(in, "kern.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("kern.csv:3:") && Catch::Contains("repeats line 2"));
  }
  SECTION("a negative Total Time") {
    std::string text = good;
    text.replace(text.find("322025"), 6, "-322025");
    std::istringstream in(text);
    const auto rows = parse_nsys_kernel_summary(in, "kern.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message,
               Catch::Contains("kern.csv:2: column 'Total Time (ns)': a negative time or count"));
  }
  SECTION("a minimum above the maximum") {
    std::string text = good;
    text.replace(text.find("4448"), 4, "9999");
    std::istringstream in(text);
    const auto rows = parse_nsys_kernel_summary(in, "kern.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("the minimum is above the maximum"));
  }
  SECTION("empty file") {
    std::istringstream in("");
    const auto rows = parse_nsys_nvtx_summary(in, "nvtx.csv");
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("nvtx.csv is empty"));
  }
  SECTION("another report's file") {
    const auto rows = parse_nsys_nvtx_gpu_projection(nsys_file("ns1_st_cuda_api_sum.csv"));
    REQUIRE_FALSE(rows.has_value());
    CHECK_THAT(rows.error().message, Catch::Contains("ns1_st_cuda_api_sum.csv"));
  }
}

TEST_CASE("graph launches counted from the CUDA API summary; kernel tables taken from a node-traced capture", ) {
  // tests/tools/graph_node_pass_expected.py: 64 cudaGraphLaunch_v10000 calls; 2 kernels traced whole, 25 per node.
  auto graph = load_nsys_stats(data_path("nsys-sqlite/graphtrace_summaries/summary"));
  auto node = load_nsys_stats(data_path("nsys-sqlite/nodetrace_summaries/summary"));
  REQUIRE(graph);
  REQUIRE(node);
  CHECK(count_graph_launches(graph.value()) == 64);
  CHECK(count_graph_launches(node.value()) == 64);  // node tracing still records the launch calls
  auto eager = load_nsys_stats(nsys_file("ns1_st"));
  REQUIRE(eager);
  CHECK(count_graph_launches(eager.value()) == 0);
  CHECK_FALSE(count_graph_launches(NsysStats{}).has_value());

  const NsysStats merged = with_kernel_tables_of(graph.value(), node.value());
  REQUIRE(merged.kernels);
  CHECK(merged.kernels->size() == 25);
  CHECK(merged.range_kernels->size() == node->range_kernels->size());
  // CPU ranges and API calls stay those of the first capture: decode 13,791,565 ns, not node tracing's 40,523,135.
  std::int64_t decode = 0;
  for (const auto& row : *merged.ranges)
    if (row.range.name == "decode") decode += row.time.total_time_ns;
  CHECK(decode == 13791565);
  CHECK(merged.cuda_api->size() == graph->cuda_api->size());
}
