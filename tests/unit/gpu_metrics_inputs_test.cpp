// The sampled panel's inputs under hostile exports: copies of the recorded H200 export doctored as
// tests/data/gpu-metrics/doctored.tsv says (bad values, a text value, renamed metrics, another unit, two GPUs,
// overlapping ranges, samples covering half the steps, samples outside the capture), against
// tests/tools/gpu_metrics_expected.py, which builds the same copies and reads them with its own rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmprof/analysis.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/sampled_utilisation.hpp"
#include "llmprof/timeline.hpp"
#include "oracle.hpp"
#include "parse/sqlite_database.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::oracle_text;

namespace {

// The copy of case `name` of doctored.tsv, built at `into` (the case's SQL run on a copy of its export).
std::filesystem::path doctored(const std::string& name, const std::filesystem::path& into) {
  std::ifstream cases(data_path("gpu-metrics/doctored.tsv"));
  for (std::string line; std::getline(cases, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream fields(line);
    std::string case_name, base, sql;
    std::getline(fields, case_name, '\t');
    std::getline(fields, base, '\t');
    std::getline(fields, sql);
    if (case_name != name) continue;
    std::filesystem::create_directories(into.parent_path());
    std::filesystem::copy_file(data_path(base), into, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(into, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
    auto database = detail::SqliteDatabase::open_writable(into);
    REQUIRE(database.has_value());
    for (std::size_t start = 0; start < sql.size();) {
      const auto end = sql.find(" ; ", start);
      const std::string statement = sql.substr(start, end == std::string::npos ? std::string::npos : end - start);
      INFO(statement);
      REQUIRE(database->execute(statement));
      start = end == std::string::npos ? sql.size() : end + 3;
    }
    return into;
  }
  FAIL("no case " << name << " in tests/data/gpu-metrics/doctored.tsv");
  return {};
}

// One row per timeline stage, a step per instance (as the oracle divides), with the samples attached.
AnalysisReport sampled_report(const TimelineReport& timeline, const GpuMetricSamples& samples) {
  AnalysisReport report;
  for (const auto& stage : timeline.stages)
    report.stages.push_back(ReportStage{.name = stage.name, .domain = stage.domain,
                                        .steps = double(stage.instances.size())});
  attach_sampled_utilisation(timeline, samples, report);
  return report;
}

const ReportStage& stage_named(const AnalysisReport& report, const std::string& name) {
  for (const auto& stage : report.stages)
    if (stage.name == name) return stage;
  FAIL("no stage " << name);
  return report.stages.front();
}

// The stage's figures against the oracle's line (samples, SM, DRAM read, MBU, bytes per step).
void check_against_oracle(const ReportStage& stage, const std::string& line) {
  INFO(line << " " << stage.sampled_note);
  REQUIRE(stage.sampled_samples.has_value());
  CHECK(double(*stage.sampled_samples) == oracle_figure("gpu_metrics", line, "samples"));
  REQUIRE(stage.sampled_sm_active.mean.has_value());
  CHECK(*stage.sampled_sm_active.mean == Approx(oracle_figure("gpu_metrics", line, "sm_mean")).epsilon(1e-8));
  CHECK(*stage.sampled_dram_read.mean == Approx(oracle_figure("gpu_metrics", line, "read_mean")).epsilon(1e-8));
  CHECK(*stage.sampled_mbu == Approx(oracle_figure("gpu_metrics", line, "mbu")).epsilon(1e-8));
  REQUIRE(stage.sampled_dram_bytes_per_step.has_value());
  CHECK(*stage.sampled_dram_bytes_per_step == Approx(oracle_figure("gpu_metrics", line, "bytes_per_step")).epsilon(1e-6));
}

struct Doctored {
  llmprof::testing::TempDir temp;
  std::filesystem::path file;
  explicit Doctored(const std::string& name) : file(doctored(name, temp.path() / "run/nsys/profile.sqlite")) {}
};

}  // namespace

TEST_CASE("gpu metrics inputs: one sample at -1 and one at 101% are left out and counted, the other 7,546 kept") {
  Doctored copy("one_bad_each");
  const std::string head = "doctored one_bad_each:";
  auto samples = read_gpu_metric_samples(copy.file);
  REQUIRE(samples.has_value());  // not an error that drops every sample
  REQUIRE(samples->has_value());
  const GpuMetricSamples& read = **samples;
  CHECK(double(read.timestamps_ns.size()) == oracle_figure("gpu_metrics", head, "sample_times"));
  CHECK(double(read.left_out.read) == oracle_figure("gpu_metrics", head, "values"));
  CHECK(double(read.left_out.out_of_range) == oracle_figure("gpu_metrics", head, "out_of_range"));
  CHECK(read.left_out.total() == 2);
  for (const auto* column : {&read.sm_active, &read.tensor_active, &read.dram_read, &read.dram_write})
    for (const double value : *column) CHECK((std::isnan(value) || (value >= 0 && value <= 100)));
  auto timeline = analyze_timeline(copy.file);
  REQUIRE(timeline.has_value());
  const AnalysisReport report = sampled_report(*timeline, read);
  const ReportStage& step = stage_named(report, "decode_step");
  check_against_oracle(step, "  doctored one_bad_each decode_step:");
  CHECK_THAT(step.sampled_note, Catch::Contains("2 of 7548 sampled values left out (2 outside 0..100)"));
  CHECK(std::any_of(report.warnings.begin(), report.warnings.end(),
                    [](const std::string& warning) { return warning.find("2 outside 0..100") != std::string::npos; }));
}

TEST_CASE("gpu metrics inputs: a text value is left out as not a number, not read as 0") {
  Doctored copy("text_value");
  auto samples = read_gpu_metric_samples(copy.file);
  REQUIRE((samples.has_value() && samples->has_value()));
  CHECK(double((*samples)->left_out.not_numbers) == oracle_figure("gpu_metrics", "doctored text_value:", "not_numbers"));
  auto timeline = analyze_timeline(copy.file);
  REQUIRE(timeline.has_value());
  const AnalysisReport report = sampled_report(*timeline, **samples);
  check_against_oracle(stage_named(report, "decode"), "  doctored text_value decode:");
  CHECK_THAT(stage_named(report, "decode").sampled_note, Catch::Contains("(1 not a number)"));
}

TEST_CASE("gpu metrics inputs: a metric in another unit, or renamed, is withheld with what is wrong and the fix") {
  SECTION("DRAM read past 100 throughout: not a percentage") {
    Doctored copy("raw_dram");
    CHECK_THAT(oracle_text("gpu_metrics", "doctored raw_dram:", "withheld"), Catch::StartsWith("left_out_read"));
    auto samples = read_gpu_metric_samples(copy.file);
    REQUIRE_FALSE(samples.has_value());
    CHECK_THAT(samples.error().describe(),
               Catch::Contains(copy.file.string()) && Catch::Contains("1887 of their 1887 \"DRAM Read Bandwidth\"") &&
                   Catch::Contains("not the percentage of peak"));
  }
  SECTION("names another nsys version might use") {
    Doctored copy("renamed");
    CHECK(oracle_text("gpu_metrics", "doctored renamed:", "withheld") == "no_metric_read");
    auto samples = read_gpu_metric_samples(copy.file);
    REQUIRE_FALSE(samples.has_value());
    const std::string said = samples.error().describe();
    CHECK_THAT(said, Catch::Contains("name none of the metrics read") && Catch::Contains("\"SM Occupancy [Throughput %]\"") &&
                         Catch::Contains("nsys.gpu_metrics_set") && !Catch::Contains("raise nsys.gpu_metrics"));
  }
}

TEST_CASE("gpu metrics inputs: two GPUs' samples are withheld, whether under two typeIds or sharing one") {
  SECTION("two typeIds, the idle GPU's the lower: not the first GPU's figures") {
    Doctored copy("two_gpus");
    CHECK(oracle_text("gpu_metrics", "doctored two_gpus:", "withheld") == "gpus=2");
    auto samples = read_gpu_metric_samples(copy.file);
    REQUIRE_FALSE(samples.has_value());
    CHECK(samples.error().code == ErrorCode::unsupported);
    CHECK_THAT(samples.error().describe(), Catch::Contains("come from 2 GPUs") && Catch::Contains("0000:00:07.0") &&
                                               Catch::Contains("CUDA_VISIBLE_DEVICES"));
  }
  SECTION("one typeId, interleaved half a period apart: twice the asked frequency") {
    Doctored copy("one_id_interleaved");
    const double period = oracle_figure("gpu_metrics", "doctored one_id_interleaved:", "period_ns");
    CHECK(period < 0.75 * 1e9 / 20000);  // read alone it looks like one GPU at 40 kHz
    auto unchecked = read_gpu_metric_samples(copy.file);
    REQUIRE((unchecked.has_value() && unchecked->has_value()));
    CHECK(double((*unchecked)->period_ns) == period);
    auto samples = read_gpu_metric_samples(copy.file, GpuMetricsExpectation{20000});
    REQUIRE_FALSE(samples.has_value());
    CHECK_THAT(samples.error().describe(), Catch::Contains("as often as the 20000 Hz asked for"));
  }
  SECTION("one typeId, 10 us apart: irregular") {
    Doctored copy("one_id_offset");
    CHECK_THAT(oracle_text("gpu_metrics", "doctored one_id_offset:", "withheld"), Catch::StartsWith("irregular="));
    auto samples = read_gpu_metric_samples(copy.file);
    REQUIRE_FALSE(samples.has_value());
    CHECK_THAT(samples.error().describe(), Catch::Contains("irregular times"));
  }
  SECTION("one typeId, the same times: every value repeated") {
    Doctored copy("one_id_same_times");
    CHECK_THAT(oracle_text("gpu_metrics", "doctored one_id_same_times:", "withheld"), Catch::StartsWith("left_out_sm="));
    auto samples = read_gpu_metric_samples(copy.file);
    REQUIRE_FALSE(samples.has_value());
    CHECK_THAT(samples.error().describe(), Catch::Contains("repeated at one time"));
  }
}

TEST_CASE("gpu metrics inputs: overlapping instances count each sample once") {
  Doctored copy("overlapping");
  auto samples = read_gpu_metric_samples(copy.file);
  REQUIRE((samples.has_value() && samples->has_value()));
  auto timeline = analyze_timeline(copy.file);
  REQUIRE(timeline.has_value());
  const AnalysisReport report = sampled_report(*timeline, **samples);
  const ReportStage& step = stage_named(report, "decode_step");
  // 12 instances (each range twice) over the 1,578 samples of the 6 steps' GPU time, not 3,156.
  CHECK(oracle_figure("gpu_metrics", "  doctored overlapping decode_step:", "instances") == 12);
  check_against_oracle(step, "  doctored overlapping decode_step:");
  CHECK(double(*step.sampled_samples) == oracle_figure("gpu_metrics", "  decode_step:", "samples"));
}

TEST_CASE("gpu metrics inputs: samples covering 3 of 6 steps give bytes per step over those 3, and say so") {
  Doctored copy("half_covered");
  auto samples = read_gpu_metric_samples(copy.file);
  REQUIRE((samples.has_value() && samples->has_value()));
  auto timeline = analyze_timeline(copy.file);
  REQUIRE(timeline.has_value());
  const AnalysisReport report = sampled_report(*timeline, **samples);
  const ReportStage& step = stage_named(report, "decode_step");
  CHECK(oracle_figure("gpu_metrics", "  doctored half_covered decode_step:", "outside") == 3);
  check_against_oracle(step, "  doctored half_covered decode_step:");
  // Per step as the whole export has it (2.80 GB), not half of it.
  CHECK(*step.sampled_dram_bytes_per_step ==
        Approx(oracle_figure("gpu_metrics", "  decode_step:", "bytes_per_step")).epsilon(0.05));
  CHECK_THAT(step.sampled_note, Catch::Contains("left out 3 of 6 instances, outside the sampling window"));
  // The decode range the samples cover only in part is withheld, both spans said.
  const ReportStage& decode = stage_named(report, "decode");
  CHECK_FALSE(decode.sampled_sm_active.mean.has_value());
  CHECK_THAT(decode.sampled_note, Catch::StartsWith("withheld: none of its 1 instances lies inside the sampling window"));
}

TEST_CASE("gpu metrics inputs: samples outside the capture are withheld as such, not 'raise nsys.gpu_metrics'") {
  Doctored copy("outside");
  auto samples = read_gpu_metric_samples(copy.file);
  REQUIRE((samples.has_value() && samples->has_value()));
  auto timeline = analyze_timeline(copy.file);
  REQUIRE(timeline.has_value());
  const AnalysisReport report = sampled_report(*timeline, **samples);
  for (const auto& stage : report.stages) {
    INFO(stage.name);
    CHECK(oracle_figure("gpu_metrics", "  doctored outside " + stage.name + ":", "samples") == 0);
    CHECK_FALSE(stage.sampled_sm_active.mean.has_value());
    CHECK_THAT(stage.sampled_note, Catch::StartsWith("withheld: none of its") &&
                                       Catch::Contains("on another clock") && !Catch::Contains("raise nsys.gpu_metrics"));
  }
}

TEST_CASE("gpu metrics inputs: the panel gives the true reason when the samples are withheld, and keeps the rest") {
  SECTION("withheld: the panel says why, not that there were no samples") {
    Doctored copy("renamed");
    const auto main = copy.temp.path() / "run";
    auto analysis = analyze_run_directory(main, AnalysisOptions{});
    REQUIRE(analysis.has_value());
    REQUIRE(write_analysis(*analysis, main / "analysis"));
    auto model = load_run_report(main);
    REQUIRE(model.has_value());
    const std::string markdown = render_markdown(*model);
    const auto panel = markdown.substr(markdown.find("## GPU utilisation (sampled)"));
    CHECK_THAT(panel, Catch::StartsWith("## GPU utilisation (sampled)\n\nNo sampled utilisation: withheld: the "
                                        "GPU-metrics samples of") &&
                          Catch::Contains("name none of the metrics read") &&
                          !Catch::Contains("no GPU-metrics samples in the capture"));
    CHECK_THAT(render_html(*model), Catch::Contains("No sampled utilisation: withheld: the GPU-metrics samples of"));
  }
  SECTION("two GPUs under one id, at twice the asked frequency: withheld through the run's analysis options") {
    Doctored copy("one_id_interleaved");
    AnalysisOptions options;
    options.gpu_metrics_expectation.requested_hz = 20000;
    auto analysis = analyze_run_directory(copy.temp.path() / "run", options);
    REQUIRE(analysis.has_value());
    for (const auto& stage : analysis->stages) {
      CHECK_FALSE(stage.sampled_sm_active.mean.has_value());
      CHECK_THAT(stage.sampled_note, Catch::StartsWith("withheld: ") && Catch::Contains("20000 Hz"));
    }
  }
  SECTION("the frequency asked for in nsys.extra_args: two GPUs under one id are still withheld") {
    DeepProfileConfig config;
    config.nsys.gpu_metrics = GpuMetricsSetting::off();  // sampling asked for through extra_args alone
    config.nsys.extra_args = {"--gpu-metrics-devices=all", "--gpu-metrics-frequency", "20000"};
    Doctored copy("one_id_interleaved");
    AnalysisOptions options;
    options.gpu_metrics_expectation = analysis_options_for(config, std::nullopt).gpu_metrics_expectation;
    CHECK(options.gpu_metrics_expectation.requested_hz == std::optional<int>(20000));
    auto analysis = analyze_run_directory(copy.temp.path() / "run", options);
    REQUIRE(analysis.has_value());
    for (const auto& stage : analysis->stages) {
      CHECK_FALSE(stage.sampled_sm_active.mean.has_value());
      CHECK_THAT(stage.sampled_note, Catch::StartsWith("withheld: ") && Catch::Contains("20000 Hz"));
    }
    // The "=" spelling; the last flag counts, as nsys reads the command line; a value that is no number names none.
    config.nsys.gpu_metrics = GpuMetricsSetting::automatic();
    config.nsys.extra_args = {"--gpu-metrics-frequency=5000", "--gpu-metrics-frequency=10000"};
    CHECK(analysis_options_for(config, std::nullopt).gpu_metrics_expectation.requested_hz == std::optional<int>(10000));
    config.nsys.extra_args = {"--gpu-metrics-frequency=fast"};
    CHECK_FALSE(analysis_options_for(config, std::nullopt).gpu_metrics_expectation.requested_hz.has_value());
    config.nsys.extra_args = {};
    CHECK(analysis_options_for(config, std::nullopt).gpu_metrics_expectation.requested_hz ==
          std::optional<int>(kGpuMetricsDefaultHz));
  }
  SECTION("one bad sample: the panel keeps its figures") {
    Doctored copy("one_bad_each");
    const auto main = copy.temp.path() / "run";
    auto analysis = analyze_run_directory(main, AnalysisOptions{});
    REQUIRE(analysis.has_value());
    const auto step = std::find_if(analysis->stages.begin(), analysis->stages.end(),
                                   [](const ReportStage& stage) { return stage.name == "decode_step"; });
    REQUIRE(step != analysis->stages.end());
    CHECK(step->sampled_sm_active.mean.has_value());
    CHECK(double(*step->sampled_samples) == oracle_figure("gpu_metrics", "  doctored one_bad_each decode_step:", "samples"));
  }
}
