// Library ranges (llmprof/library_ranges.hpp): the built-in rules over the names libraries really emit, the
// documented table, run.ignore_ranges, and what the timeline, step kinds and range discovery make of them on
// recorded exports: the H200 tensor-parallel decode, whose only library range is NCCL's `ncclAllReduce`, and the
// H100 serving window made into a workload without NVTX of its own (tests/support/library_range_exports.hpp).
// Expected counts and classes: tests/tools/library_ranges_expected.py (tests/data/oracles/library_ranges.txt).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "library_range_exports.hpp"
#include "llmprof/config.hpp"
#include "llmprof/library_ranges.hpp"
#include "llmprof/range_discovery.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/sync_steps.hpp"
#include "llmprof/timeline.hpp"
#include "oracle.hpp"
#include "rundir/inferred_steps.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTensorParallelRank0 = "cross-rank/h200x2/no-straggler/r0.sqlite";

std::string library_or_dash(const std::optional<std::string>& library) { return library.value_or("-"); }

// The oracle spells a name with its spaces as underscores.
std::string oracle_name(std::string name) {
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
}

// The step count the step-kinds oracle counted in the recorded H100 window (its `scheduler_step` ranges).
std::string recorded_window_steps() {
  std::ifstream in(data_path("serving/expected.tsv"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("serving_window1_h100\tsteps\tcount\t", 0) == 0) return line.substr(line.rfind('\t') + 1);
  }
  FAIL("tests/data/serving/expected.tsv has no serving_window1_h100 steps count");
  return {};
}

}  // namespace

TEST_CASE("the built-in rules name the library of the ranges libraries emit, and leave the workload's own alone") {
  const LibraryRanges rules;
  // In the default domain, by name alone: what the oracle classified with its own rules.
  for (const char* name : {"cub::DeviceScan::InclusiveScan", "thrust::reduce", "ncclAllReduce",
                           "aten::mm, seq = 12, op_id = 34", "autograd::engine::evaluate_function: MmBackward0",
                           "MmBackward0, seq = 5", "my_block, op_id = 3", "triton_poi_fused_add_0", "decode",
                           "decode_step", "scheduler_step", "cublasGemmEx"}) {
    INFO(name);
    CHECK(library_or_dash(rules.library_of(name, "")) ==
          oracle_text("library_ranges", "name=" + oracle_name(name) + " ", "default-domain-library"));
  }
  // By domain: CUDA 13's CCCL scan in its own domain, NCCL's calls, cuBLAS/cuDNN/TensorRT domains.
  CHECK(rules.library_of("cub::DeviceScan::InclusiveScan", "CCCL") == std::optional<std::string>("CCCL"));
  CHECK(rules.library_of("cuda::experimental::launch", "CCCL") == std::optional<std::string>("CCCL"));
  CHECK(rules.library_of("ncclAllReduce", "NCCL") == std::optional<std::string>("NCCL"));
  CHECK(rules.library_of("cublasLtMatmul", "cuBLASLt") == std::optional<std::string>("cuBLASLt"));
  CHECK(rules.library_of("cudnnConvolutionForward", "cuDNN") == std::optional<std::string>("cuDNN"));
  CHECK(rules.library_of("{ForeignNode[/model/layers.0/Add...]}", "TensorRT") == std::optional<std::string>("TensorRT"));
  // emit_nvtx's forms: the sequence number, op_id alone, shapes; torch.compile's regions.
  CHECK(rules.library_of("aten::addmm", "") == std::optional<std::string>("PyTorch"));
  CHECK(rules.library_of("aten::empty, op_id = 7, sizes = [[1, 2048]]", "") == std::optional<std::string>("PyTorch"));
  CHECK(rules.library_of("Torch-Compiled Region: 0/0", "") == std::optional<std::string>("PyTorch"));
  // The workload's own names, whatever domain they are in; a domain matches exactly.
  for (const char* name : {"decode", "prefill", "decode_batch", "generate", "forward", "sampling", "serve"}) {
    CHECK_FALSE(rules.library_of(name, "").has_value());
    CHECK_FALSE(rules.library_of(name, "llm").has_value());
  }
  CHECK_FALSE(rules.library_of("decode", "cccl").has_value());
  CHECK_FALSE(rules.library_of("seq = 1", "").has_value());  // the form is ", seq = N" after a name
}

TEST_CASE("name patterns: * is any run of characters, everything else matches itself") {
  CHECK(matches_name_pattern("*", ""));
  CHECK(matches_name_pattern("*", "anything at all"));
  CHECK(matches_name_pattern("cub::*", "cub::"));
  CHECK(matches_name_pattern("cub::*", "cub::DeviceScan::InclusiveScan"));
  CHECK_FALSE(matches_name_pattern("cub::*", "xcub::DeviceScan"));
  CHECK(matches_name_pattern("*, seq = *", "aten::mm, seq = 12, op_id = 3"));
  CHECK_FALSE(matches_name_pattern("*, seq = *", "aten::mm, op_id = 3"));
  CHECK(matches_name_pattern("a*b*c", "aXbYbZc"));
  CHECK_FALSE(matches_name_pattern("a*b*c", "aXbYbZ"));
  CHECK(matches_name_pattern("warmup", "warmup"));
  CHECK_FALSE(matches_name_pattern("warmup", "warmup2"));
  CHECK(matches_name_pattern("**x", "x"));
}

TEST_CASE("run.ignore_ranges: NAME or NAME@DOMAIN, checked when the configuration loads") {
  auto named = parse_ignore_range("warmup");
  REQUIRE(named.has_value());
  CHECK(named->name_pattern == "warmup");
  CHECK_FALSE(named->domain.has_value());
  auto domain = parse_ignore_range("*@mylib");
  REQUIRE(domain.has_value());
  CHECK(domain->domain == std::optional<std::string>("mylib"));
  auto any = parse_ignore_range("tokenize@*");
  REQUIRE(any.has_value());
  CHECK_FALSE(any->domain.has_value());
  for (const char* bad : {"", "@mylib", "name@", "a@b@c"}) {
    INFO(bad);
    auto parsed = parse_ignore_range(bad);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == ErrorCode::invalid_argument);
    CHECK(parsed.error().subject == "run.ignore_ranges");
    CHECK_THAT(parsed.error().hint, Catch::Contains("NAME@DOMAIN"));
  }

  auto ranges = LibraryRanges::with_ignored({"warmup", "helper_*", "*@mylib"});
  REQUIRE(ranges.has_value());
  CHECK(ranges->library_of("warmup", "") == std::optional<std::string>("run.ignore_ranges"));
  CHECK(ranges->library_of("helper_tokenize", "other") == std::optional<std::string>("run.ignore_ranges"));
  CHECK(ranges->library_of("anything", "mylib") == std::optional<std::string>("run.ignore_ranges"));
  CHECK_FALSE(ranges->library_of("anything", "").has_value());
  CHECK(ranges->library_of("cub::DeviceScan::InclusiveScan", "") == std::optional<std::string>("CCCL"));  // built-ins first

  // Through the configuration: a malformed entry is an error naming the key and where it was set.
  auto loaded = load_config({{}, {"run.ignore_ranges=[\"ok\", \"bad@\"]"}});
  REQUIRE_FALSE(loaded.has_value());
  CHECK_THAT(loaded.error().message, Catch::Contains("run.ignore_ranges entry \"bad@\""));
  CHECK_THAT(loaded.error().message, Catch::Contains("(set at"));
  auto good = load_config({{}, {"run.ignore_ranges=[\"warmup@*\"]"}});
  REQUIRE(good.has_value());
  CHECK(good->run.ignore_ranges == std::vector<std::string>{"warmup@*"});
  auto configured = library_ranges_of(good.value());
  REQUIRE(configured.has_value());
  CHECK(configured->rules().size() == builtin_library_range_rules().size() + 1);
}

TEST_CASE("docs/library-ranges.md lists every built-in rule, in order, and no other") {
  std::ifstream in(fs::path(LLMPROF_SOURCE_DIR) / "docs" / "library-ranges.md");
  REQUIRE(in.good());
  // | library | domain | name pattern | source |: the domain `CCCL` or "any", the pattern in backticks.
  const std::regex row(R"(^\| ([^|]+) \| (`[^`]+`|any) \| `([^`]+)` \|)");
  std::vector<LibraryRangeRule> documented;
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (!std::regex_search(line, match, row)) continue;
    LibraryRangeRule rule;
    rule.library = match[1];
    if (match[2] != "any") rule.domain = std::string(match[2]).substr(1, match[2].length() - 2);
    rule.name_pattern = match[3];
    documented.push_back(rule);
  }
  const auto& builtin = builtin_library_range_rules();
  REQUIRE(documented.size() == builtin.size());
  for (std::size_t i = 0; i < builtin.size(); ++i) {
    INFO("rule " << i << ": " << builtin[i].library << " " << builtin[i].name_pattern);
    CHECK(documented[i].library == builtin[i].library);
    CHECK(documented[i].domain == builtin[i].domain);
    CHECK(documented[i].name_pattern == builtin[i].name_pattern);
  }
}

TEST_CASE("the timeline of a real H200 tensor-parallel decode marks NCCL's ranges, and only those, as a library's") {
  auto timeline = analyze_timeline(data_path(kTensorParallelRank0));
  REQUIRE(timeline.has_value());
  REQUIRE(timeline->stages.size() == 8);  // the oracle's eight ranges
  for (const auto& stage : timeline->stages) {
    INFO(stage.qualified_name());
    const std::string line = "h200x2-r0 range=" + stage.qualified_name() + " ";
    CHECK(std::to_string(stage.instances.size()) == oracle_text("library_ranges", line, "count"));
    CHECK((stage.library.empty() ? std::string("-") : stage.library) == oracle_text("library_ranges", line, "library"));
  }
  CHECK(has_own_ranges(timeline.value()));
  const TimelineReport own = without_library_ranges(timeline.value());
  CHECK(own.stages.size() == 7);
  CHECK(own.find_stage("NCCL:ncclAllReduce") == nullptr);
}

TEST_CASE("discovery lists NCCL's range but never chooses it, even when every other range is ignored") {
  const fs::path sqlite = data_path(kTensorParallelRank0);
  auto listed = discover_capture(sqlite);
  REQUIRE(listed.has_value());
  CHECK(listed->own_ranges());
  CHECK(listed->stage != "ncclAllReduce");
  const auto nccl = std::find_if(listed->ranges.begin(), listed->ranges.end(),
                                 [](const DiscoveredRange& range) { return range.name == "ncclAllReduce"; });
  REQUIRE(nccl != listed->ranges.end());
  CHECK(nccl->library == "NCCL");
  CHECK_THAT(describe_discovery(listed.value()), Catch::Contains("NCCL:ncclAllReduce x512"));
  CHECK_THAT(describe_discovery(listed.value()), Catch::Contains("[library range: NCCL]"));

  // The workload's own ranges ignored: ncclAllReduce, with GPU time of its own, is all that is left, and it is not
  // chosen; there is no cudaProfilerStart in the export, so the whole run is the capture.
  auto ignored = LibraryRanges::with_ignored({"decode*", "attention", "mlp", "all_reduce", "lm_head", "sample"});
  REQUIRE(ignored.has_value());
  auto none = discover_capture(sqlite, ignored.value());
  REQUIRE(none.has_value());
  CHECK_FALSE(none->own_ranges());
  CHECK(none->stage.empty());
  CHECK(none->capture_range == "none");
  CHECK(none->profiler_start_calls == 0);
  CHECK_THAT(none->why, Catch::StartsWith("the workload emits no NVTX range of its own, only library ranges ("));
  // The first three of the eight, in the timeline's order, each with whose it is.
  CHECK_THAT(none->why, Catch::Contains("(`decode` x1 (run.ignore_ranges), `decode_step` x16 (run.ignore_ranges), "
                                        "`attention` x256 (run.ignore_ranges) and 5 more)"));
  CHECK(std::count_if(none->ranges.begin(), none->ranges.end(),
                      [](const DiscoveredRange& range) { return range.library == "NCCL"; }) == 1);
  CHECK_THAT(none->why, Catch::Contains("so the capture takes the whole run"));
  CHECK(none->set_line() == "--set nsys.capture_range=none --set run.stage=auto");
}

TEST_CASE("a window holding only CCCL's scans is a capture without NVTX of its own: its steps are inferred") {
  TempDir temp;
  const auto window = export_without_own_ranges(temp.path(), "cccl-window", {.cccl_scans = true});
  auto timeline = analyze_timeline(window);
  REQUIRE(timeline.has_value());
  REQUIRE(timeline->stages.size() == 1);
  const TimelineStage& scan = timeline->stages.front();
  CHECK(scan.qualified_name() == "CCCL:cub::DeviceScan::InclusiveScan");
  CHECK(scan.library == "CCCL");
  CHECK(std::to_string(scan.instances.size()) ==
        oracle_text("library_ranges", "serving-window1 ", "reduce_kernel_launches"));
  CHECK(scan.gpu_time_ns > 0);  // each holds its reduce_kernel: the range a headline once made the main stage
  CHECK_FALSE(has_own_ranges(timeline.value()));
  // Never a step kind, with or without the library filter the callers apply.
  CHECK_FALSE(analyze_step_kinds(timeline.value()).has_value());
  CHECK_THAT(no_step_kinds_reason(timeline.value()), Catch::Contains("CCCL:cub::DeviceScan::InclusiveScan x40 (CCCL's)"));
  // The steps come from the host's synchronisation: as many as the engine's recorded step ranges.
  auto inferred = infer_sync_steps(window);
  REQUIRE(inferred.has_value());
  REQUIRE(inferred->has_value());
  CHECK(std::to_string((*inferred)->steps) == recorded_window_steps());

  // Discovery over the whole run, where the workload opened its window: follow that window.
  const auto run = export_without_own_ranges(temp.path(), "cccl-run", {.cccl_scans = true, .profiler_window = true});
  auto discovery = discover_capture(run);
  REQUIRE(discovery.has_value());
  CHECK_FALSE(discovery->own_ranges());
  CHECK(discovery->stage.empty());
  CHECK(discovery->profiler_start_calls == 1);
  CHECK(discovery->capture_range == "cudaProfilerApi");
  CHECK_THAT(discovery->why, Catch::Contains("`CCCL:cub::DeviceScan::InclusiveScan` x40 (CCCL)"));
  CHECK_THAT(discovery->why, Catch::Contains("it calls cudaProfilerStart (1x), so the capture follows its window"));
  CHECK(discovery->set_line() == "--set nsys.capture_range=cudaProfilerApi --set run.stage=auto");
  const std::string text = describe_discovery(discovery.value());
  CHECK_THAT(text, Catch::Contains("CCCL:cub::DeviceScan::InclusiveScan x40 [library range: CCCL]"));
  CHECK_THAT(text, Catch::Contains("cudaProfilerStart/Stop calls: 1/1 (the workload opens its own profiling window)"));
}

TEST_CASE("an export without any NVTX range: discovery lists none and takes the window, else the whole run") {
  TempDir temp;
  const auto bare = export_without_own_ranges(temp.path(), "no-nvtx", {});
  auto timeline = analyze_timeline(bare);
  REQUIRE_FALSE(timeline.has_value());
  CHECK(timeline.error().code == ErrorCode::no_report);  // nothing for the timeline: what discovery handles
  auto whole = discover_capture(bare);
  REQUIRE(whole.has_value());
  CHECK(whole->ranges.empty());
  CHECK(whole->capture_range == "none");
  CHECK_THAT(whole->why, Catch::StartsWith("the workload emits no NVTX range; the capture recorded no cudaProfilerStart"));
  CHECK_THAT(describe_discovery(whole.value()), Catch::StartsWith("The workload emitted no NVTX range."));

  const auto windowed = export_without_own_ranges(temp.path(), "no-nvtx-window", {.profiler_window = true});
  auto window = discover_capture(windowed);
  REQUIRE(window.has_value());
  CHECK(window->capture_range == "cudaProfilerApi");
  REQUIRE(window->profiler_windows.size() == 1);
  CHECK(window->profiler_windows.front().first < window->profiler_windows.front().second);
}

// The Hugging Face generate() captures of the zoo (H100, CUDA 13): their only range is CCCL's scan. Each is a capture
// without NVTX of its own: no step kind, and discovery chooses no range (none of these exports recorded a
// cudaProfilerStart: the window captures began at it), where the headline once read "cub::DeviceScan::InclusiveScan:
// 52.5 us per step".
TEST_CASE("the zoo's generate() captures hold only CCCL's scan: listed as CCCL's, never a stage") {
  for (const std::string name : {"hf_dynamic_window", "hf_static_window", "hf_dynamic_whole"}) {
    INFO(name);
    const fs::path sqlite = data_path("zoo/" + name + ".sqlite");
    auto timeline = analyze_timeline(sqlite);
    REQUIRE(timeline.has_value());
    REQUIRE(timeline->stages.size() == 1);
    const TimelineStage& scan = timeline->stages.front();
    const std::string line = name + " range=" + scan.qualified_name() + " ";
    CHECK(std::to_string(scan.instances.size()) == oracle_text("library_ranges", line, "count"));
    CHECK(scan.library == oracle_text("library_ranges", line, "library"));
    CHECK_FALSE(has_own_ranges(timeline.value()));
    CHECK_FALSE(analyze_step_kinds(timeline.value()).has_value());
    auto discovery = discover_capture(sqlite);
    REQUIRE(discovery.has_value());
    CHECK_FALSE(discovery->own_ranges());
    CHECK(discovery->stage.empty());
    CHECK(std::to_string(discovery->profiler_start_calls) ==
          oracle_text("library_ranges", name + " calls ", "profiler_start"));
    CHECK(discovery->capture_range == "none");
    CHECK_THAT(discovery->why, Catch::Contains("only library ranges (`CCCL:cub::DeviceScan::InclusiveScan` x" +
                                               std::to_string(scan.instances.size()) + " (CCCL))"));
  }
}

// The headline of inferred steps withholds what it cannot stand behind: the two ways of finding the steps disagree,
// or the steps' GPU work exceeds their time (a step lasts until its GPU work ends, so that is a broken input).
TEST_CASE("the inferred steps' headline withholds its per-step figures where they cannot hold") {
  RunReportModel model;
  CHECK(detail::inferred_steps_headline(model).empty());
  ReportInferredSteps steps;
  steps.steps = 4;
  steps.kinds = {{"uniform-1", 3}, {"varying", 1}};
  steps.kind_p50_ns = {1000, 1000};
  steps.step_time_ns = 4000;
  steps.gpu_busy_ns = 2000;
  model.inferred_steps = steps;
  CHECK(detail::inferred_steps_headline(model) ==
        "the captured window: 4 steps inferred (uniform-1 x3, varying x1), 1.00 µs per step under the profiler, GPU busy "
        "50% of the steps' time (500 ns of GPU work per step).");
  model.inferred_steps->gpu_busy_ns = 5000;
  CHECK_THAT(detail::inferred_steps_headline(model),
             Catch::EndsWith("1.00 µs per step under the profiler (GPU busy withheld: the steps' GPU work, 5.00 µs, exceeds "
                             "their time)."));
  model.inferred_steps->figures_withheld = true;
  model.inferred_steps->inference_check = "the launch sequence repeats 3 times, the synchronisation cuts 4 steps";
  CHECK(detail::inferred_steps_headline(model) ==
        "the captured window: 4 steps inferred (uniform-1 x3, varying x1); no per-step figure: the two ways of finding "
        "them disagree (the launch sequence repeats 3 times, the synchronisation cuts 4 steps).");
}
