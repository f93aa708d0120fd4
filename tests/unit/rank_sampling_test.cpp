// Per-rank sampling: a rank measured with its own GPU-metrics samples, and a rank that did not sample measured with
// the samples of the capture that sampled its GPU, moved onto its clock; against tests/tools/rank_sampling_expected.py
// over two real captures taken at once on one H200 (tests/data/gpu-metrics/ranks/README.md).
#include <catch2/catch.hpp>
#include <sstream>

#include <filesystem>

#include "llmprof/capture_placement.hpp"
#include "llmprof/cross_rank.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/rank_sampling.hpp"
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
  INFO(sampling.note);
  CHECK(sampling.clock_shift_ms == Approx(oracle_figure("rank_sampling", line, "shift_ns") / 1e6).epsilon(1e-12));
  CHECK(sampling.steps == std::int64_t(oracle_figure("rank_sampling", line, "steps")));
  CHECK(sampling.steps_outside == std::int64_t(oracle_figure("rank_sampling", line, "outside")));
  CHECK(sampling.samples == std::int64_t(oracle_figure("rank_sampling", line, "samples")));
  REQUIRE(sampling.sm_active);
  CHECK(*sampling.sm_active == Approx(oracle_figure("rank_sampling", line, "sm_mean")).epsilon(1e-9));
  REQUIRE(sampling.tensor_active);
  CHECK(*sampling.tensor_active == Approx(oracle_figure("rank_sampling", line, "tensor_mean")).epsilon(1e-9));
  REQUIRE(sampling.mbu);
  CHECK(*sampling.mbu == Approx(oracle_figure("rank_sampling", line, "mbu")).epsilon(1e-9));
  REQUIRE(sampling.dram_bytes_per_step);
  CHECK(*sampling.dram_bytes_per_step == Approx(oracle_figure("rank_sampling", line, "bytes_per_step")).epsilon(1e-9));
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
  CHECK_THAT(own.note, Catch::Contains("from its own capture"));
  const RankSampling borrowed = sample_rank_steps(other.timeline, "decode_step", 1, other.placement, &source, "");
  check_against_oracle(borrowed, "rank 1 (rank 0's samples)");
  CHECK(borrowed.source_rank == 0);
  CHECK_THAT(borrowed.note, Catch::Contains("rank 0's capture (the same GPU") &&
                                Catch::Contains("left out 6 of 14 instances, outside the sampling window"));
}

TEST_CASE("rank sampling: figures are withheld, with the reason, when the samples cannot be this rank's GPU's",
          "[gpu-metrics]") {
  const Capture sampler = read_capture("r0_samples.sqlite");
  const Capture other = read_capture("r1_shares_gpu.sqlite");
  const auto withheld = [&](const GpuMetricSamples& samples, const CapturePlacement& source_placement,
                            const CapturePlacement& placement) {
    const SampledCapture source{0, &samples, source_placement};
    const RankSampling sampling = sample_rank_steps(other.timeline, "decode_step", 1, placement, &source, "");
    CHECK_FALSE(sampling.sm_active);
    CHECK_FALSE(sampling.dram_bytes_per_step);
    CHECK(sampling.samples == 0);
    return sampling.note;
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
  CHECK(none.note == "nobody sampled");
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
    CHECK(back.samples == written.samples);
    CHECK(back.sm_active.has_value() == written.sm_active.has_value());
    if (back.sm_active) CHECK_THAT(*back.sm_active, Catch::Matchers::WithinRel(*written.sm_active, 1e-8));
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
    INFO(line << ": " << sampling.note);
    CHECK(sampling.steps == std::int64_t(oracle_figure("rank_sampling", line, "steps")));
    CHECK(sampling.samples == std::int64_t(oracle_figure("rank_sampling", line, "samples")));
    REQUIRE(sampling.sm_active.has_value());
    CHECK(*sampling.sm_active == Approx(oracle_figure("rank_sampling", line, "sm_mean")).epsilon(0.01));
    CHECK_THAT(sampling.note, Catch::Contains("1 of ") && Catch::Contains("sampled values left out (1 outside 0..100)"));
  }
}
