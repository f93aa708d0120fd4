// GPU-metrics sampling: the probe's reading of nsys's listings, the capture's flags, the samples reader and the
// per-stage utilisation, against tests/tools/gpu_metrics_expected.py over the same recorded H200 export.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/format.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/config.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/nsys_command.hpp"
#include "llmprof/report.hpp"
#include "llmprof/sampled_utilisation.hpp"
#include "llmprof/timeline.hpp"
#include "nsight/tool_listings.hpp"
#include "oracle.hpp"
#include "parse/sqlite_database.hpp"
#include "pipeline/nsys_capture.hpp"
#include "analysis/run_verdict.hpp"
#include "rundir/report_model_views.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::oracle_text;

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::filesystem::path kExport = data_path("gpu-metrics/eager_1b_h200_6steps.sqlite");

// One row per timeline stage, a step per instance (as the oracle divides), with the samples attached.
AnalysisReport sampled_report(const TimelineReport& timeline, const GpuMetricSamples& samples) {
  AnalysisReport report;
  for (const auto& stage : timeline.stages)
    report.stages.push_back(ReportStage{.name = stage.name, .domain = stage.domain,
                                        .steps = double(stage.instances.size())});
  attach_sampled_utilisation(timeline, samples, report);
  return report;
}

// The stage's sampled figures against the oracle's line for it (tests/data/oracles/gpu_metrics.txt). Returns
// whether the figures stand: under kMinimumStageSamples they must be withheld, and the note must say so.
bool matches_oracle(const ReportStage& stage, const std::string& line) {
  INFO(line << " " << stage.sampled_note);
  REQUIRE(stage.sampled_samples.has_value());
  CHECK(double(*stage.sampled_samples) == oracle_figure("gpu_metrics", line, "samples"));
  if (*stage.sampled_samples < kMinimumStageSamples) {
    CHECK_FALSE(stage.sampled_sm_active.mean.has_value());
    CHECK_FALSE(stage.sampled_mbu.has_value());
    CHECK_FALSE(stage.sampled_dram_bytes_per_step.has_value());
    CHECK_THAT(stage.sampled_note, Catch::Contains("withheld"));
    return false;
  }
  const auto oracle = [&](const char* key) { return oracle_figure("gpu_metrics", line, key); };
  CHECK(*stage.sampled_sm_active.mean == Approx(oracle("sm_mean")).epsilon(1e-8));
  CHECK(*stage.sampled_sm_active.p90 == Approx(oracle("sm_p90")));
  CHECK(*stage.sampled_tensor_active.mean == Approx(oracle("tensor_mean")).epsilon(1e-8));
  CHECK(*stage.sampled_dram_read.mean == Approx(oracle("read_mean")).epsilon(1e-8));
  CHECK(*stage.sampled_dram_read.p10 == Approx(oracle("read_p10")));
  CHECK(*stage.sampled_dram_read.p50 == Approx(oracle("read_p50")));
  CHECK(*stage.sampled_dram_read.p90 == Approx(oracle("read_p90")));
  CHECK(*stage.sampled_dram_write.mean == Approx(oracle("write_mean")).epsilon(1e-8));
  CHECK(*stage.sampled_mbu == Approx(oracle("mbu")).epsilon(1e-8));
  CHECK(*stage.sampled_dram_bytes_per_step == Approx(oracle("bytes_per_step")).epsilon(1e-6));
  return true;
}

}  // namespace

TEST_CASE("gpu metrics: the probe reads nsys's device and set listings, 2025.3.1 on the H200 and 2022.4 without a GPU") {
  const GpuMetricsSupport h200 =
      parse_gpu_metrics_devices(read_text(data_path("gpu-metrics/devices_help_h200_2025.3.txt")), "--gpu-metrics-devices");
  CHECK(h200.available);
  CHECK(h200.devices == "all");
  CHECK(h200.cuda_visible);  // per-rank sampling: a rank that sees one GPU samples only that one
  CHECK(h200.buses == std::map<std::string, std::string>{{"0", "0000:00:06.0"}});  // what a rank's GPU is checked against
  REQUIRE(h200.listed.size() == 1);
  CHECK(h200.listed[0] == "0: Hopper GH100 | NVIDIA H200 PCI[0000:00:06.0]");
  CHECK(choose_gpu_metrics_set(read_text(data_path("gpu-metrics/set_help_h200_2025.3.txt")), h200.listed) == "gh100");

  const GpuMetricsSupport cpu =
      parse_gpu_metrics_devices(read_text(data_path("gpu-metrics/device_help_cpu_2022.4.txt")), "--gpu-metrics-device");
  CHECK_FALSE(cpu.available);
  CHECK_FALSE(cpu.cuda_visible);
  CHECK(cpu.reason == "nsys says: NVIDIA GPUs not found, feature is not available");
  CHECK(choose_gpu_metrics_set(read_text(data_path("gpu-metrics/set_help_h200_2025.3.txt")), cpu.listed).empty());
  // 2022.4 takes GPU ids only: a listing without "all" gives the ids.
  CHECK(parse_gpu_metrics_devices("Possible --gpu-metrics-device values are:\n\t0: Ampere GA100 | A100\n\t1: Ampere GA100 | A100\n",
                                  "--gpu-metrics-device")
            .devices == "0,1");
}

TEST_CASE("gpu metrics: the capture's flags follow nsys.gpu_metrics and the probe") {
  NsysConfig config;
  CHECK(gpu_metrics_frequency_hz(config) == kGpuMetricsDefaultHz);
  config.gpu_metrics = GpuMetricsSetting::at_hz(100000);
  CHECK(gpu_metrics_frequency_hz(config) == 100000);
  config.gpu_metrics = GpuMetricsSetting::off();
  CHECK_FALSE(gpu_metrics_frequency_hz(config).has_value());
  // A config built in code with a frequency nsys refuses (validate_config names it) asks for none.
  for (const int bad : {0, 9, 200001, -20000}) {
    config.gpu_metrics = GpuMetricsSetting::at_hz(bad);
    CHECK_FALSE(gpu_metrics_frequency_hz(config).has_value());
  }
  // nsys_profile_options maps the frequency and set the key asks for; without the probe's devices option argv()
  // asks for no sampling (the pipeline adds the option and devices where the probe found them).
  config.gpu_metrics = GpuMetricsSetting::at_hz(100000);
  config.gpu_metrics_set = "gh100-ct";
  const NsysProfileOptions mapped = nsys_profile_options(config);
  CHECK(mapped.gpu_metrics_frequency_hz == 100000);
  CHECK(mapped.gpu_metrics_set == "gh100-ct");
  CHECK(mapped.gpu_metrics_option.empty());
  for (const auto& word : NsysCommand::profile(mapped).argv()) CHECK_THAT(word, !Catch::Contains("--gpu-metrics"));
  config.gpu_metrics = GpuMetricsSetting::off();
  CHECK(nsys_profile_options(config).gpu_metrics_frequency_hz == 0);
  NsysProfileOptions options;
  options.application = {"python3", "decode.py"};
  options.gpu_metrics_option = "--gpu-metrics-devices";
  options.gpu_metrics_devices = "all";
  options.gpu_metrics_frequency_hz = 20000;
  options.gpu_metrics_set = "gh100";
  const auto argv = NsysCommand::profile(options).argv();
  const auto at = std::find(argv.begin(), argv.end(), "--gpu-metrics-devices=all");
  REQUIRE(at != argv.end());
  CHECK(*(at + 1) == "--gpu-metrics-frequency=20000");
  CHECK(*(at + 2) == "--gpu-metrics-set=gh100");
  CHECK(argv.back() == "decode.py");  // before the workload
}

TEST_CASE("gpu metrics: the run's sentence on sampling follows each form of nsys.gpu_metrics") {
  NsysConfig config;
  NsysInfo nsys;
  nsys.gpu_metrics.reason = "nsys says: NVIDIA GPUs not found, feature is not available";
  config.gpu_metrics = GpuMetricsSetting::off();
  CHECK(detail::gpu_metrics_plan_sentence(config, nsys) == "GPU-metrics sampling off (nsys.gpu_metrics = off)");
  config.gpu_metrics = GpuMetricsSetting::automatic();
  CHECK(detail::gpu_metrics_plan_sentence(config, nsys) ==
        "GPU-metrics sampling not available, so the report has no sampled utilisation: nsys says: NVIDIA GPUs not "
        "found, feature is not available");
  config.gpu_metrics = GpuMetricsSetting::at_hz(100000);
  CHECK(detail::gpu_metrics_plan_sentence(config, nsys) ==
        "GPU-metrics sampling not available, so the report has no sampled utilisation: nsys says: NVIDIA GPUs not "
        "found, feature is not available (nsys.gpu_metrics = 100000 asked for it)");
  nsys.gpu_metrics = {.available = true, .devices_option = "--gpu-metrics-devices", .devices = "all",
                      .metric_set = "gh100"};
  CHECK(detail::gpu_metrics_plan_sentence(config, nsys) ==
        "GPU-metrics sampling at 100000 Hz on --gpu-metrics-devices=all (metric set gh100)");
  config.gpu_metrics = GpuMetricsSetting::automatic();
  config.gpu_metrics_set = "gh100-ct";
  CHECK(detail::gpu_metrics_plan_sentence(config, nsys) ==
        "GPU-metrics sampling at 20000 Hz on --gpu-metrics-devices=all (metric set gh100-ct)");
}

TEST_CASE("gpu metrics: the samples of a recorded H200 export, as the oracle reads them") {
  const std::string head = "eager_1b_h200_6steps.sqlite:";
  auto samples = read_gpu_metric_samples(kExport);
  REQUIRE(samples.has_value());
  REQUIRE(samples->has_value());
  const GpuMetricSamples& read = **samples;
  CHECK(read.period_ns == oracle_figure("gpu_metrics", head, "period_ns"));
  CHECK(double(read.timestamps_ns.size()) == oracle_figure("gpu_metrics", head, "sample_times"));
  CHECK(read.peak_dram_bytes_per_s == Approx(oracle_figure("gpu_metrics", head, "peak")));
  CHECK(read.gpu_name == "NVIDIA H200");
  CHECK(read.other_gpus == 0);
  CHECK(std::is_sorted(read.timestamps_ns.begin(), read.timestamps_ns.end()));
}

TEST_CASE("gpu metrics: per-stage utilisation and DRAM bytes per step match the oracle") {
  auto timeline = analyze_timeline(kExport);
  REQUIRE(timeline.has_value());
  auto samples = read_gpu_metric_samples(kExport);
  REQUIRE((samples.has_value() && samples->has_value()));
  AnalysisReport report = sampled_report(*timeline, **samples);
  for (const auto& stage : report.stages) {
    if (!matches_oracle(stage, "  " + stage.name + ":")) continue;
    CHECK_THAT(stage.sampled_note, Catch::Contains("over the GPU-active time"));
    CHECK_FALSE(stage.sampled_to_measured_bytes.has_value());  // no ncu bytes here
  }
  // The median step's series: the samples of the instance whose GPU-active window is the median one, averaged
  // in groups to at most 200 points (decode_step: 274 samples in 137 points).
  for (const std::string name : {"decode_step", "attention", "mlp"}) {
    const std::string line = "  " + name + ":";
    const auto& stage = *std::find_if(report.stages.begin(), report.stages.end(),
                                      [&](const ReportStage& one) { return one.name == name; });
    INFO(name);
    REQUIRE(double(stage.sampled_median_step.size()) == oracle_figure("gpu_metrics", line, "median_step_points"));
    CHECK(*stage.sampled_median_step.front().sm_active ==
          Approx(oracle_figure("gpu_metrics", line, "median_step_first_sm")).epsilon(1e-9));
    CHECK(std::is_sorted(stage.sampled_median_step.begin(), stage.sampled_median_step.end(),
                         [](const auto& a, const auto& b) { return a.offset_ns < b.offset_ns; }));
  }
  const auto& decode = *std::find_if(report.stages.begin(), report.stages.end(),
                                     [](const ReportStage& one) { return one.name == "decode"; });
  CHECK(decode.sampled_median_step.empty());  // one instance: no median step to draw
  // With ncu's measured bytes the report puts the two side by side.
  ReportStage& step = *std::find_if(report.stages.begin(), report.stages.end(),
                                    [](const ReportStage& stage) { return stage.name == "decode_step"; });
  step.dram_bytes_per_step = 2.2e9;
  attach_sampled_utilisation(timeline.value(), *samples, report);
  REQUIRE(step.sampled_to_measured_bytes.has_value());
  CHECK(*step.sampled_to_measured_bytes == Approx(*step.sampled_dram_bytes_per_step / 2.2e9));
}

TEST_CASE("gpu metrics: a capture without CUDA trace is sampled over its ranges' CPU time (the sampled preset)") {
  // The recorded export without its CUPTI tables is what nsys --trace=nvtx writes: ranges and samples, no GPU work.
  llmprof::testing::TempDir temp;
  const auto copy = temp.path() / "nvtx_only.sqlite";
  std::filesystem::copy_file(kExport, copy, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
                              "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"})
      REQUIRE(database->execute(std::string("DROP TABLE IF EXISTS ") + table));
  }
  auto timeline = analyze_timeline(copy);
  REQUIRE(timeline.has_value());
  CHECK(timeline->gpu_activities == 0);
  // Not "CPU only": the samples say a GPU was there and busy; its work was not traced.
  CHECK(timeline->cuda_untraced);
  for (const auto& stage : timeline->stages) CHECK_THAT(stage.verdict, Catch::StartsWith("GPU work not traced"));
  CHECK_THAT(timeline->validity.notes.front(), Catch::StartsWith("CUDA was not traced"));
  auto samples = read_gpu_metric_samples(copy);
  REQUIRE((samples.has_value() && samples->has_value()));
  const AnalysisReport report = sampled_report(*timeline, **samples);
  REQUIRE(report.stages.size() == 6);
  for (const auto& stage : report.stages) {
    const std::string line = "  cpu " + stage.name + ":";
    if (!matches_oracle(stage, line)) {
      // decode's range runs to the end of the run, its samples only through the first 6 steps: not covered.
      CHECK_THAT(stage.sampled_note, Catch::Contains("fell in the ranges' CPU time") ||
                                         Catch::StartsWith("withheld: none of its 1 instances lies inside the sampling"));
      continue;
    }
    CHECK_THAT(stage.sampled_note, Catch::Contains("over the ranges' CPU time (the capture traced no CUDA work"));
    if (stage.name == "decode_step")
      CHECK(double(stage.sampled_median_step.size()) == oracle_figure("gpu_metrics", line, "median_step_points"));
  }
  // On this eager decode the two windows give the same bytes per step (within 0.1%: its steps end by waiting for
  // their GPU work): the same export with its CUDA trace, sampled over the GPU-active time.
  auto traced = analyze_timeline(kExport);
  REQUIRE(traced.has_value());
  CHECK_FALSE(traced->cuda_untraced);
  const AnalysisReport traced_report = sampled_report(*traced, **samples);
  const auto bytes_of = [](const AnalysisReport& of) {
    for (const auto& stage : of.stages)
      if (stage.name == "decode_step") return stage.sampled_dram_bytes_per_step.value_or(0);
    return 0.0;
  };
  REQUIRE(bytes_of(traced_report) > 0);
  CHECK(bytes_of(report) == Approx(bytes_of(traced_report)).epsilon(0.002));
  // A capture the configuration took without CUDA trace is untraced whatever the export holds (here: CUDA tables).
  TimelineOptions untraced;
  untraced.cuda_traced = false;
  auto configured = analyze_timeline(kExport, untraced);
  REQUIRE(configured.has_value());
  CHECK(configured->cuda_untraced);
}

TEST_CASE("gpu metrics: a run of the sampled preset (nsys --trace=nvtx, H200) keeps its NVTX nesting and figures") {
  // A run directory whose only input is a real export of the sampled preset: the 1b example's first 6 decode steps
  // under nsys 2025.3.1 --trace=nvtx at 20 kHz on the H200 (trimmed, no environment), analysed as that preset is.
  // The trim kept the whole decode range (to the run's end) but samples only through the sixth step: the range is
  // ended there, as in a capture of those steps alone (the oracle's "nvtx ended" lines do the same).
  llmprof::testing::TempDir temp;
  const auto sqlite = temp.path() / "run/nsys/profile.sqlite";
  std::filesystem::create_directories(sqlite.parent_path());
  std::filesystem::copy_file(data_path("gpu-metrics/nvtx_1b_h200_6steps.sqlite"), sqlite);
  std::filesystem::permissions(sqlite, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  {
    auto database = detail::SqliteDatabase::open_writable(sqlite);
    REQUIRE(database.has_value());
    REQUIRE(database->execute("UPDATE NVTX_EVENTS SET end = (SELECT max(end) FROM NVTX_EVENTS WHERE text = "
                              "'decode_step') WHERE text = 'decode'"));
  }
  AnalysisOptions options;
  options.cuda_traced = false;
  auto analysis = analyze_run_directory(temp.path() / "run", options);
  REQUIRE(analysis.has_value());
  REQUIRE(analysis->timeline.has_value());
  CHECK(analysis->timeline->cuda_untraced);
  CHECK(analysis->timeline->gpu_activities == 0);
  const auto stage = [&](const std::string& name) -> const ReportStage& {
    for (const auto& one : analysis->stages)
      if (one.name == name) return one;
    FAIL("no stage " << name);
    return analysis->stages.front();
  };
  // The nesting the example emits: decode > decode_step > attention, mlp, lm_head, sample.
  CHECK(stage("decode").level == 0);
  CHECK(stage("decode_step").level == 1);
  CHECK(stage("decode_step").parent == std::optional<std::string>("decode"));
  CHECK(stage("attention").level == 2);
  CHECK(stage("attention").parent == std::optional<std::string>("decode_step"));
  CHECK(stage("mlp").parent == std::optional<std::string>("decode_step"));
  for (const std::string name : {"decode_step", "attention", "mlp", "lm_head", "sample"})
    if (matches_oracle(stage(name), "  nvtx ended cpu " + name + ":"))
      CHECK_THAT(stage(name).sampled_note, Catch::Contains("over the ranges' CPU time"));
  CHECK(double(stage("decode_step").sampled_median_step.size()) ==
        oracle_figure("gpu_metrics", "  nvtx ended cpu decode_step:", "median_step_points"));
  // Not "CPU only" nor "no GPU kernels ran": the stages' GPU work was not traced.
  for (const auto& one : analysis->timeline->stages) CHECK_THAT(one.verdict, Catch::StartsWith("GPU work not traced"));
  for (const auto& one : analysis->stages) CHECK_THAT(one.verdict, Catch::StartsWith("GPU work not traced"));
  // The report's headline says what the counters measured for the main stage, each figure the oracle's through the
  // report's one formatter. Without CUDA trace nothing says that `decode_step` launched decode's GPU work, and
  // without the bare run's metrics there are no decode steps: no step is known, so the figures are per `decode` range.
  REQUIRE(write_analysis(*analysis, temp.path() / "run/analysis"));
  auto model = load_run_report(temp.path() / "run");
  REQUIRE(model.has_value());
  const std::string line = "  nvtx ended cpu decode:";
  const auto figure = [&](const char* key) { return std::optional<double>(oracle_figure("gpu_metrics", line, key)); };
  const std::string headline = detail::summarize_run_verdict(*model).headline;
  CHECK_THAT(
      headline,
      Catch::StartsWith("decode: ") && Catch::Contains("GPU work not traced.") &&
          Catch::Contains(" Sampled from the GPU's counters: SM active " + format_fraction_percent(figure("sm_mean")) +
                          ", tensor active " + format_fraction_percent(figure("tensor_mean")) + ", DRAM " +
                          format_fraction_percent(figure("mbu")) + " of peak bandwidth (" +
                          detail::format_si(figure("bytes_per_step"), "B") + " per `decode` range).") &&
          Catch::Contains("No step is known inside `decode`: its figures are per range.") &&
          !Catch::Contains(" per step"));
}

namespace {

// A run directory whose nsys/profile.sqlite is `sqlite` with each of `shorten`'s instances ending `keep_ns` after it
// starts (none when `shorten` is empty), analysed as the sampled preset is (no CUDA trace), with its report model.
struct SampledRun {
  AnalysisReport analysis;
  RunReportModel model;
};
SampledRun sampled_run(const llmprof::testing::TempDir& temp, const std::filesystem::path& sqlite,
                       const std::string& shorten = {}, std::int64_t keep_ns = 0) {
  const auto main = temp.path() / "run";
  const auto copy = main / "nsys/profile.sqlite";
  std::filesystem::create_directories(copy.parent_path());
  std::filesystem::copy_file(sqlite, copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  if (!shorten.empty()) {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    REQUIRE(database->execute("UPDATE NVTX_EVENTS SET end = start + " + std::to_string(keep_ns) + " WHERE text = '" +
                              shorten + "'"));
  }
  AnalysisOptions options;
  options.cuda_traced = false;
  auto analysis = analyze_run_directory(main, options);
  REQUIRE(analysis.has_value());
  REQUIRE(write_analysis(*analysis, main / "analysis"));
  auto model = load_run_report(main);
  REQUIRE(model.has_value());
  return {std::move(analysis.value()), std::move(model.value())};
}

const ReportStage& stage_named(const AnalysisReport& report, const std::string& name) {
  for (const auto& stage : report.stages)
    if (stage.name == name) return stage;
  FAIL("no stage " << name);
  return report.stages.front();
}

}  // namespace

// Without CUDA trace a stage is sampled over its ranges' CPU time, which holds its GPU work only where the ranges
// wait for it. The samples tell which: the GPU activity after each range, to the thread's next range start,
// against the activity inside (tests/tools/gpu_metrics_expected.py computes both).
TEST_CASE("gpu metrics: a range whose GPU work runs after it has its sampled figures withheld, with the reason") {
  const auto share = [](const std::string& line) {
    return format_fraction_percent(oracle_figure("gpu_metrics", line, "after_share"));
  };
  // The eager 1b decode's ranges wait for their work: the figures stand, the note gives the share after.
  SECTION("eager 1b decode: figures stand") {
    llmprof::testing::TempDir temp;
    const auto run = sampled_run(temp, data_path("gpu-metrics/nvtx_1b_h200_6steps.sqlite"));
    for (const std::string name : {"attention", "mlp", "lm_head"}) {
      const std::string line = "  nvtx cpu " + name + ":";
      INFO(name);
      CHECK(oracle_figure("gpu_metrics", line, "after_share") < kMostActivityAfterRanges);
      if (matches_oracle(stage_named(run.analysis, name), line))
        CHECK_THAT(stage_named(run.analysis, name).sampled_note,
                   Catch::Contains(share(line) + " of the GPU activity sampled in and after them came after them"));
    }
  }
  // A real CUDA-graph decode whose steps wait for their token (H100): the figures stand, and agree.
  SECTION("graph steps that wait: figures stand") {
    // many_steps.py --graphs --step-ranges: 48 decode_step ranges, each replaying one graph and copying its token to
    // the host; a step reads the model's weights once (the facts: 603,979,776 bytes).
    llmprof::testing::TempDir temp;
    const auto run = sampled_run(temp, data_path("zoo/many_steps_graph_sampled.sqlite"));
    const ReportStage& step = stage_named(run.analysis, "decode_step");
    REQUIRE(matches_oracle(step, "  graph cpu decode_step:"));
    CHECK(oracle_figure("gpu_metrics", "  graph cpu decode_step:", "after_share") < kMostActivityAfterRanges);
    CHECK_THAT(step.sampled_note, Catch::Contains(share("  graph cpu decode_step:") + " of the GPU activity"));
    CHECK(*step.sampled_dram_bytes_per_step == Approx(603979776.0).epsilon(0.05));
    CHECK(matches_oracle(stage_named(run.analysis, "decode"), "  graph cpu decode:"));
  }
  // The same steps ending 15 us after they start, as launch-only graph steps do: withheld, the parent stands.
  SECTION("graph steps that only launch: withheld") {
    llmprof::testing::TempDir temp;
    const auto run = sampled_run(temp, data_path("zoo/many_steps_graph_sampled.sqlite"), "decode_step", 15000);
    const std::string line = "  async cpu decode_step:";
    // Over its 15 us windows the samples would read a step at a small fraction of its bytes.
    CHECK(oracle_figure("gpu_metrics", line, "bytes_per_step") < 0.1 * 603979776.0);
    CHECK(oracle_figure("gpu_metrics", line, "after_share") > kMostActivityAfterRanges);
    const ReportStage& step = stage_named(run.analysis, "decode_step");
    REQUIRE(step.sampled_samples.has_value());
    CHECK(double(*step.sampled_samples) == oracle_figure("gpu_metrics", line, "samples"));
    CHECK_FALSE(step.sampled_sm_active.mean.has_value());
    CHECK_FALSE(step.sampled_mbu.has_value());
    CHECK_FALSE(step.sampled_dram_bytes_per_step.has_value());
    CHECK(step.sampled_median_step.empty());
    CHECK_THAT(step.sampled_note,
               Catch::StartsWith("withheld: " + share(line) + " of the GPU activity sampled in and after its 48 ranges "
                                 "came after they ended (" +
                                 oracle_text("gpu_metrics", line, "after_samples") + " samples") &&
                   Catch::Contains("the enclosing `decode`"));
    CHECK(matches_oracle(stage_named(run.analysis, "decode"), "  async cpu decode:"));
    // The panel says one thing about its window, and why the step is withheld.
    const std::string markdown = render_markdown(run.model);
    const auto panel = markdown.substr(markdown.find("## GPU utilisation (sampled)"));
    CHECK_THAT(panel, Catch::Contains("over the CPU time of each stage's ranges"));
    CHECK_THAT(panel, !Catch::Contains("over the GPU-active time"));
    CHECK_THAT(panel, Catch::Contains("- decode_step (in decode): withheld: " + share(line)));
    const std::string html = render_html(run.model);
    CHECK_THAT(html, Catch::Contains("<li>decode_step (in decode): withheld: " + share(line)));
  }  // The same decode recorded with steps that launch their graph and return (many_steps.py --async-steps, H100):
  // back-to-back steps whose GPU work outlasts them and their `decode` range. Read inside, a step would be 60 MB
  // against the 604 MB it reads; both are withheld.
  SECTION("graph steps recorded launching only: steps and their decode withheld") {
    llmprof::testing::TempDir temp;
    const auto run = sampled_run(temp, data_path("zoo/many_steps_graph_async_sampled.sqlite"));
    for (const std::string name : {"decode_step", "decode"}) {
      INFO(name);
      const std::string line = "  real async cpu " + name + ":";
      CHECK(oracle_figure("gpu_metrics", line, "after_share") > kMostActivityAfterRanges);
      const ReportStage& stage = stage_named(run.analysis, name);
      REQUIRE(stage.sampled_samples.has_value());
      CHECK(double(*stage.sampled_samples) == oracle_figure("gpu_metrics", line, "samples"));
      CHECK_FALSE(stage.sampled_mbu.has_value());
      CHECK_FALSE(stage.sampled_dram_bytes_per_step.has_value());
      CHECK_THAT(stage.sampled_note, Catch::StartsWith("withheld: " + share(line) + " of the GPU activity") &&
                                         Catch::Contains(oracle_text("gpu_metrics", line, "after_samples") +
                                                         " samples before the thread's next range"));
    }
    CHECK(oracle_figure("gpu_metrics", "  real async cpu decode_step:", "bytes_per_step") < 0.2 * 603979776.0);
  }
}

TEST_CASE("gpu metrics: an export without samples, and one whose samples break their invariants") {
  // nsys 2022.4 on a machine without a GPU writes no GPU_METRICS table: no samples, not an error.
  auto none = read_gpu_metric_samples(data_path("nsys-sqlite/cpu2022.sqlite"));
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
  auto timeline = analyze_timeline(data_path("nsys-sqlite/cpu2022.sqlite"));
  REQUIRE(timeline.has_value());
  AnalysisReport report;
  for (const auto& stage : timeline->stages) report.stages.push_back(ReportStage{.name = stage.name, .domain = stage.domain});
  attach_sampled_utilisation(timeline.value(), std::nullopt, report);
  REQUIRE_FALSE(report.stages.empty());
  for (const auto& stage : report.stages) {
    CHECK_FALSE(stage.sampled_samples.has_value());
    CHECK_THAT(stage.sampled_note, Catch::StartsWith("no GPU-metrics samples in the capture"));
  }

  const auto copy = std::filesystem::temp_directory_path() / "llmprof_gpu_metrics_corrupt.sqlite";
  std::filesystem::copy_file(kExport, copy, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    REQUIRE(database->execute("UPDATE GPU_METRICS SET value = 150 WHERE rowid = (SELECT max(rowid) FROM GPU_METRICS "
                              "WHERE metricId = (SELECT metricId FROM TARGET_INFO_GPU_METRICS WHERE metricName LIKE "
                              "'SMs Active%'))"));
  }
  // One value out of 0..100 is left out and counted; the other samples stand (tests/unit/gpu_metrics_inputs_test.cpp
  // has the hostile cases against the oracle).
  auto corrupt = read_gpu_metric_samples(copy);
  REQUIRE(corrupt.has_value());
  REQUIRE(corrupt->has_value());
  CHECK((*corrupt)->left_out.out_of_range == 1);
  CHECK(double((*corrupt)->timestamps_ns.size()) ==
        oracle_figure("gpu_metrics", "eager_1b_h200_6steps.sqlite:", "sample_times"));
  {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    REQUIRE(database->execute("DROP TABLE TARGET_INFO_GPU_METRICS"));
  }
  auto nameless = read_gpu_metric_samples(copy);
  REQUIRE_FALSE(nameless.has_value());
  CHECK_THAT(nameless.error().describe(), Catch::Contains("no metric names"));
  std::filesystem::remove(copy);
}
