// Per-rank sampling: a rank measured with its own GPU-metrics samples, and a rank that did not sample measured with
// the samples of the capture that sampled its GPU, moved onto its clock; against tests/tools/rank_sampling_expected.py
// over two real captures taken at once on one H200 (tests/data/gpu-metrics/ranks/README.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "llmprof/capture_placement.hpp"
#include "llmprof/cross_rank.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/rank_sampling.hpp"
#include "llmprof/sampled_utilisation.hpp"
#include "llmprof/timeline.hpp"
#include "oracle.hpp"
#include "parse/sqlite_database.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;

namespace {

struct Capture {
  TimelineReport timeline;
  CapturePlacement placement;
  std::optional<GpuMetricSamples> samples;
};

Capture read_capture(const std::string& name) {
  const auto file = data_path("gpu-metrics/ranks/" + name);
  Capture capture;
  auto timeline = analyze_timeline(file);
  REQUIRE(timeline);
  capture.timeline = std::move(timeline.value());
  auto placement = read_capture_placement(file);
  REQUIRE(placement);
  capture.placement = std::move(placement.value());
  auto samples = read_gpu_metric_samples(file);
  REQUIRE(samples);
  capture.samples = std::move(samples.value());
  return capture;
}

void check_against_oracle(const RankSampling& sampling, const std::string& line) {
  const SampledStage& figures = sampling.figures;
  INFO(figures.note);
  CHECK(sampling.clock_shift_ms == Approx(oracle_figure("rank_sampling", line, "shift_ns") / 1e6).epsilon(1e-12));
  CHECK(sampling.steps == std::int64_t(oracle_figure("rank_sampling", line, "steps")));
  CHECK(sampling.steps_outside == std::int64_t(oracle_figure("rank_sampling", line, "outside")));
  CHECK(figures.samples == std::int64_t(oracle_figure("rank_sampling", line, "samples")));
  // Each metric's whole record, as a stage's: the mean and the nearest-rank percentiles.
  for (const auto& [metric, figure] : {std::pair{"sm", &figures.sm_active}, std::pair{"tensor", &figures.tensor_active},
                                       std::pair{"read", &figures.dram_read}, std::pair{"write", &figures.dram_write}}) {
    for (const auto& [statistic, value] : {std::pair{"mean", figure->mean}, std::pair{"p10", figure->p10},
                                           std::pair{"p50", figure->p50}, std::pair{"p90", figure->p90}}) {
      INFO(metric << "_" << statistic);
      REQUIRE(value);
      CHECK(*value == Approx(oracle_figure("rank_sampling", line, std::string(metric) + "_" + statistic))
                          .epsilon(1e-9)
                          .margin(1e-12));
    }
  }
  REQUIRE(figures.mbu);
  CHECK(*figures.mbu == Approx(oracle_figure("rank_sampling", line, "mbu")).epsilon(1e-9));
  REQUIRE(figures.dram_bytes_per_step);
  CHECK(*figures.dram_bytes_per_step == Approx(oracle_figure("rank_sampling", line, "bytes_per_step")).epsilon(1e-9));
}

}  // namespace

TEST_CASE("rank sampling: each capture's clock origin and GPU, as the export records them", "[gpu-metrics]") {
  const Capture sampler = read_capture("r0_samples.sqlite");
  const Capture other = read_capture("r1_shares_gpu.sqlite");
  CHECK(sampler.placement.clock_origin_utc_ns == 1795952593365405226);
  CHECK(other.placement.clock_origin_utc_ns == 1795952592931982128);
  CHECK(sampler.placement.kernel_gpu_buses == std::vector<std::string>{"0000:00:06.0"});
  CHECK(other.placement.kernel_gpu_buses == std::vector<std::string>{"0000:00:06.0"});
  REQUIRE(sampler.samples);
  CHECK(sampler.samples->gpu_bus == "0000:00:06.0");
  CHECK_FALSE(other.samples);  // rank 1's nsys did not sample: only one session may sample a GPU
}

TEST_CASE("rank sampling: a rank's steps from its own samples and from another rank's, as the oracle computes",
          "[gpu-metrics]") {
  const Capture sampler = read_capture("r0_samples.sqlite");
  const Capture other = read_capture("r1_shares_gpu.sqlite");
  const SampledCapture source{0, &*sampler.samples, sampler.placement};
  const RankSampling own = sample_rank_steps(sampler.timeline, "decode_step", 0, sampler.placement, &source, "");
  check_against_oracle(own, "rank 0 (own samples)");
  CHECK_THAT(own.figures.note, Catch::Contains("from its own capture"));
  const RankSampling borrowed = sample_rank_steps(other.timeline, "decode_step", 1, other.placement, &source, "");
  check_against_oracle(borrowed, "rank 1 (rank 0's samples)");
  CHECK(borrowed.source_rank == 0);
  CHECK_THAT(borrowed.figures.note, Catch::Contains("rank 0's capture (the same GPU") &&
                                Catch::Contains("left out 6 of 14 instances, outside the sampling window"));
}

TEST_CASE("rank sampling: a rank's steps are measured as a report stage is, every figure and the note alike",
          "[gpu-metrics]") {
  const Capture sampler = read_capture("r0_samples.sqlite");
  const SampledCapture source{0, &*sampler.samples, sampler.placement};
  const RankSampling rank = sample_rank_steps(sampler.timeline, "decode_step", 0, sampler.placement, &source, "");
  const TimelineStage* steps = sampler.timeline.find_stage("decode_step");
  REQUIRE(steps);
  AnalysisReport report;
  ReportStage& stage = report.stages.emplace_back();
  stage.name = "decode_step";
  stage.steps = double(steps->instances.size());
  attach_sampled_utilisation(sampler.timeline, sampler.samples, report, "from its own capture");
  const SampledStage& figures = rank.figures;
  CHECK(stage.sampled_samples == figures.samples);
  const auto same = [](const SampledFigure& a, const SampledFigure& b) {
    return a.mean == b.mean && a.p10 == b.p10 && a.p50 == b.p50 && a.p90 == b.p90;
  };
  CHECK(same(stage.sampled_sm_active, figures.sm_active));
  CHECK(same(stage.sampled_tensor_active, figures.tensor_active));
  CHECK(same(stage.sampled_dram_read, figures.dram_read));
  CHECK(same(stage.sampled_dram_write, figures.dram_write));
  CHECK(stage.sampled_mbu == figures.mbu);
  CHECK(stage.sampled_dram_bytes_per_step == figures.dram_bytes_per_step);
  CHECK(stage.sampled_note == figures.note);
  CHECK_THAT(figures.note, Catch::StartsWith(std::to_string(figures.samples) + " samples at ") &&
                               Catch::Contains("left out 1 of 14 instances"));
}

TEST_CASE("rank sampling: a figure past its ranks.csv bound is withheld where it is made, the note naming it",
          "[gpu-metrics]") {
  // Rank 0's real samples with DRAM read and write at 90% each: each sample is within 0..100, but together they say
  // DRAM moved 180% of its peak, which cannot be true.
  const Capture sampler = read_capture("r0_samples.sqlite");
  GpuMetricSamples doubled = *sampler.samples;
  for (auto* values : {&doubled.dram_read, &doubled.dram_write})
    for (double& value : *values) value = 90;
  const SampledCapture source{0, &doubled, sampler.placement};
  const RankSampling sampling = sample_rank_steps(sampler.timeline, "decode_step", 0, sampler.placement, &source, "");
  INFO(sampling.figures.note);
  CHECK_FALSE(sampling.figures.mbu);
  CHECK_THAT(sampling.figures.note, Catch::Contains("; rank 0's decode_step steps: sampled_mbu = 1.8 cannot be true"));
  // The other figures stand: the SM share is the real one.
  REQUIRE(sampling.figures.sm_active.mean);
  CHECK(*sampling.figures.sm_active.mean == Approx(oracle_figure("rank_sampling", "rank 0 (own samples)", "sm_mean")));
}

TEST_CASE("rank sampling: figures are withheld, with the reason, when the samples cannot be this rank's GPU's",
          "[gpu-metrics]") {
  const Capture sampler = read_capture("r0_samples.sqlite");
  const Capture other = read_capture("r1_shares_gpu.sqlite");
  const auto withheld = [&](const GpuMetricSamples& samples, const CapturePlacement& source_placement,
                            const CapturePlacement& placement) {
    const SampledCapture source{0, &samples, source_placement};
    const RankSampling sampling = sample_rank_steps(other.timeline, "decode_step", 1, placement, &source, "");
    CHECK_FALSE(sampling.figures.sm_active.mean);
    CHECK_FALSE(sampling.figures.dram_bytes_per_step);
    CHECK(sampling.figures.samples == 0);
    return sampling.figures.note;
  };
  CapturePlacement elsewhere = other.placement;
  elsewhere.kernel_gpu_buses = {"0000:00:07.0"};
  CHECK(withheld(*sampler.samples, sampler.placement, elsewhere) ==
        "withheld: this rank ran on the GPU at 0000:00:07.0, rank 0's capture sampled the one at 0000:00:06.0");
  GpuMetricSamples two_gpus = *sampler.samples;
  two_gpus.other_gpus = 1;
  CHECK_THAT(withheld(two_gpus, sampler.placement, other.placement),
             Catch::StartsWith("withheld: rank 0's capture sampled 2 GPUs and its export does not say which is which"));
  CapturePlacement no_origin = sampler.placement;
  no_origin.clock_origin_utc_ns.reset();
  CHECK_THAT(withheld(*sampler.samples, no_origin, other.placement),
             Catch::StartsWith("withheld: a capture lacks its clock origin"));
  CapturePlacement later = sampler.placement;  // a sampler whose capture began 10 s later: no step overlaps it
  *later.clock_origin_utc_ns += 10'000'000'000;
  CHECK_THAT(withheld(*sampler.samples, later, other.placement),
             Catch::StartsWith("withheld: none of this rank's 14 steps lies wholly inside the sampling window (from rank 0's"));
  SampledCapture shared{0, &*sampler.samples, sampler.placement, {1}};
  const AttributedSamples own_shared = samples_for_rank(0, sampler.placement, &shared, "");
  REQUIRE(own_shared.samples);
  CHECK_FALSE(own_shared.other_capture);
  CHECK(own_shared.origin == "from its own capture (the GPU's counters count every process on it: rank 1 ran on it too)");
  const AttributedSamples moved = samples_for_rank(1, other.placement, &shared, "");
  REQUIRE(moved.samples);
  CHECK(moved.other_capture);
  CHECK(moved.samples->timestamps_ns.front() == sampler.samples->timestamps_ns.front() + 433'423'098);
  const RankSampling none = sample_rank_steps(other.timeline, "decode_step", 1, other.placement, nullptr, "nobody sampled");
  CHECK(none.figures.note == "nobody sampled");
  CHECK_FALSE(none.source_rank);
}

TEST_CASE("rank sampling: ranks.csv and the Across ranks section carry each rank's sampled figures", "[gpu-metrics]") {
  const Capture sampler = read_capture("r0_samples.sqlite");
  const Capture other = read_capture("r1_shares_gpu.sqlite");
  const SampledCapture source{0, &*sampler.samples, sampler.placement};
  CrossRankAnalysis analysis;
  analysis.ranks.resize(2);
  analysis.ranks[0].rank = 0;
  analysis.ranks[0].sampled = sample_rank_steps(sampler.timeline, "decode_step", 0, sampler.placement, &source, "");
  analysis.ranks[1].rank = 1;
  analysis.ranks[1].sampled = sample_rank_steps(other.timeline, "decode_step", 1, other.placement, &source, "");
  const std::string csv = cross_rank_csv(analysis);
  CHECK_THAT(csv, Catch::Contains(",sampled_source_rank,sampled_clock_shift_ms,sampled_steps,sampled_samples,"
                                  "sampled_sm_active,sampled_tensor_active,sampled_mbu,sampled_dram_bytes_per_step\n"));
  CHECK_THAT(csv, Catch::Contains(",0,433.423098,8,2196,"));
  // Read back through the same column table: the sampled figures of each rank, and none invented.
  std::istringstream stream(csv);
  const auto read = read_ranks_csv(stream, "ranks.csv");
  REQUIRE(read);
  REQUIRE(read->ranks.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    REQUIRE(read->ranks[i].sampled);
    const RankSampling& back = *read->ranks[i].sampled;
    const RankSampling& written = *analysis.ranks[i].sampled;
    CHECK(back.source_rank == written.source_rank);
    CHECK(back.steps == written.steps);
    CHECK(back.figures.samples == written.figures.samples);
    const auto same = [](const std::optional<double>& read_back, const std::optional<double>& made) {
      return read_back.has_value() == made.has_value() &&
             (!made || std::abs(*read_back - *made) <= 1e-8 * std::abs(*made));
    };
    CHECK(same(back.figures.sm_active.mean, written.figures.sm_active.mean));
    CHECK(same(back.figures.tensor_active.mean, written.figures.tensor_active.mean));
    CHECK(same(back.figures.mbu, written.figures.mbu));
    CHECK(same(back.figures.dram_bytes_per_step, written.figures.dram_bytes_per_step));
    // The file holds the means alone: no percentile is invented on reading.
    CHECK_FALSE(back.figures.sm_active.p50);
    CHECK_FALSE(back.figures.dram_read.mean);
  }
  const std::string markdown = cross_rank_markdown(analysis);
  CHECK_THAT(markdown, Catch::Contains("**Sampled by the GPU's counters** (each rank's decode_step steps"));
  CHECK_THAT(markdown, Catch::Contains("| 1 | rank 0 | 8 | 2196 | 8.8% |"));
}

TEST_CASE("rank sampling: one bad sample in the sampler's export costs that value, not every rank's figures",
          "[gpu-metrics]") {
  // A copy of rank 0's real export with one SM-active value at 101%: before, the reader dropped all 17,388 values and
  // the sampled section of ranks.md disappeared.
  llmprof::testing::TempDir temp;
  const auto copy = temp.path() / "r0_samples.sqlite";
  std::filesystem::copy_file(data_path("gpu-metrics/ranks/r0_samples.sqlite"), copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    REQUIRE(database->execute("UPDATE GPU_METRICS SET value = 101 WHERE rowid = (SELECT rowid FROM GPU_METRICS WHERE "
                              "metricId = (SELECT metricId FROM TARGET_INFO_GPU_METRICS WHERE metricName LIKE "
                              "'SMs Active%') ORDER BY timestamp, rowid LIMIT 1 OFFSET 2000)"));
  }
  auto samples = read_gpu_metric_samples(copy);
  REQUIRE(samples.has_value());
  REQUIRE(samples->has_value());
  CHECK((*samples)->left_out.out_of_range == 1);
  const Capture sampler = read_capture("r0_samples.sqlite");
  const Capture other = read_capture("r1_shares_gpu.sqlite");
  const SampledCapture source{0, &**samples, sampler.placement};
  for (const auto& [sampling, line] :
       {std::pair{sample_rank_steps(sampler.timeline, "decode_step", 0, sampler.placement, &source, ""),
                  "rank 0 (own samples)"},
        std::pair{sample_rank_steps(other.timeline, "decode_step", 1, other.placement, &source, ""),
                  "rank 1 (rank 0's samples)"}}) {
    INFO(line << ": " << sampling.figures.note);
    CHECK(sampling.steps == std::int64_t(oracle_figure("rank_sampling", line, "steps")));
    CHECK(sampling.figures.samples == std::int64_t(oracle_figure("rank_sampling", line, "samples")));
    REQUIRE(sampling.figures.sm_active.mean.has_value());
    CHECK(*sampling.figures.sm_active.mean == Approx(oracle_figure("rank_sampling", line, "sm_mean")).epsilon(0.01));
    CHECK_THAT(sampling.figures.note, Catch::Contains("1 of ") && Catch::Contains("sampled values left out (1 outside 0..100)"));
  }
}
