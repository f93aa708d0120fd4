// ncu CSV parsers on every ncu fixture: both layouts, unit normalisation, the NVTX column, and
// the GEMM known answer. Reference figures: python3 tests/tools/fixture_facts.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "llmprof/csv.hpp"
#include "llmprof/ncu_metrics.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

namespace {

std::filesystem::path ncu_file(const std::string& name) { return data_path("h100-nsight-2025.3/ncu/" + name); }

NcuReport parse_ok(const std::string& name, const NcuParseOptions& options = {}) {
  auto report = parse_ncu_csv(ncu_file(name), options);
  if (!report) FAIL(report.error().describe());
  return std::move(*report);
}

}  // namespace

TEST_CASE("unit normalisation to base units") {
  const std::vector<std::tuple<double, std::string, double, std::string>> cases{
      {8.832, "us", 8832, "ns"},
      {1.5, "ms", 1.5e6, "ns"},
      {2, "s", 2e9, "ns"},
      {3, "usecond", 3000, "ns"},
      {5.12, "Kbyte", 5120, "byte"},
      {9.8304, "Mbyte", 9830400, "byte"},
      {2, "Gbyte", 2e9, "byte"},
      {0.151054, "Tbyte", 151054000000, "byte"},
      {0.383333, "Gbyte/s", 383333000, "byte/second"},
      {0.015333, "Tbyte/s", 15333000000, "byte/second"},
      {7, "Gbyte/second", 7e9, "byte/second"},
      {15, "byte/s", 15, "byte/second"},
      {2.608696, "Ghz", 2608696000, "hz"},
      {93.297101, "Mhz", 93297101, "hz"},
      {4, "Khz", 4000, "hz"},
      {9.232, "Kbyte/block", 9232, "byte/block"},
      {1.28, "Kbyte/cycle", 1280, "byte/cycle"},
      {12.5, "%", 12.5, "%"},
      {3, "cycle", 3, "cycle"},
      {3, "inst/cycle", 3, "inst/cycle"},
      {4, "register/thread", 4, "register/thread"},
      {6, "", 6, ""},
      {6, "frobnicate", 6, "frobnicate"},  // unknown: kept as printed, not guessed
  };
  for (const auto& [value, unit, base_value, base_unit] : cases) {
    INFO(unit);
    const auto normalized = normalize_to_base_unit(value, unit);
    CHECK(normalized.value == Approx(base_value).epsilon(1e-12));
    CHECK(normalized.unit == base_unit);
  }
}

TEST_CASE("NVTX column into the range stack") {
  CHECK(parse_ncu_nvtx_stack(R"(1224  "<default domain>:decode:none:none:none:none:none:none" )") ==
        std::vector<NvtxRangeName>{{"", "decode"}});
  CHECK(parse_ncu_nvtx_stack(R"(7  "<default domain>:generate:none:none:none:none:none:none"  )"
                             R"("llm:prefill:none:none:ARGB:0xff00ff00:none:none" )") ==
        std::vector<NvtxRangeName>{{"", "generate"}, {"llm", "prefill"}});
  // A range name holding ':' (the attributes are the last six fields).
  CHECK(parse_ncu_nvtx_stack(R"(1  "<default domain>:module:layers.0:none:none:none:none:none:none" )") ==
        std::vector<NvtxRangeName>{{"", "module:layers.0"}});
  CHECK(parse_ncu_nvtx_stack("").empty());
  CHECK(parse_ncu_nvtx_stack(R"(5  "<default domain>:cut)").empty());
}

TEST_CASE("nc1_raw.csv: the raw page, 40 launches") {
  const auto report = parse_ok("nc1_raw.csv");
  CHECK(report.layout == NcuCsvLayout::raw);
  CHECK(report.preamble.empty());
  REQUIRE(report.launches.size() == 40);
  const auto& first = report.launches.front();
  CHECK(first.id == 0);
  CHECK(first.process_id == 1224);
  CHECK(first.process_name == "python3.12");
  CHECK(first.host_name == "127.0.0.1");
  CHECK(first.kernel_name.starts_with("void at::reduce_kernel<512, 1, at::ReduceOp<c10::Half, at::ArgMaxOps<float>, "));
  CHECK(first.block_size == "(128, 4, 1)");
  CHECK(first.grid_size == "(4, 1, 1)");
  CHECK(first.device == 0);
  CHECK(first.compute_capability == "9.0");
  CHECK(first.context == 1);
  CHECK(first.stream == 7);
  CHECK(first.nvtx_stack == std::vector<NvtxRangeName>{{"", "decode"}});
  CHECK(report.launches.back().id == 39);
  // 1,317 columns = 13 launch columns + 1,304 metrics; the 6 text-valued ones (one of them empty).
  CHECK(first.metrics.size() + first.text_metrics.size() == 1317 - 13 - 1);
  CHECK(first.text_metric("device__attribute_display_name") == "NVIDIA H100 80GB HBM3");
  CHECK(first.text_metric("launch__func_cache_config") == "CachePreferNone");
  CHECK_FALSE(first.metric("launch__kernel_name"));
  // "8.832000 us" -> ns; "0.015333 Tbyte/s" -> byte/second; "2.608696 Ghz" -> hz.
  CHECK(*first.metric("gpu__time_duration.sum") == Approx(8832));
  CHECK(first.metrics.at("gpu__time_duration.sum").unit == "ns");
  CHECK(*first.metric("dram__bytes.sum.per_second") == Approx(15333000000.0));
  CHECK(first.metrics.at("dram__bytes.sum.per_second").unit == "byte/second");
  CHECK(*first.metric("dram__cycles_elapsed.avg.per_second") == Approx(2608696000.0));
  double duration_sum_ns = 0;
  for (const auto& launch : report.launches) duration_sum_ns += *launch.metric("gpu__time_duration.sum");
  CHECK(duration_sum_ns == Approx(256288));
}

TEST_CASE("nc1_raw.csv and nc1_raw_base.csv agree after normalisation") {
  // The default file prints 6 decimals of the display unit, the base file 2 decimals of the base
  // unit, so the two agree to the printed precision, not to 1e-9: each value is compared within
  // half a unit of the last printed digit of both files.
  const auto scaled = parse_ok("nc1_raw.csv");
  const auto base = parse_ok("nc1_raw_base.csv");
  auto scaled_text = CsvReader::open(ncu_file("nc1_raw.csv"));
  REQUIRE(scaled_text.has_value());
  REQUIRE(scaled_text->read_header().has_value());
  REQUIRE(*scaled_text->next());
  const std::vector<std::string> units(scaled_text->fields().begin(), scaled_text->fields().end());
  REQUIRE(scaled.launches.size() == base.launches.size());
  std::size_t compared = 0, exact = 0;
  for (std::size_t i = 0; i < scaled.launches.size(); ++i) {
    REQUIRE(*scaled_text->next());
    const auto& a = scaled.launches[i];
    const auto& b = base.launches[i];
    REQUIRE(a.metrics.size() == b.metrics.size());
    CHECK(a.text_metrics == b.text_metrics);
    for (const auto& [name, value] : a.metrics) {
      const auto other = b.metrics.find(name);
      REQUIRE(other != b.metrics.end());
      INFO("launch " << i << " metric " << name);
      CHECK(value.unit == other->second.unit);
      const auto column = *scaled_text->column(name);
      const std::string_view printed = scaled_text->fields()[column];
      const auto dot = printed.find('.');
      const double decimals = dot == std::string_view::npos ? 0 : static_cast<double>(printed.size() - dot - 1);
      const double factor = normalize_to_base_unit(1, units[column]).value;
      const double tolerance = 0.5 * std::pow(10, -decimals) * factor + 0.005 + 1e-9 * std::abs(value.value);
      CHECK(std::abs(value.value - other->second.value) <= tolerance);
      exact += value.value == other->second.value;
      ++compared;
    }
  }
  CHECK(compared == 40 * scaled.launches.front().metrics.size());
  CHECK(exact > compared / 2);  // most values are integers, printed identically
}

TEST_CASE("gemm_raw.csv: the known-FLOP bf16 GEMM") {
  const auto report = parse_ok("gemm_raw.csv");
  REQUIRE(report.launches.size() == 1);
  const auto& gemm = report.launches.front();
  CHECK(gemm.kernel_name == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
  CHECK(gemm.nvtx_stack == std::vector<NvtxRangeName>{{"", "gemm"}});
  CHECK(*gemm.metric("sm__ops_path_tensor_src_bf16_dst_fp32.sum") == 137438953472.0);  // 2 * 4096^3
  CHECK(*gemm.metric("gpu__time_duration.sum") == Approx(208192).epsilon(1e-12));
  CHECK(gemm.metrics.at("gpu__time_duration.sum").unit == "ns");
}

TEST_CASE("keep_metric filters the raw page") {
  const auto report =
      parse_ok("gemm_raw.csv", {keep_metrics_with_prefixes({"gpu__time_duration.", "sm__ops_path_tensor_src_bf16"})});
  const auto& gemm = report.launches.front();
  // The header has 28 such columns (grep -cE '^"(gpu__time_duration\.|sm__ops_path_tensor_src_bf16)').
  CHECK(gemm.metrics.size() == 28);
  CHECK(gemm.text_metrics.empty());
  CHECK(*gemm.metric("sm__ops_path_tensor_src_bf16_dst_fp32.sum") == 137438953472.0);
  CHECK_FALSE(gemm.metric("dram__bytes.sum.per_second"));
}

TEST_CASE("nc1_details.csv: the long layout with rule rows") {
  const auto report = parse_ok("nc1_details.csv");
  CHECK(report.layout == NcuCsvLayout::long_form);
  REQUIRE(report.launches.size() == 40);
  const auto& first = report.launches.front();
  CHECK(first.nvtx_stack == std::vector<NvtxRangeName>{{"", "decode"}});
  // 20 metric names per launch + the 10 Speed Of Light aliases; rule rows are not metrics.
  CHECK(first.metrics.size() == 30);
  CHECK(*first.metric("Duration") == Approx(8830));  // "8.83 us"
  CHECK(*first.metric("gpu__time_duration.sum") == Approx(8830));
  CHECK(*first.metric("DRAM Frequency") == Approx(2.61e9));
  CHECK(*first.metric("Elapsed Cycles") > 0);
  // Same kernels in the same order as the raw page of the same report.
  const auto raw = parse_ok("nc1_raw.csv");
  for (std::size_t i = 0; i < 40; ++i) {
    CHECK(report.launches[i].kernel_name == raw.launches[i].kernel_name);
    CHECK(*report.launches[i].metric("gpu__time_duration.sum") ==
          Approx(*raw.launches[i].metric("gpu__time_duration.sum")).margin(5));  // 2 decimals of us
  }
}

TEST_CASE("gemm_details.csv") {
  const auto report = parse_ok("gemm_details.csv");
  REQUIRE(report.launches.size() == 1);
  CHECK(*report.launches[0].metric("gpu__time_duration.sum") == Approx(208190));  // "208.19 us"
  CHECK(report.launches[0].metric("SM Frequency") == Approx(1.35e9));
}

TEST_CASE("nc2_log.csv: ==PROF== preamble, long layout, metrics by identifier") {
  const auto report = parse_ok("nc2_log.csv");
  CHECK(report.layout == NcuCsvLayout::long_form);
  REQUIRE(report.preamble.size() == 2);
  CHECK(report.preamble[0] == "==PROF== Connected to process 2027 (/usr/bin/python3.12)");
  REQUIRE(report.launches.size() == 38);
  const auto& first = report.launches.front();
  CHECK(first.kernel_name ==
        "void at::vectorized_gather_kernel<16, long>(char *, char *, T2 *, int, long, long, long, long, bool)");
  CHECK(first.nvtx_stack == std::vector<NvtxRangeName>{{"", "prefill"}});
  // The identifier row ("4,640" ns) wins over the rounded "Duration" alias.
  CHECK(*first.metric("gpu__time_duration.sum") == 4640);
  CHECK(first.metric("sm__sass_thread_inst_executed_op_hfma_pred_on.sum") == 0.0);
  CHECK(first.metrics.at("SM Frequency").unit == "hz");
}

TEST_CASE("gemm_metrics_stdout.csv: ==PROF== lines and program output mixed in, no NVTX column") {
  const auto report = parse_ok("gemm_metrics_stdout.csv");
  CHECK(report.layout == NcuCsvLayout::long_form);
  CHECK(report.preamble.size() == 3);
  REQUIRE(report.launches.size() == 3);
  CHECK(report.launches[2].kernel_name == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
  CHECK(report.launches[2].nvtx_stack.empty());
  CHECK(*report.launches[2].metric("sm__ops_path_tensor_src_bf16_dst_fp32.sum") == 137438953472.0);
  CHECK(*report.launches[2].metric("gpu__time_duration.sum") == 209088);
  CHECK(*report.launches[0].metric("sm__inst_executed_pipe_tensor.sum") == 278784);
}

TEST_CASE("for_each_ncu_launch streams and can stop early") {
  std::vector<std::int64_t> ids;
  const auto info = for_each_ncu_launch(ncu_file("nc1_raw.csv"), {}, [&](const NcuKernelLaunch& launch) {
    ids.push_back(launch.id);
    return ids.size() < 3;
  });
  REQUIRE(info.has_value());
  CHECK(info->launch_count == 3);
  CHECK(ids == std::vector<std::int64_t>{0, 1, 2});
}

TEST_CASE("ncu bad input gives errors naming file and problem") {
  const std::string raw = llmprof::testing::read_file(ncu_file("gemm_raw.csv"));
  const auto parse_text = [](const std::string& text) {
    std::istringstream in(text);
    return parse_ncu_csv(in, "ncu.csv");
  };
  SECTION("truncated row") {
    const auto result = parse_text(raw.substr(0, raw.size() - 3000));
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("ncu.csv:3:") && Catch::Contains("truncated row"));
  }
  SECTION("cut inside a quoted field") {
    const auto details = llmprof::testing::read_file(ncu_file("gemm_details.csv"));
    const auto result = parse_text(details.substr(0, details.find("Ghz") + 1));
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("ncu.csv:2:") && Catch::Contains("unterminated"));
  }
  SECTION("missing Kernel Name column") {
    std::string text = raw;
    text.replace(text.find("\"Kernel Name\""), 13, "\"Kernel\"");
    const auto result = parse_text(text);
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("ncu.csv") && Catch::Contains("'Kernel Name'"));
  }
  SECTION("missing Metric Value column") {
    auto text = llmprof::testing::read_file(ncu_file("nc2_log.csv"));
    text.replace(text.find("\"Metric Value\""), 14, "\"Value\"");
    const auto result = parse_text(text);
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("'Metric Value'"));
  }
  SECTION("only ncu's error text") {
    const auto result = parse_text(
        "==PROF== Connected to process 2101 (/usr/bin/python3.12)\n"
        "==ERROR== Failed to prepare kernel for profiling\n"
        "==ERROR== Unknown Error on device 0.\n");
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message,
               Catch::Contains("ncu.csv holds no CSV table") && Catch::Contains("==ERROR== Failed to prepare kernel"));
  }
  SECTION("empty file") {
    const auto result = parse_text("");
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("ncu.csv is empty"));
  }
  SECTION("header and units but no launch") {
    const auto result = parse_text(raw.substr(0, raw.find("\n\"0\"") + 1));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == ErrorCode::no_report);
    CHECK_THAT(result.error().message, Catch::Contains("no kernel launch"));
  }
  SECTION("random bytes") {
    std::string bytes;
    std::mt19937 random(7);
    for (int i = 0; i < 50000; ++i) bytes += static_cast<char>(random() & 0xff);
    const auto result = parse_text(bytes);
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("ncu.csv"));
  }
  SECTION("a missing file") {
    const auto result = parse_ncu_csv(ncu_file("does_not_exist.csv"));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == ErrorCode::not_found);
  }
}
