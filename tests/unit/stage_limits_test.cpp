// Stage figures against the hardware limits, on recorded H100 runs: measured DRAM bytes per stage (ncu bytes
// per launch carried to all of the stage's launches), bandwidth, MBU, headroom, the MFU gap's reason, and
// rates that never divide GPU work by a CPU range that does not enclose it.
// Expected figures: tests/data/analysis/*_stage_bytes.tsv, printed by tests/tools/stage_bytes_expected.py
// (Python csv/json, independent of libllmprof) from the same recorded files; ctest re-runs the oracle and
// checks it still prints those files ("oracle: ..." tests in tests/cmake/stage_limits.cmake).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/report.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::example_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

namespace fs = std::filesystem;

// The analysis of TEMP/run, with stage1/metrics.json replaced when `metrics_override` is given.
AnalysisReport analyze_run_in(const TempDir& temp, const std::string& metrics_override = "") {
  if (!metrics_override.empty()) write_file(temp.path() / "run" / "stage1" / "metrics.json", metrics_override);
  auto report = analyze_run_directory(temp.path() / "run", {});
  if (!report) FAIL(report.error().describe());
  return std::move(report).value();
}

// tests/data/<run>, copied whole.
AnalysisReport analyze_copy(const std::string& run, const TempDir& temp,
                            const std::string& metrics_override = "") {
  fs::copy(data_path(run), temp.path() / "run", fs::copy_options::recursive);
  return analyze_run_in(temp, metrics_override);
}

// The recorded H100 CUDA-graph decode, examples/graphs-h100/cpp-graphs-auto (`llmprof-decode --cuda-graphs`,
// 1b preset, 512 + 128 tokens, bf16, default settings): only its analysis inputs are copied (the first nsys
// capture's tables, `--cuda-graph-trace=graph`, nsys/; the node-traced second capture's, nsys/node/; ncu's raw
// CSV; the bare run's metrics; run.json and config.toml), not the analysis/, selection.json or follow-up ncu
// CSVs the run also wrote, so the figures are those of these files alone, the files
// tests/tools/stage_bytes_expected.py reads. The SQLite export was not kept: the analysis has no timeline.
AnalysisReport analyze_graphs_auto(const TempDir& temp) {
  const fs::path recorded = example_path("graphs-h100/cpp-graphs-auto");
  std::vector<fs::path> inputs = {"config.toml", "run.json", "stage1/metrics.json", "ncu/raw.csv", "nsys/cmd.txt",
                                  "nsys/node/cmd.txt"};
  for (const char* capture : {"nsys", "nsys/node"}) {
    for (const char* table : {"cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "nvtx_gpu_proj_sum",
                              "nvtx_kern_sum", "nvtx_sum"}) {
      inputs.push_back(fs::path(capture) / ("summary_" + std::string(table) + ".csv"));
    }
  }
  for (const auto& relative : inputs) {
    INFO("examples/graphs-h100/cpp-graphs-auto/" << relative.string());
    REQUIRE(fs::is_regular_file(recorded / relative));
    fs::create_directories((temp.path() / "run" / relative).parent_path());
    fs::copy_file(recorded / relative, temp.path() / "run" / relative);
  }
  return analyze_run_in(temp);
}

const StageAnalysis& stage_named(const AnalysisReport& report, const std::string& name) {
  auto it = std::find_if(report.stages.begin(), report.stages.end(), [&](const auto& s) { return s.name == name; });
  if (it == report.stages.end()) FAIL("no stage " << name);
  return *it;
}

struct ExpectedStage {
  double dram_bytes = 0, coverage = 0, steps = 0, per_step = 0, while_busy = 0;
  std::optional<double> per_s, mbu;  // nullopt: the oracle withholds them too
};

struct ExpectedRun {
  double peak = 0;
  double decode_flop_per_step = 0, model_flop_per_step = 0;
  std::map<std::string, ExpectedStage> stages;
};

ExpectedRun read_expected(const std::string& file) {
  std::istringstream in(read_file(data_path("analysis/" + file)));
  ExpectedRun expected;
  std::string line;
  auto optional_number = [](const std::string& text) -> std::optional<double> {
    if (text == "withheld") return std::nullopt;
    return std::stod(text);
  };
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() == 2 && cells[0] == "peak_dram_bytes_per_s") expected.peak = std::stod(cells[1]);
    if (cells.size() == 4 && cells[0] == "decode_flop_per_step") {
      expected.decode_flop_per_step = std::stod(cells[1]);
      expected.model_flop_per_step = std::stod(cells[3]);
    }
    if (cells.size() != 8 || cells[0] == "stage") continue;
    expected.stages[cells[0]] = {std::stod(cells[1]), std::stod(cells[2]), std::stod(cells[3]),
                                 std::stod(cells[4]), std::stod(cells[6]), optional_number(cells[5]),
                                 optional_number(cells[7])};
  }
  REQUIRE(expected.peak > 0);
  REQUIRE_FALSE(expected.stages.empty());
  return expected;
}

void check_against_oracle(const AnalysisReport& report, const ExpectedRun& expected) {
  CHECK(report.device.peak_dram_bytes_per_s.value_or(0) == Approx(expected.peak).epsilon(1e-8));
  const auto& decode = stage_named(report, "decode");
  REQUIRE(decode.flop);
  CHECK(*decode.flop / *decode.steps == Approx(expected.decode_flop_per_step).epsilon(1e-8));
  for (const auto& [name, figures] : expected.stages) {
    INFO("stage " << name);
    const auto& stage = stage_named(report, name);
    REQUIRE(stage.dram_bytes);
    CHECK(*stage.dram_bytes == Approx(figures.dram_bytes).epsilon(1e-8));
    CHECK(stage.dram_coverage == Approx(figures.coverage).epsilon(1e-8));
    REQUIRE(stage.steps);
    CHECK(*stage.steps == figures.steps);
    REQUIRE(stage.dram_bytes_per_step);
    CHECK(*stage.dram_bytes_per_step == Approx(figures.per_step).epsilon(1e-8));
    REQUIRE(stage.dram_bytes_per_s_while_busy);
    CHECK(*stage.dram_bytes_per_s_while_busy == Approx(figures.while_busy).epsilon(1e-8));
    CHECK(stage.dram_bytes_per_s.has_value() == figures.per_s.has_value());
    if (figures.per_s && stage.dram_bytes_per_s) CHECK(*stage.dram_bytes_per_s == Approx(*figures.per_s).epsilon(1e-8));
    CHECK(stage.mbu.has_value() == figures.mbu.has_value());
    if (figures.mbu && stage.mbu) CHECK(*stage.mbu == Approx(*figures.mbu).epsilon(1e-8));
  }
}

}  // namespace

TEST_CASE("h100-1b-decode: DRAM bytes, bandwidth and MBU per stage match the Python oracle") {
  TempDir temp;
  const auto report = analyze_copy("h100-1b-decode", temp);
  check_against_oracle(report, read_expected("h100-1b-decode_stage_bytes.tsv"));
  // stage_bytes_expected.py: decode 2.069280522e+09 bytes per step over 128 steps, MBU 2.84% (eager, host-bound).
  const auto& decode = stage_named(report, "decode");
  CHECK(*decode.dram_bytes_per_step == Approx(2.069280522e9).epsilon(1e-8));
  CHECK(decode.steps_source.find("new_tokens") != std::string::npos);
  CHECK(decode.rate_time_source == "wall time (nsys nvtx_sum)");
}

TEST_CASE("h100-1b-decode: the model's bytes per step give model MBU and the comparison in words") {
  TempDir temp;
  // The recorded metrics with the bytes the bundled workload states (model_config.hpp's
  // mean_decode_bytes_per_step for the 1b preset, 512 + 128 tokens, bf16): 2 x (1104218112 - 32000 x 2048 + 2048)
  // weight bytes + the mean K and V bytes read per step.
  std::string metrics = read_file(data_path("h100-1b-decode/stage1/metrics.json"));
  const double weights = 2.0 * (1104218112.0 - 32000.0 * 2048.0 + 2048.0);
  double kv = 0;
  for (int step = 0; step < 128; ++step) kv += 2.0 * 16 * 512 * (512 + step + 1);
  const double model_bytes = weights + 2.0 * kv / 128;
  metrics.insert(metrics.rfind('}'), ", \"model_bytes_per_step\": " + std::to_string(model_bytes) + "\n");
  const auto report = analyze_copy("h100-1b-decode", temp, metrics);
  const auto& decode = stage_named(report, "decode");
  REQUIRE(decode.model_bytes_per_step);
  CHECK(*decode.model_bytes_per_step == Approx(model_bytes));
  REQUIRE(report.workload);
  REQUIRE(decode.mbu_workload);
  CHECK(*decode.mbu_workload == Approx(model_bytes * 128 / report.workload->decode_s /
                                       *report.device.peak_dram_bytes_per_s));
  // 2.07 GB measured against 2.15 GB: within the model's bytes.
  INFO(decode.bytes_comparison);
  CHECK(decode.bytes_comparison.rfind("measured 2.07 GB per step against the 2.", 0) == 0);
  CHECK(decode.bytes_comparison.find("the model must read (weights + KV cache): 9") != std::string::npos);
}

TEST_CASE("h100-1b-decode: MFU (profiled) 4.9x MFU (workload) says why: 9x the model's FLOP, and the times") {
  TempDir temp;
  const auto report = analyze_copy("h100-1b-decode", temp);
  const auto& decode = stage_named(report, "decode");
  REQUIRE(decode.mfu);
  REQUIRE(decode.mfu_workload);
  REQUIRE(*decode.mfu / *decode.mfu_workload > 2);
  INFO(decode.mfu_gap_reason);
  // stage_bytes_expected.py: decode_flop_per_step 1.976372517e+10, model 2.152792064e+09 (9.18x); the profiled
  // decode.s 2.77 s wall over 128 steps against the bare decode_s 1.487526971 s over 128.
  const auto expected = read_expected("h100-1b-decode_stage_bytes.tsv");
  CHECK(expected.decode_flop_per_step / expected.model_flop_per_step == Approx(9.18).epsilon(0.001));
  CHECK(decode.mfu_gap_reason.find("ncu counted 19.8 GFLOP per step against the model's 2.15 GFLOP (9.2x; at batch 1") !=
        std::string::npos);
  CHECK(decode.mfu_gap_reason.find("against 11.6 ms in the bare run") != std::string::npos);
  CHECK(decode.mfu_gap_reason.find("in the bare run") != std::string::npos);
  CHECK(decode.verdict.find(decode.mfu_gap_reason) != std::string::npos);
}

TEST_CASE("synthetic workloads: a 9x FLOP excess is explained, equal FLOP need no reason") {
  // The recorded run's ncu FLOP per step (stage_bytes_expected.py: 1.976372517e+10) against a workload whose
  // bare decode took as long as the profiled one (2774688310 ns, nvtx_sum) and whose model FLOP per step is
  // 1/9 of it, then all of it.
  const auto expected = read_expected("h100-1b-decode_stage_bytes.tsv");
  for (const double excess : {9.0, 1.0}) {
    INFO("FLOP excess " << excess);
    std::string metrics = read_file(data_path("h100-1b-decode/stage1/metrics.json"));
    const auto replace = [&](const std::string& key, const std::string& value) {
      const auto start = metrics.find("\"" + key + "\":");
      REQUIRE(start != std::string::npos);
      const auto end = metrics.find_first_of(",\n}", start + key.size() + 3);
      metrics.replace(start, end - start, "\"" + key + "\": " + value);
    };
    char flop[64];
    std::snprintf(flop, sizeof flop, "%.9e", expected.decode_flop_per_step / excess);
    replace("flop_per_token", flop);
    replace("decode_s", "2.774688310");
    TempDir temp;
    const auto report = analyze_copy("h100-1b-decode", temp, metrics);
    const auto& decode = stage_named(report, "decode");
    REQUIRE(decode.mfu);
    REQUIRE(decode.mfu_workload);
    CHECK(*decode.mfu / *decode.mfu_workload == Approx(excess).epsilon(1e-6));
    if (excess > 2) {
      INFO(decode.mfu_gap_reason);
      CHECK(decode.mfu_gap_reason.find("is 9x MFU (workload)") != std::string::npos);
      CHECK(decode.mfu_gap_reason.find("against the model's 2.20 GFLOP (9x; at batch 1 the tensor-core kernels") !=
            std::string::npos);
      CHECK(decode.mfu_gap_reason.find("a step took 21.7 ms profiled against 21.7 ms in the bare run") !=
            std::string::npos);
    } else {
      CHECK(decode.mfu_gap_reason.empty());
    }
  }
}

TEST_CASE("recorded CUDA-graph decode: no stage's FLOP/s over its time exceeds its kernels' FLOP/s") {
  // examples/graphs-h100/cpp-graphs-auto's inputs: `decode_step` ranges enclose only the graph launch calls
  // (19.4 ms of CPU time) while their kernels ran 283 ms; dividing the FLOP by the CPU time claimed 129 TFLOP/s
  // and MFU 15% for kernels that reach 8.8 TFLOP/s while they run.
  TempDir temp;
  const auto report = analyze_graphs_auto(temp);
  for (const auto& stage : report.stages) {
    INFO("stage " << stage.qualified_name());
    if (stage.achieved_flop_per_s && stage.flop_per_s_while_busy) {
      CHECK(*stage.achieved_flop_per_s <= *stage.flop_per_s_while_busy);
    }
    if (stage.dram_bytes_per_s && stage.dram_bytes_per_s_while_busy) {
      CHECK(*stage.dram_bytes_per_s <= *stage.dram_bytes_per_s_while_busy);
    }
    if (stage.wall_ns && stage.kernel_time_ns > *stage.wall_ns && !report.timeline) {
      CHECK_FALSE(stage.achieved_flop_per_s);
      CHECK_FALSE(stage.mfu);
      CHECK_FALSE(stage.mbu);
    }
  }
  const auto& step = stage_named(report, "decode_step");
  CHECK(step.rate_time_note.find("does not enclose its 283 ms of kernel time") != std::string::npos);
  CHECK(std::any_of(report.skipped.begin(), report.skipped.end(), [](const std::string& line) {
    return line.find("stage 'decode_step': its CPU range time (19.4 ms)") != std::string::npos;
  }));
  check_against_oracle(report, read_expected("graphs-h100-cpp-graphs-auto_stage_bytes.tsv"));
}

namespace {

// The run's analysis written to its analysis/ directory and read back the way `deep-profile report` does.
RunReportModel report_model_of(const AnalysisReport& report, const TempDir& temp) {
  const auto written = write_analysis(report, temp.path() / "run" / "analysis");
  if (!written) FAIL(written.error().describe());
  auto model = load_run_report(temp.path() / "run");
  if (!model) FAIL(model.error().describe());
  return std::move(model).value();
}

}  // namespace

TEST_CASE("h100-1b-decode: the Stages table shows bytes per step, bandwidth, MBU and bytes coverage from the oracle") {
  TempDir temp;
  std::string metrics = read_file(data_path("h100-1b-decode/stage1/metrics.json"));
  metrics.insert(metrics.rfind('}'), ", \"model_bytes_per_step\": 2.1e9\n");
  const auto report = analyze_copy("h100-1b-decode", temp, metrics);
  const auto model = report_model_of(report, temp);
  const auto expected = read_expected("h100-1b-decode_stage_bytes.tsv");
  const std::string markdown = render_markdown(model);
  const std::string html = render_html(model);
  for (const auto& [name, figures] : expected.stages) {
    INFO("stage " << name);
    const auto& stage = stage_named(report, name);
    REQUIRE(figures.per_s);
    REQUIRE(figures.mbu);
    // The cells print the oracle's figures (3 significant digits; percentages as the rest of the table).
    const std::string cells = " | " + detail::format_si(figures.per_step, "B") + " | " +
                              detail::format_si(*figures.per_s, "B/s") + " | " +
                              detail::format_fraction_percent(*figures.mbu) + " | " +
                              (stage.mbu_workload ? detail::format_fraction_percent(*stage.mbu_workload)
                                                  : std::string(detail::kNotComputed)) +
                              " | " + detail::format_fraction_percent(figures.coverage) + " |\n";
    INFO(cells);
    CHECK(markdown.find(cells) != std::string::npos);
    CHECK(html.find(">" + detail::format_si(figures.per_step, "B") + "</td>") != std::string::npos);
  }
  // Hand-checked against the TSV: decode 2.069280522e9 B per step, 95.5 GB/s, MBU 2.8%, bytes for 94%.
  CHECK(markdown.find("| 2.07 GB | 95.5 GB/s | 2.8% | ") != std::string::npos);
  // Model MBU: 2.1e9 B x 128 steps / the bare decode_s / the peak.
  const auto& decode = stage_named(report, "decode");
  REQUIRE(decode.mbu_workload);
  CHECK(*decode.mbu_workload == Approx(2.1e9 * 128 / report.workload->decode_s / expected.peak).epsilon(1e-8));
  CHECK(markdown.find("MBU (model) = the bytes the workload says a step must move") != std::string::npos);
  CHECK(markdown.find("| DRAM per step | DRAM bandwidth | MBU (measured) | MBU (model) | Bytes measured |") !=
        std::string::npos);
  CHECK(html.find("<th class=\"num\">MBU (measured)</th>") != std::string::npos);
  // The verdict card of each memory-bound leaf stage shows its MBU and headroom.
  std::size_t memory_bound = 0;
  for (const auto& stage : model.stages) {
    if (stage.kernel_bound != "memory" || !stage.mbu || !stage.share_of_limit) continue;
    ++memory_bound;
    INFO("memory-bound stage " << stage.name);
    CHECK(html.find("<div class=\"tile-sub\">MBU " + detail::format_fraction_percent(stage.mbu) + " measured") !=
          std::string::npos);
    CHECK(html.find("<div class=\"tile-sub\">" + stage.step_noun() + " " + detail::format_duration_ns(*stage.step_ns) +
                    ", " + detail::format_fraction_percent(stage.share_of_limit) + " of the DRAM limit (" +
                    detail::format_duration_ns(*stage.limit_step_ns) + ")</div>") != std::string::npos);
  }
  CHECK(memory_bound > 0);
  // The headroom sentence: the limit, the two step times, the share of the limit, then (last, once) how much of
  // the kernel time had measured bytes.
  for (const auto& stage : report.stages) {
    if (stage.headroom.empty() || !stage.limit_step_ns || stage.kernel_bound != std::optional<std::string>("memory")) continue;
    INFO(stage.name << ": " << stage.headroom);
    const std::string share = detail::format_fraction_percent(stage.share_of_limit);
    CHECK(stage.headroom ==
          "at 100% of peak DRAM bandwidth (" + detail::format_si(report.device.peak_dram_bytes_per_s, "B/s") + ") a " +
              stage.step_noun() + " would take " + detail::format_duration_ns(*stage.limit_step_ns) + "; it takes " +
              detail::format_duration_ns(*stage.step_ns) + " (" + share + " of the limit" +
              (stage.dram_coverage < 0.999
                   ? "; bytes measured for " + detail::format_fraction_percent(stage.dram_coverage) +
                         " of its kernel time"
                   : std::string()) +
              ")");
  }
}

TEST_CASE("recorded CUDA-graph decode: the Stages table says why decode_step's bandwidth and MBU are blank") {
  TempDir temp;
  const auto report = analyze_graphs_auto(temp);
  const auto model = report_model_of(report, temp);
  const std::string markdown = render_markdown(model);
  const auto& step = stage_named(report, "decode_step");
  REQUIRE(step.dram_bytes_per_step);
  REQUIRE_FALSE(step.mbu);
  // Its bytes per step stand (the oracle's), its rate does not: the cell is blank and the caption says why.
  const auto expected = read_expected("graphs-h100-cpp-graphs-auto_stage_bytes.tsv");
  CHECK(markdown.find(" | " + detail::format_si(expected.stages.at("decode_step").per_step, "B") + " | — | — | ") !=
        std::string::npos);
  CHECK(markdown.find("decode_step (in decode): bandwidth and MBU withheld: its CPU range time (19.4 ms) does not "
                      "enclose its 283 ms of kernel time") != std::string::npos);
  CHECK(markdown.find("not in this report.json") == std::string::npos);
}

namespace {

NvtxKernelRow kernel_in(const std::string& stage, const std::string& kernel, std::int64_t total_ns,
                        std::int64_t launches) {
  NvtxKernelRow row;
  row.range = NvtxRangeName{"", stage};
  row.style = "PushPop";
  row.kernel_instances = launches;
  row.time.total_time_ns = total_ns;
  row.time.count = launches;
  row.kernel_name = kernel;
  return row;
}

LaunchRoofline profiled(const std::string& kernel, const std::vector<std::string>& stack, double dram_bytes) {
  LaunchRoofline launch;
  launch.kernel_name = kernel;
  for (const auto& range : stack) launch.nvtx_stack.push_back({"", range});
  launch.duration_ns = 100;
  launch.dram_bytes = dram_bytes;
  return launch;
}

}  // namespace

TEST_CASE("synthetic run: a kernel's profiled bytes per launch in a stage are carried to all its launches there") {
  // By hand: decode's gemm has 10 launches (nsys) and two profiled ones in decode (1 MB and 3 MB: 2 MB a launch),
  // so 20 MB; its one profiled launch in prefill (9 MB) is prefill's, not decode's. norm was profiled once
  // without an NVTX stack (0.5 MB): that run-wide mean covers its 4 decode launches, 2 MB. copy has no ncu
  // launch: uncovered. decode = 22 MB over 1400 of its 2000 ns of kernel time; prefill = 3 x 9 MB = 27 MB, all of it.
  AnalysisInputs inputs;
  NsysStats stats;
  stats.range_kernels = std::vector<NvtxKernelRow>{
      kernel_in("decode", "gemm", 1000, 10), kernel_in("decode", "norm", 400, 4), kernel_in("decode", "copy", 600, 5),
      kernel_in("prefill", "gemm", 300, 3)};
  inputs.nsys = stats;
  inputs.ncu_launches = std::vector<LaunchRoofline>{
      profiled("gemm", {"decode"}, 1e6), profiled("gemm", {"decode"}, 3e6), profiled("gemm", {"prefill"}, 9e6),
      profiled("norm", {}, 5e5)};
  auto report = analyze(inputs, {});
  if (!report) FAIL(report.error().describe());
  const auto& decode = stage_named(*report, "decode");
  REQUIRE(decode.dram_bytes);
  CHECK(*decode.dram_bytes == Approx(2.2e7).epsilon(1e-12));
  CHECK(decode.dram_coverage == Approx(0.7).epsilon(1e-12));
  const auto& prefill = stage_named(*report, "prefill");
  REQUIRE(prefill.dram_bytes);
  CHECK(*prefill.dram_bytes == Approx(2.7e7).epsilon(1e-12));
  CHECK(prefill.dram_coverage == Approx(1.0).epsilon(1e-12));
  // A kernel with stacks elsewhere but none in this stage is not carried from the run-wide mean.
  inputs.ncu_launches->erase(inputs.ncu_launches->begin(), inputs.ncu_launches->begin() + 2);
  report = analyze(inputs, {});
  if (!report) FAIL(report.error().describe());
  const auto& without = stage_named(*report, "decode");
  REQUIRE(without.dram_bytes);
  CHECK(*without.dram_bytes == Approx(2e6).epsilon(1e-12));  // norm only
  CHECK(without.dram_coverage == Approx(0.2).epsilon(1e-12));
}

namespace {

PlannedConfig plan_group(const std::string& grid, const std::string& block, std::int64_t launches, std::int64_t time_ns,
                         const std::string& extrapolated_from = "") {
  PlannedConfig config;
  config.kernel = "gemm";
  config.grid = grid;
  config.block = block;
  config.config = "grid " + grid + " block " + block + " smem 0";
  config.stage_launches = launches;
  config.stage_time_ns = time_ns;
  config.extrapolated_from = extrapolated_from;
  return config;
}

LaunchRoofline profiled_in(const std::string& grid, const std::string& block, const std::vector<std::string>& stack,
                           double dram_bytes) {
  auto launch = profiled("gemm", stack, dram_bytes);
  launch.grid_size = grid;
  launch.block_size = block;
  return launch;
}

}  // namespace

TEST_CASE("synthetic run: with the ncu plan's groups, each configuration's bytes count for its own launches") {
  // By hand. gemm runs 132 times in decode (2000 ns): group A (grid (2, 64, 1), block 384) 128 launches / 1600 ns,
  // profiled at 1 MB; group B (grid bucket (4, 64, 1), block 128) 2 launches / 200 ns, profiled at 9 MB (its row's
  // grid (3, 64, 1) falls in that bucket), inside mlp; group C (block 256) 2 launches / 200 ns, not profiled, carried
  // from B by the plan. Per configuration: 128 x 1 MB + 2 x 9 MB + 2 x 9 MB = 164 MB; the kernel's mean would give
  // (1 + 9) / 2 MB x 132 = 660 MB. norm (no plan group) keeps its mean: 10 x 0.5 MB = 5 MB. decode: 169 MB over all
  // of its 2500 ns, 200 ns of it (C) carried from another configuration: 8%.
  AnalysisInputs inputs;
  NsysStats stats;
  stats.range_kernels = std::vector<NvtxKernelRow>{
      kernel_in("decode", "gemm", 2000, 132), kernel_in("decode", "norm", 500, 10),
      kernel_in("decode_step", "gemm", 2000, 132), kernel_in("decode_step", "norm", 500, 10),
      kernel_in("mlp", "gemm", 200, 2)};
  inputs.nsys = stats;
  inputs.ncu_launches = std::vector<LaunchRoofline>{
      profiled_in("(2, 64, 1)", "(384, 1, 1)", {"decode", "decode_step"}, 1e6),
      profiled_in("(3, 64, 1)", "(128, 1, 1)", {"decode", "decode_step", "mlp"}, 9e6),
      profiled("norm", {"decode", "decode_step"}, 5e5)};
  const auto group_b = plan_group("(4, 64, 1)", "(128, 1, 1)", 2, 200);
  inputs.ncu_plan_groups = NcuPlanGroups{
      "decode",
      {plan_group("(2, 64, 1)", "(384, 1, 1)", 128, 1600), group_b,
       plan_group("(2, 64, 1)", "(256, 1, 1)", 2, 200, group_b.config)}};
  auto report = analyze(inputs, {});
  if (!report) FAIL(report.error().describe());
  // decode_step launched exactly decode's launches of gemm (same count, same profiled launches): the same figures.
  for (const std::string name : {"decode", "decode_step"}) {
    INFO(name);
    const auto& stage = stage_named(*report, name);
    REQUIRE(stage.dram_bytes);
    CHECK(*stage.dram_bytes == Approx(1.69e8).epsilon(1e-12));
    CHECK(stage.dram_coverage == Approx(1.0).epsilon(1e-12));
    CHECK(stage.dram_coverage_extrapolated == Approx(0.08).epsilon(1e-12));
  }
  // mlp has 2 of gemm's launches, not the plan stage's 132: its own profiled launch's bytes, 2 x 9 MB.
  const auto& mlp = stage_named(*report, "mlp");
  REQUIRE(mlp.dram_bytes);
  CHECK(*mlp.dram_bytes == Approx(1.8e7).epsilon(1e-12));
  CHECK(mlp.dram_coverage_extrapolated == 0);
  // The extrapolated share reaches report.json and the Stages table.
  const std::string json = analysis_report_json(*report);
  CHECK(json.find("\"dram_coverage_extrapolated\": 8E-2") != std::string::npos);
  // Without the plan's groups: the kernel's mean over its two profiled launches, 5 MB x 132 = 660 MB (+ norm).
  inputs.ncu_plan_groups.reset();
  report = analyze(inputs, {});
  if (!report) FAIL(report.error().describe());
  CHECK(*stage_named(*report, "decode").dram_bytes == Approx(6.65e8).epsilon(1e-12));
  CHECK(stage_named(*report, "decode").dram_coverage_extrapolated == 0);
}

TEST_CASE("h100-1b-decode: a plan.json whose groups do not read leaves the bytes per kernel, with a warning") {
  TempDir temp;
  fs::copy(data_path("h100-1b-decode"), temp.path() / "run", fs::copy_options::recursive);
  write_file(temp.path() / "run" / "ncu" / "plan.json",
             R"({"schema": "llmprof.ncu_plan/1", "stage": "decode", "configs": [{"kernel": 7}]})");
  auto report = analyze_run_directory(temp.path() / "run", {});
  if (!report) FAIL(report.error().describe());
  CHECK(std::any_of(report->warnings.begin(), report->warnings.end(), [](const std::string& warning) {
    return warning.find("configs[0].kernel has the wrong type or is missing: DRAM bytes are carried per kernel") != std::string::npos;
  }));
  check_against_oracle(*report, read_expected("h100-1b-decode_stage_bytes.tsv"));
}

TEST_CASE("h100-1b-decode: model_bytes_per_step = 1e15 is withheld with the reason, never compared as a finding",
          "[hardening]") {
  TempDir temp;
  std::string metrics = read_file(data_path("h100-1b-decode/stage1/metrics.json"));
  metrics.insert(metrics.rfind('}'), ", \"model_bytes_per_step\": 1e15\n");
  const auto report = analyze_copy("h100-1b-decode", temp, metrics);
  const auto& decode = stage_named(report, "decode");
  CHECK_FALSE(decode.model_bytes_per_step);
  CHECK_FALSE(decode.mbu_workload);
  CHECK(decode.bytes_comparison.empty());  // before: "measured 2.07 GB per step against the 1 PB ...: 0.0%"
  CHECK(decode.verdict.find("the model must read") == std::string::npos);
  // 1e15 B x 128 steps / the bare run's decode seconds, over the recorded H100's peak.
  REQUIRE(report.workload);
  const double rate = 1e15 * 128 / report.workload->decode_s;
  const std::string ratio = llmprof::detail::format_number(rate / *report.device.peak_dram_bytes_per_s, 3) + "x";
  const auto warning = std::find_if(report.warnings.begin(), report.warnings.end(), [](const std::string& text) {
    return text.find("model_bytes_per_step cannot be right") != std::string::npos;
  });
  REQUIRE(warning != report.warnings.end());
  CHECK_THAT(*warning, Catch::StartsWith("stage 'decode': stage1/metrics.json says a step must move 1.00 PB; at the bare "
                                         "run's step rate that is "));
  CHECK_THAT(*warning, Catch::Contains(", " + ratio + " the device's peak of "));
}
