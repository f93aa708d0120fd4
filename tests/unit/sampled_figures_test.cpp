// A stage's sampled figures as one SampledFigure per metric: written to report.json under the flat keys
// ("sampled_sm_active", "sampled_sm_active_p10", ...) that llmprof.report/2 files carry, read back into the same
// records, and withheld by their table rows' bounds where they are made and where they are read. Expected values
// are tests/tools/gpu_metrics_expected.py's (tests/data/oracles/gpu_metrics.txt) over the recorded H200 export.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>

#include "llmprof/analysis.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/sampled_utilisation.hpp"
#include "llmprof/timeline.hpp"
#include "oracle.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::read_file;
using llmprof::testing::write_file;
namespace fs = std::filesystem;

namespace {

const fs::path kExport = data_path("gpu-metrics/eager_1b_h200_6steps.sqlite");

// The recorded export as a run directory's nsys/profile.sqlite, analysed and written (analysis/report.json).
fs::path analysed_run(const llmprof::testing::TempDir& temp, AnalysisReport& analysis) {
  const fs::path main = temp.path() / "run";
  fs::create_directories(main / "nsys");
  fs::copy_file(kExport, main / "nsys/profile.sqlite");
  auto analysed = analyze_run_directory(main, AnalysisOptions{});
  REQUIRE(analysed.has_value());
  REQUIRE(write_analysis(*analysed, main / "analysis"));
  analysis = std::move(analysed.value());
  return main;
}

template <class Stages>
const ReportStage& stage_named(const Stages& stages, const std::string& name) {
  const auto found = std::find_if(stages.begin(), stages.end(), [&](const ReportStage& one) { return one.name == name; });
  REQUIRE(found != stages.end());
  return *found;
}

struct Metric {
  const char* key;     // report.json's key of the mean
  const char* oracle;  // the oracle's prefix ("sm" for sm_mean, sm_p10, ...)
  SampledFigure ReportStage::*member;
};
constexpr Metric kMetrics[] = {
    {"sampled_sm_active", "sm", &ReportStage::sampled_sm_active},
    {"sampled_tensor_active", "tensor", &ReportStage::sampled_tensor_active},
    {"sampled_dram_read", "read", &ReportStage::sampled_dram_read},
    {"sampled_dram_write", "write", &ReportStage::sampled_dram_write},
};

bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("sampled figures: each metric's record goes through report.json under its flat keys and back") {
  llmprof::testing::TempDir temp;
  AnalysisReport analysis;
  const fs::path main = analysed_run(temp, analysis);
  const auto root = boost::json::parse(read_file(main / "analysis/report.json")).as_object();
  const auto& stages = root.at("stages").as_array();
  const auto written = std::find_if(stages.begin(), stages.end(),
                                    [](const auto& one) { return one.as_object().at("name") == "decode_step"; });
  REQUIRE(written != stages.end());
  const auto& object = written->as_object();
  CHECK_FALSE(object.contains("sampled"));  // the llmprof.report/2 layout: no nested object

  const std::string line = "  decode_step:";
  const ReportStage& made = stage_named(analysis.stages, "decode_step");
  auto model = load_run_report(main);
  REQUIRE(model.has_value());
  const ReportStage& read = stage_named(model->stages, "decode_step");
  CHECK(read.sampled_samples == made.sampled_samples);
  CHECK(double(*read.sampled_samples) == oracle_figure("gpu_metrics", line, "samples"));
  for (const Metric& metric : kMetrics) {
    INFO(metric.key);
    const SampledFigure& figure = made.*metric.member;
    const SampledFigure& back = read.*metric.member;
    const std::string key = metric.key, prefix = metric.oracle;
    const std::pair<const char*, std::optional<double> SampledFigure::*> members[] = {
        {"", &SampledFigure::mean}, {"_p10", &SampledFigure::p10}, {"_p50", &SampledFigure::p50},
        {"_p90", &SampledFigure::p90}};
    for (const auto& [suffix, member] : members) {
      INFO(key + suffix);
      const std::string oracle_key = prefix + (*suffix ? std::string(suffix) : std::string("_mean"));
      REQUIRE((figure.*member).has_value());
      CHECK(*(figure.*member) == Approx(oracle_figure("gpu_metrics", line, oracle_key)).epsilon(1e-8));
      REQUIRE(object.at(key + suffix).is_double());
      // Within an ulp: Boost.JSON's default parse of a number is not correctly rounded (1e-12 covers it).
      CHECK(object.at(key + suffix).as_double() == Approx(*(figure.*member)).epsilon(1e-12));
      REQUIRE((back.*member).has_value());  // read back into the same record
      CHECK(*(back.*member) == Approx(*(figure.*member)).epsilon(1e-12));
    }
  }
  CHECK(read.sampled_mbu == made.sampled_mbu);
  CHECK(*read.sampled_mbu == Approx(oracle_figure("gpu_metrics", line, "mbu")).epsilon(1e-8));
  CHECK(read.sampled_dram_bytes_per_step == made.sampled_dram_bytes_per_step);
  CHECK(read.sampled_note == made.sampled_note);
}

TEST_CASE("sampled figures: a share past its peak in report.json is withheld on reading, the metric's others kept") {
  llmprof::testing::TempDir temp;
  AnalysisReport analysis;
  const fs::path main = analysed_run(temp, analysis);
  const fs::path file = main / "analysis/report.json";
  auto root = boost::json::parse(read_file(file)).as_object();
  auto& stages = root.at("stages").as_array();
  std::size_t index = 0;
  while (index < stages.size() && stages[index].as_object().at("name") != "decode_step") ++index;
  REQUIRE(index < stages.size());
  auto& object = stages[index].as_object();
  object["sampled_sm_active_p90"] = 1.7;  // "170%"
  object["sampled_dram_write"] = -0.2;
  object["sampled_mbu"] = 3.0;
  write_file(file, boost::json::serialize(root));

  auto model = load_run_report(main);
  REQUIRE(model.has_value());
  const ReportStage& read = stage_named(model->stages, "decode_step");
  const ReportStage& made = stage_named(analysis.stages, "decode_step");
  CHECK_FALSE(read.sampled_sm_active.p90.has_value());
  CHECK(read.sampled_sm_active.mean == made.sampled_sm_active.mean);
  CHECK(read.sampled_sm_active.p50 == made.sampled_sm_active.p50);
  CHECK_FALSE(read.sampled_dram_write.mean.has_value());
  CHECK(read.sampled_dram_write.p90 == made.sampled_dram_write.p90);
  CHECK_FALSE(read.sampled_mbu.has_value());
  const std::string from = " cannot be true (a fraction lies in [0, 1]); withheld. It came from analysis/report.json "
                           "stages[" + std::to_string(index) + "]";
  const std::string subject = "report.json stage 'decode_step': ";
  CHECK(any_contains(model->warnings, subject + "sampled_sm_active_p90 = 1.7" + from));
  CHECK(any_contains(model->warnings, subject + "sampled_dram_write = -0.2" + from));
  CHECK(any_contains(model->warnings, subject + "sampled_mbu = 3" + from));
  const std::string markdown = render_markdown(*model);
  CHECK(markdown.find("170%") == std::string::npos);
  CHECK(markdown.find("sampled_sm_active_p90 = 1.7 cannot be true") != std::string::npos);
}

// Samples in a unit a hundred times too large (SM activity as 0..10,000): the shares the analysis makes from them
// break the fraction bound where they are made, and are withheld there with a warning, each on its own: the oracle's
// share x 100 tells which (1% samples stay at 100%, the 14% p90 and the 4.8% mean do not).
TEST_CASE("sampled figures: a share the analysis makes past its peak is withheld where it is made") {
  auto timeline = analyze_timeline(kExport);
  REQUIRE(timeline.has_value());
  auto samples = read_gpu_metric_samples(kExport);
  REQUIRE((samples.has_value() && samples->has_value()));
  GpuMetricSamples scaled = **samples;
  for (double& value : scaled.sm_active) value *= 100;
  AnalysisReport report;
  for (const auto& stage : timeline->stages)
    report.stages.push_back(ReportStage{.name = stage.name, .domain = stage.domain,
                                        .steps = double(stage.instances.size())});
  attach_sampled_utilisation(*timeline, scaled, report);
  const ReportStage& step = stage_named(report.stages, "decode_step");
  const std::string line = "  decode_step:";
  const std::pair<const char*, std::optional<double> SampledFigure::*> members[] = {
      {"sm_mean", &SampledFigure::mean}, {"sm_p10", &SampledFigure::p10}, {"sm_p50", &SampledFigure::p50},
      {"sm_p90", &SampledFigure::p90}};
  const char* suffixes[] = {"", "_p10", "_p50", "_p90"};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& [oracle_key, member] = members[i];
    INFO(oracle_key);
    const double expected = oracle_figure("gpu_metrics", line, oracle_key) * 100;
    const std::string warning =
        "stage 'decode_step': sampled_sm_active" + std::string(suffixes[i]) + " = ";
    if (expected > 1 + 1e-9) {
      CHECK_FALSE((step.sampled_sm_active.*member).has_value());
      CHECK(any_contains(report.warnings, warning));
    } else {
      REQUIRE((step.sampled_sm_active.*member).has_value());
      CHECK(*(step.sampled_sm_active.*member) == Approx(expected).epsilon(1e-8));
      CHECK_FALSE(any_contains(report.warnings, warning));
    }
  }
  // The other metrics were sampled in their unit and stand.
  REQUIRE(step.sampled_dram_read.mean.has_value());
  CHECK(*step.sampled_dram_read.mean == Approx(oracle_figure("gpu_metrics", line, "read_mean")).epsilon(1e-8));
}
