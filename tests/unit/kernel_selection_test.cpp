// select_top_kernels and the kernel-name helpers, on the real nsys tables of tests/data.
// Expected figures come from tests/tools/analysis_expected.py (Python csv module, run once; its
// output is pasted below where used).
#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <string>

#include "llmprof/kernel_selection.hpp"
#include "llmprof/ncu_metrics.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

namespace {

NsysStats load_stats(const std::string& prefix) {
  auto stats = load_nsys_stats(data_path("h100-nsight-2025.3/nsys/" + prefix));
  REQUIRE(stats.has_value());
  return std::move(stats).value();
}

// The ECMAScript regex behind a "regex:" value.
std::regex compile(const std::string& kernel_regex) {
  REQUIRE(kernel_regex.rfind("regex:", 0) == 0);
  return std::regex(kernel_regex.substr(6), std::regex::ECMAScript);
}

std::set<std::string> ncu_kernel_names(const std::string& file) {
  std::set<std::string> names;
  auto info = for_each_ncu_launch(data_path("h100-nsight-2025.3/ncu/" + file), {[](std::string_view) { return false; }},
                                  [&](const NcuKernelLaunch& launch) {
                                    names.insert(launch.kernel_name);
                                    return true;
                                  });
  REQUIRE(info.has_value());
  return names;
}

}  // namespace

TEST_CASE("decode top 5 from ns1: names and shares and coverage and launch count") {
  // analysis_expected.py: stage_kernel_time_ns=1435206 instances=345 distinct=10;
  // 322025/64 0.224375, 220067/64 0.153335, 215688/32 0.150284, 191652/32 0.133536,
  // 185188/32 0.129032; coverage=0.790562 launch_count(demangled)=193
  const auto stats = load_stats("ns1_st");
  TopKernelRequest request;
  request.stage = "decode";
  request.n = 5;
  auto selection = select_top_kernels(stats, request);
  REQUIRE(selection.has_value());
  CHECK(selection->source == "nvtx_kern_sum");
  CHECK(selection->domain.empty());
  CHECK(selection->stage_kernel_time_ns == 1435206);
  CHECK(selection->stage_kernel_instances == 345);
  CHECK(selection->stage_kernel_count == 10);
  REQUIRE(selection->kernels.size() == 5);
  CHECK(selection->kernels[0].name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT");
  CHECK(selection->kernels[0].total_time_ns == 322025);
  CHECK(selection->kernels[0].instances == 64);
  CHECK(selection->kernels[0].share == Approx(0.224375).margin(1e-6));
  CHECK(selection->kernels[1].name.rfind("void at::native::<unnamed>::vectorized_layer_norm_kernel", 0) == 0);
  CHECK(selection->kernels[1].total_time_ns == 220067);
  CHECK(selection->kernels[1].share == Approx(0.153335).margin(1e-6));
  CHECK(selection->kernels[2].name.rfind("void pytorch_flash::flash_fwd_kernel", 0) == 0);
  CHECK(selection->kernels[2].share == Approx(0.150284).margin(1e-6));
  CHECK(selection->kernels[3].name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT");
  CHECK(selection->kernels[3].share == Approx(0.133536).margin(1e-6));
  CHECK(selection->kernels[4].name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_bias_TNT");
  CHECK(selection->kernels[4].share == Approx(0.129032).margin(1e-6));
  CHECK(selection->coverage == Approx(0.790562).margin(1e-6));
  CHECK(selection->launch_count == 193);
  CHECK(selection->also_matched.empty());
}

TEST_CASE("the demangled regex matches exactly the selected names in both tools spellings") {
  const auto stats = load_stats("ns1_st");
  TopKernelRequest request;
  request.stage = "decode";
  request.n = 5;
  auto selection = select_top_kernels(stats, request);
  REQUIRE(selection.has_value());
  const auto regex = compile(selection->kernel_regex);
  std::set<std::string> selected;
  for (const auto& kernel : selection->kernels) selected.insert(kernel.name);

  // Against every kernel of the whole-run nsys table (17 names, with commas, lambdas, casts).
  REQUIRE(stats.kernels->size() == 17);
  for (const auto& row : *stats.kernels) {
    INFO(row.name);
    CHECK(std::regex_match(row.name, regex) == (selected.count(row.name) == 1));
  }
  // ncu (--rename-kernels 1) spells the same kernels without "native::" and "(int)" casts; the
  // regex must still let exactly the selected ones through.
  const auto ncu_names = ncu_kernel_names("nc1_raw.csv");
  REQUIRE(ncu_names.size() == 9);
  std::set<std::string> ncu_matched;
  for (const auto& name : ncu_names) {
    if (std::regex_match(name, regex)) ncu_matched.insert(name);
  }
  CHECK(ncu_matched == std::set<std::string>{
                           "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT",
                           "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT",
                           "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_bias_TNT",
                           "void at::<unnamed>::vectorized_layer_norm_kernel<c10::Half, float, 0>(int, T2, const T1 *, "
                           "const T1 *, const T1 *, T2 *, T2 *, T1 *)",
                           "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, 0, 0, "
                           "cutlass::half_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t>>, 0, 0, 0, 0, 0, 1, "
                           "0, 0>(pytorch_flash::Flash_fwd_params)"});
}

TEST_CASE("every kernel alone: its regex matches itself and nothing else in the table") {
  const auto stats = load_stats("ns1_st");
  for (const auto& target : *stats.kernels) {
    const auto regex = compile(kernel_name_regex({target.name}, KernelNameBase::demangled));
    for (const auto& row : *stats.kernels) {
      INFO(target.name << " vs " << row.name);
      CHECK(std::regex_match(row.name, regex) == (row.name == target.name));
    }
  }
}

TEST_CASE("function base: bare names and shared function names counted in the launch bound") {
  const auto stats = load_stats("ns1_st");
  TopKernelRequest request;
  request.stage = "decode";
  request.n = 10;
  request.name_base = KernelNameBase::function;
  auto selection = select_top_kernels(stats, request);
  REQUIRE(selection.has_value());
  REQUIRE(selection->kernels.size() == 10);
  CHECK(selection->coverage == Approx(1.0));
  CHECK(selection->kernels[1].match_name == "vectorized_layer_norm_kernel");
  // All launches but the rarest kernel's (8 launches of nvjet..._2x1 and indexSelectSmallIndex), plus one.
  CHECK(selection->launch_count == 345 - 8 + 1);
  const auto regex = compile(selection->kernel_regex);
  // The function names of the whole-run table: the decode ones match, the others do not.
  for (const auto& row : *stats.kernels) {
    const auto function = kernel_function_name(row.name);
    bool in_decode = false;
    for (const auto& kernel : selection->kernels) in_decode |= kernel_function_name(kernel.name) == function;
    INFO(function);
    CHECK(std::regex_match(function, regex) == in_decode);
  }

  // Two kernels sharing a function name inside one stage: selecting one lets the other through.
  NsysStats shared;
  shared.range_kernels = std::vector<NvtxKernelRow>{};
  auto add = [&](const std::string& name, std::int64_t time_ns, std::int64_t instances) {
    NvtxKernelRow row;
    row.range = NvtxRangeName{"", "decode"};
    row.kernel_name = name;
    row.kernel_instances = instances;
    row.time.total_time_ns = time_ns;
    shared.range_kernels->push_back(row);
  };
  add("void at::native::elementwise_kernel<(int)128, add>(int, T2)", 900, 30);
  add("void at::native::elementwise_kernel<(int)128, copy>(int, T2)", 500, 20);
  add("void at::native::reduce_kernel<(int)512>(T3)", 100, 5);
  request.n = 1;
  auto one = select_top_kernels(shared, request);
  REQUIRE(one.has_value());
  CHECK(one->kernel_regex == "regex:^(?:elementwise_kernel)$");
  CHECK(one->also_matched == std::vector<std::string>{"void at::native::elementwise_kernel<(int)128, copy>(int, T2)"});
  CHECK(one->launch_count == 30 + 20 - 30 + 1);
  request.name_base = KernelNameBase::demangled;
  auto demangled = select_top_kernels(shared, request);
  REQUIRE(demangled.has_value());
  CHECK(demangled->also_matched.empty());
  CHECK(demangled->launch_count == 1);
}

TEST_CASE("prefill top 3 from ns1") {
  // analysis_expected.py: stage_kernel_time_ns=305763 instances=38 distinct=8; 96130/8 0.314394,
  // 65185/4 0.213188, 51520/4 0.168497; coverage=0.696078 launch_count(demangled)=13
  const auto stats = load_stats("ns1_st");
  TopKernelRequest request;
  request.stage = "prefill";
  request.domain = "";
  request.n = 3;
  auto selection = select_top_kernels(stats, request);
  REQUIRE(selection.has_value());
  CHECK(selection->stage_kernel_time_ns == 305763);
  CHECK(selection->stage_kernel_instances == 38);
  CHECK(selection->kernels[0].share == Approx(0.314394).margin(1e-6));
  CHECK(selection->kernels[2].share == Approx(0.168497).margin(1e-6));
  CHECK(selection->coverage == Approx(0.696078).margin(1e-6));
  CHECK(selection->launch_count == 13);
}

TEST_CASE("the whole-run table stands for the stage only when the capture was gated on it") {
  const auto gated = load_stats("ns2_st");  // cuda_gpu_kern_sum + nvtx_sum of a capture gated on "decode"
  TopKernelRequest request;
  request.stage = "decode";
  request.n = 2;
  auto refused = select_top_kernels(gated, request);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("nvtx_kern_sum is not available") != std::string::npos);
  CHECK(refused.error().hint.find("capture_gated_on_stage") != std::string::npos);

  request.capture_gated_on_stage = true;
  auto selection = select_top_kernels(gated, request);
  REQUIRE(selection.has_value());
  CHECK(selection->source == "cuda_gpu_kern_sum (capture gated on the stage)");
  // analysis_expected.py: ns2_st_cuda_gpu_kern_sum.csv: kernels=10 total_time_ns=1425187 instances=345
  // first_ns=319241 second_ns=216675
  CHECK(selection->stage_kernel_count == 10);
  CHECK(selection->stage_kernel_time_ns == 1425187);
  CHECK(selection->stage_kernel_instances == 345);
  CHECK(selection->kernels[0].total_time_ns == 319241);
  CHECK(selection->coverage == Approx((319241.0 + 216675.0) / 1425187.0));

  request.stage = "prefill";  // not the gate: nvtx_sum records only :decode
  auto wrong_gate = select_top_kernels(gated, request);
  REQUIRE_FALSE(wrong_gate.has_value());
  CHECK(wrong_gate.error().message.find("nvtx_sum records only 'decode'") != std::string::npos);
}

TEST_CASE("an absent stage is an error naming the stages that exist") {
  const auto stats = load_stats("ns1_st");
  TopKernelRequest request;
  request.stage = "generate";
  auto selection = select_top_kernels(stats, request);
  REQUIRE_FALSE(selection.has_value());
  CHECK(selection.error().code == ErrorCode::not_found);
  CHECK(selection.error().message ==
        "stage 'generate' has no kernels in nvtx_kern_sum; stages with kernels: 'decode', 'prefill'");
  request.stage = "decode";
  request.domain = "llm";
  CHECK_FALSE(select_top_kernels(stats, request).has_value());
  request.domain.reset();
  request.n = 0;
  CHECK(select_top_kernels(stats, request).error().code == ErrorCode::invalid_argument);
}

TEST_CASE("kernel name forms") {
  CHECK(kernel_function_name("void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::Half, float, (bool)0>"
                             "(int, T2, const T1 *)") == "vectorized_layer_norm_kernel");
  CHECK(kernel_function_name("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT") ==
        "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT");
  CHECK(kernel_function_name("void (anonymous namespace)::softmax_warp_forward<float>(float *)") ==
        "softmax_warp_forward");
  CHECK(
      kernel_function_name("void cublasLt::splitKreduce_kernel<(int)32, (int)16>(cublasLt::cublasSplitKParams<T6>)") ==
      "splitKreduce_kernel");
  // The join key makes nsys's and ncu's spellings of one kernel equal (names from ns1 and nc1).
  CHECK(kernel_name_join_key("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<c10::Half, "
                             "at::native::ArgMaxOps<float>, unsigned int, long, (int)4, (int)4>>(T3)") ==
        kernel_name_join_key("void at::reduce_kernel<512, 1, at::ReduceOp<c10::Half, at::ArgMaxOps<float>, unsigned "
                             "int, long, 4, 4>>(T3)"));
  CHECK(kernel_name_join_key("void at::native::<unnamed>::indexSelectSmallIndex<c10::Half, long, unsigned int, (int)2, "
                             "(int)2, (int)-2>(at::cuda::detail::TensorInfo<T1, T3>, long)") ==
        kernel_name_join_key("void at::<unnamed>::indexSelectSmallIndex<c10::Half, long, unsigned int, 2, 2, "
                             "(int)-2>(cuda::TensorInfo<T1, T3>, long)"));
  CHECK(kernel_name_join_key("f<(int)3>(int)") != kernel_name_join_key("f<(int)4>(int)"));
}

TEST_CASE("escape_regex makes every special character literal") {
  const std::string nasty = R"(a(b)[c]{d}*+?.|^$\<e> f, g &)";
  const std::string escaped = escape_regex(nasty);
  CHECK(escaped == R"(a\(b\)\[c\]\{d\}\*\+\?\.\|\^\$\\[<]e[>] f, g &)");
  const std::regex regex("^" + escaped + "$", std::regex::ECMAScript);
  CHECK(std::regex_match(nasty, regex));
  CHECK_FALSE(std::regex_match("a(b)[c]{d}*+?X|^$\\<e> f, g &", regex));
}

TEST_CASE("the join key is a fixpoint even when removing a cast exposes a qualifier (fuzz finding)") {
  const std::string garbled = llmprof::testing::read_file(
      llmprof::testing::data_path("fuzz-regressions/kernel_name_join_key_not_idempotent.txt"));
  const std::string key = kernel_name_join_key(garbled);
  CHECK(kernel_name_join_key(key) == key);
  // "at(int)5::v1": the cast goes, then "at5::" is a qualifier like any other.
  CHECK(kernel_name_join_key("void at(int)5::v1") == kernel_name_join_key("void v1"));
}

TEST_CASE("mangled names: each matches itself literally, duplicates once, the anchors keep longer names out") {
  const auto regex = compile(mangled_name_regex({"_Z4gemmPf", "nvjet_sm90_tst_64x8", "_Z4gemmPf", "a.b$c"}));
  CHECK(std::regex_match("_Z4gemmPf", regex));
  CHECK(std::regex_match("nvjet_sm90_tst_64x8", regex));
  CHECK(std::regex_match("a.b$c", regex));
  CHECK_FALSE(std::regex_match("axb$c", regex));
  CHECK_FALSE(std::regex_match("_Z4gemmPfi", regex));
  CHECK_FALSE(std::regex_match("nvjet_sm90_tst_64x8_64x16", regex));
  CHECK(mangled_name_regex({"_Z1fv", "_Z1fv"}) == "regex:^(?:_Z1fv)$");
}

// Issue 34: run.stage = auto without a step kind, on a capture that is the workload's own window: every kernel of
// cuda_gpu_kern_sum, even though nvtx_sum names other ranges (here decode), which a gated-capture selection would
// refuse. Expected from the CSV itself (python3 csv: 17 kernels, 1,939,822 ns, the top one 322,025 ns).
// A capture without kernels (a fork-started worker nsys did not trace, H100): no kernel table, and the error says
// what the capture lacks and how to trace such a worker.
TEST_CASE("a capture with no kernel: the selection says no traced process ran GPU work, and how to trace a fork") {
  NsysStats stats;
  TopKernelRequest request;
  request.stage = "the captured window";
  request.whole_capture = true;
  auto selection = select_top_kernels(stats, request);
  REQUIRE_FALSE(selection.has_value());
  CHECK_THAT(selection.error().message, Catch::Contains("the capture holds no CUDA kernel"));
  CHECK_THAT(selection.error().hint, Catch::Contains("--trace-fork-before-exec=true"));
}

TEST_CASE("a whole-capture selection takes every kernel of the captured window") {
  const auto stats = load_stats("ns1_st");
  TopKernelRequest request;
  request.stage = "the captured window";
  request.whole_capture = true;
  request.n = 1;
  auto selection = select_top_kernels(stats, request);
  REQUIRE(selection.has_value());
  CHECK(selection->stage_kernel_time_ns == 1939822);
  REQUIRE(selection->kernels.size() == 1);
  CHECK(selection->kernels.front().name == "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT");
  CHECK(selection->source == "cuda_gpu_kern_sum (the whole captured window)");
  request.whole_capture = false;
  request.capture_gated_on_stage = true;
  CHECK_FALSE(select_top_kernels(stats, request).has_value());  // not a range of the capture
}
