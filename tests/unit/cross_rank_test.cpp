// The cross-rank view on two ranks whose clocks differ by 7 s (tests/data/cross-rank, written with
// the figures it must give by tests/tools/cross_rank_fixture.py).
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <sstream>

#include "llmprof/cross_rank.hpp"
#include "test_support.hpp"

using Catch::Matchers::WithinRel;
using llmprof::testing::read_file;
namespace fs = std::filesystem;

namespace {

const fs::path fixture = fs::path(LLMPROF_TEST_DATA_DIR) / "cross-rank";

std::vector<llmprof::RankTimeline> fixture_ranks() {
  std::vector<llmprof::RankTimeline> ranks;
  for (int rank : {0, 1}) {
    auto timeline = llmprof::rank_timeline_from_nsys_stats(rank, fixture / ("r" + std::to_string(rank)));
    REQUIRE(timeline);
    ranks.push_back(timeline.value());
  }
  return ranks;
}

double number(const boost::json::value& value) { return value.to_number<double>(); }

}  // namespace

TEST_CASE("cross-rank figures match the independently computed ones") {
  const auto expected = boost::json::parse(read_file(fixture / "expected.json")).as_object();
  const auto analysis = llmprof::analyze_ranks(fixture_ranks());
  REQUIRE(analysis.ranks.size() == 2);
  for (const auto& rank : analysis.ranks) {
    const auto& want = expected.at("ranks").at(std::to_string(rank.rank)).as_object();
    CAPTURE(rank.rank);
    CHECK_THAT(*rank.kernel_time_s, WithinRel(number(want.at("kernel_time_s")), 1e-9));
    CHECK_THAT(*rank.collective_share, WithinRel(number(want.at("collective_share")), 1e-9));
    CHECK_THAT(*rank.comm_compute_overlap, WithinRel(number(want.at("comm_compute_overlap")), 1e-9));
    CHECK(rank.steps == 4);
  }
  REQUIRE(analysis.straggler);
  CHECK(*analysis.straggler == expected.at("straggler").as_int64());
  CHECK_THAT(*analysis.straggler_lag_ms, WithinRel(number(expected.at("straggler_lag_ms")), 1e-9));
  CHECK_THAT(*analysis.skew_median_ms, WithinRel(number(expected.at("skew_median_ms")), 1e-9));
  CHECK_THAT(*analysis.skew_max_ms, WithinRel(number(expected.at("skew_max_ms")), 1e-9));
  CHECK(analysis.compared_steps == 4);
  REQUIRE(analysis.imbalance.size() == 1);
  CHECK(analysis.imbalance[0].figure == "kernel_time_s");
  CHECK_THAT(analysis.imbalance[0].ratio, WithinRel(number(expected.at("kernel_time_imbalance")), 1e-9));
  CHECK(analysis.imbalance[0].max_rank == 1);
  CHECK(analysis.not_computed.empty());
}

TEST_CASE("ranks.csv has one row per rank and the section names the straggler and the alignment") {
  const auto analysis = llmprof::analyze_ranks(fixture_ranks());
  std::istringstream csv(llmprof::cross_rank_csv(analysis));
  std::string header, first, second, extra;
  std::getline(csv, header);
  std::getline(csv, first);
  std::getline(csv, second);
  CHECK_FALSE(std::getline(csv, extra));
  CHECK(header ==
        "rank,stage1_wall_s,nsys_wall_s,kernel_time_s,collective_kernel_time_s,collective_share,comm_compute_overlap,"
        "steps,"
        "mean_step_start_lag_ms");
  CHECK(first.rfind("0,,,0.036,0.008,", 0) == 0);
  CHECK(second.rfind("1,,,0.04,0.008,0.2,0.5,4,3.5", 0) == 0);
  const std::string markdown = llmprof::cross_rank_markdown(analysis);
  CHECK_THAT(markdown,
             Catch::Contains("**Straggler**: rank 1, whose steps start 3.5 ms after the earliest rank's on average "
                             "(4 steps, aligned on the end of the first 'prefill' range)"));
  CHECK_THAT(markdown, Catch::Contains("median 3.5 ms, max 5 ms"));
}

TEST_CASE("without traces the per-rank sums remain and the missing figures are named") {
  std::vector<llmprof::RankTimeline> ranks = fixture_ranks();
  for (auto& rank : ranks) {
    rank.ranges.reset();
    rank.kernels.reset();
    rank.stage1_wall_s = rank.rank == 0 ? 2.0 : 3.0;
  }
  const auto analysis = llmprof::analyze_ranks(ranks);
  CHECK_FALSE(analysis.straggler);
  REQUIRE(analysis.not_computed.size() == 2);
  CHECK(analysis.not_computed[0] == "straggler and skew: rank 0 has no NVTX range trace (nvtx_pushpop_trace)");
  CHECK_THAT(analysis.not_computed[1], Catch::StartsWith("communication/computation overlap"));
  REQUIRE(analysis.imbalance.size() == 2);
  CHECK(analysis.imbalance[0].figure == "stage1_wall_s");
  CHECK_THAT(analysis.imbalance[0].ratio, WithinRel(3.0 / 2.5, 1e-12));
}

TEST_CASE("a rank without the alignment range leaves the skew uncomputed instead of comparing raw clocks") {
  std::vector<llmprof::RankTimeline> ranks = fixture_ranks();
  std::erase_if(*ranks[1].ranges, [](const auto& range) { return range.name == ":prefill"; });
  const auto analysis = llmprof::analyze_ranks(ranks);
  CHECK_FALSE(analysis.skew_max_ms);
  REQUIRE_FALSE(analysis.not_computed.empty());
  CHECK(analysis.not_computed[0] == "straggler and skew: rank 1 emitted no 'prefill' range to align on");
}
