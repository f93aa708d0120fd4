// The cross-rank view on two ranks whose clocks differ by 7 s: from `nsys stats` tables
// (tests/data/cross-rank, tests/tools/cross_rank_fixture.py) and from SQLite exports whose CPU and GPU
// tell different stories (tests/data/cross-rank/sqlite, tests/tools/cross_rank_sqlite_fixture.py); both
// scripts write the figures the code must give, computed independently.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <sstream>

#include "llmprof/cross_rank.hpp"
#include "llmprof/timeline.hpp"
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

// Kernel time, NCCL share and overlap of every rank against the oracle's.
void check_rank_figures(const llmprof::CrossRankAnalysis& analysis, const boost::json::object& expected) {
  for (const auto& rank : analysis.ranks) {
    const auto& want = expected.at("ranks").at(std::to_string(rank.rank)).as_object();
    CAPTURE(rank.rank);
    CHECK_THAT(*rank.kernel_time_s, WithinRel(number(want.at("kernel_time_s")), 1e-9));
    CHECK_THAT(*rank.collective_share, WithinRel(number(want.at("collective_share")), 1e-9));
    CHECK_THAT(*rank.comm_compute_overlap, WithinRel(number(want.at("comm_compute_overlap")), 1e-9));
  }
}

// Straggler, lag, skew and step count against the oracle's figures for one comparison.
void check_steps(const llmprof::CrossRankAnalysis& analysis, const boost::json::object& want) {
  REQUIRE(analysis.straggler);
  CHECK(*analysis.straggler == want.at("straggler").as_int64());
  CHECK_THAT(*analysis.straggler_lag_ms, WithinRel(number(want.at("straggler_lag_ms")), 1e-9));
  CHECK_THAT(*analysis.skew_median_ms, WithinRel(number(want.at("skew_median_ms")), 1e-9));
  CHECK_THAT(*analysis.skew_max_ms, WithinRel(number(want.at("skew_max_ms")), 1e-9));
  CHECK(analysis.compared_steps == static_cast<std::size_t>(want.at("steps").as_int64()));
}

}  // namespace

TEST_CASE("cross-rank figures match the independently computed ones") {
  const auto expected = boost::json::parse(read_file(fixture / "expected.json")).as_object();
  const auto analysis = llmprof::analyze_ranks(fixture_ranks());
  REQUIRE(analysis.ranks.size() == 2);
  check_rank_figures(analysis, expected);
  for (const auto& rank : analysis.ranks)
    CHECK(rank.steps == static_cast<std::size_t>(expected.at("steps").as_int64()));
  check_steps(analysis, expected);
  CHECK(analysis.alignment == "end of the first collective (NCCL) kernel");
  REQUIRE(analysis.imbalance.size() == 1);
  CHECK(analysis.imbalance[0].figure == "kernel_time_s");
  CHECK_THAT(analysis.imbalance[0].ratio, WithinRel(number(expected.at("kernel_time_imbalance")), 1e-9));
  CHECK(analysis.imbalance[0].max_rank == expected.at("kernel_time_max_rank").as_int64());
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
        "steps,mean_step_start_lag_ms,step_start_basis");
  CHECK(first.rfind("0,,,0.05,0.022,0.44,", 0) == 0);
  CHECK(second.rfind("1,,,0.04,0.008,0.2,0.5,3,4,CPU", 0) == 0);
  const std::string markdown = llmprof::cross_rank_markdown(analysis);
  CHECK_THAT(
      markdown,
      Catch::Contains(
          "**Straggler**: rank 1, whose steps start 4 ms after the earliest rank's on average, 20% of the median "
          "step (20 ms) "
          "(3 steps, CPU start of each step's range, aligned on the end of the first collective (NCCL) "
          "kernel)"));
  CHECK_THAT(markdown, Catch::Contains("median 4 ms, max 5 ms"));
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
  CHECK(analysis.not_computed[0] ==
        "straggler and skew: rank 0 has no NVTX range trace (nvtx_pushpop_trace or SQLite export)");
  CHECK_THAT(analysis.not_computed[1], Catch::StartsWith("communication/computation overlap"));
  REQUIRE(analysis.imbalance.size() == 2);
  CHECK(analysis.imbalance[0].figure == "stage1_wall_s");
  CHECK_THAT(analysis.imbalance[0].ratio, WithinRel(3.0 / 2.5, 1e-12));
}

TEST_CASE("a rank without the alignment range leaves the skew uncomputed instead of comparing raw clocks") {
  std::vector<llmprof::RankTimeline> ranks = fixture_ranks();
  std::erase_if(*ranks[1].ranges, [](const auto& range) { return range.name == ":prefill"; });
  ranks[1].kernels.reset();  // and no collective kernel to align on
  const auto analysis = llmprof::analyze_ranks(ranks);
  CHECK_FALSE(analysis.skew_max_ms);
  REQUIRE_FALSE(analysis.not_computed.empty());
  CHECK(analysis.not_computed[0] == "straggler and skew: rank 1 emitted no 'prefill' range to align on");
}

namespace {

std::vector<llmprof::RankTimeline> sqlite_ranks() {
  std::vector<llmprof::RankTimeline> ranks;
  for (int rank : {0, 1}) {
    auto timeline =
        llmprof::rank_timeline_from_sqlite(rank, fixture / "sqlite" / ("r" + std::to_string(rank) + ".sqlite"));
    REQUIRE(timeline);
    ranks.push_back(timeline.value());
  }
  return ranks;
}

}  // namespace

TEST_CASE("from SQLite exports a rank whose CPU runs ahead is judged by when its steps start on the GPU") {
  const auto expected = boost::json::parse(read_file(fixture / "sqlite/expected.json")).as_object();
  const auto analysis = llmprof::analyze_ranks(sqlite_ranks());
  CHECK(analysis.step_basis == "GPU");
  CHECK(analysis.alignment == "end of the first collective (NCCL) kernel");
  check_steps(analysis, expected.at("gpu").as_object());
  check_rank_figures(analysis, expected);
  CHECK_THAT(llmprof::cross_rank_markdown(analysis),
             Catch::Contains("GPU start of each step's first GPU work, aligned on the end of the first collective"));
}

TEST_CASE("without the GPU side of every rank's steps the CPU starts are compared, and the report says so") {
  const auto expected = boost::json::parse(read_file(fixture / "sqlite/expected.json")).as_object();
  std::vector<llmprof::RankTimeline> ranks = sqlite_ranks();
  ranks[1].gpu_ranges.reset();  // e.g. a CPU-only rank: no GPU side and no collective kernel to align on
  ranks[1].kernels.reset();
  const auto analysis = llmprof::analyze_ranks(ranks);
  CHECK(analysis.step_basis == "CPU");
  check_steps(analysis, expected.at("cpu").as_object());
  CHECK_THAT(llmprof::cross_rank_markdown(analysis), Catch::Contains("CPU start of each step's range"));
  CHECK(analysis.alignment == "end of the first 'prefill' range");
}

TEST_CASE("a SQLite file that is not an nsys export is an error naming it") {
  const fs::path not_export = fixture / "expected.json";
  const auto timeline = llmprof::rank_timeline_from_sqlite(0, not_export);
  REQUIRE_FALSE(timeline);
  CHECK_THAT(timeline.error().describe(), Catch::Contains("expected.json"));
}

TEST_CASE("a capture gated on decode is aligned on the start of the gate range, and the report names it") {
  const auto expected = boost::json::parse(read_file(fixture / "sqlite/expected.json")).as_object();
  std::vector<llmprof::RankTimeline> ranks = sqlite_ranks();
  for (auto& rank : ranks) {
    std::erase_if(*rank.ranges, [](const auto& range) { return range.name == "prefill"; });
    rank.kernels.reset();  // no collective kernel either (CPU-only ranks)
    rank.gpu_ranges.reset();
  }
  CHECK_FALSE(llmprof::analyze_ranks(ranks).straggler);  // no prefill, no fallback: not computed
  llmprof::CrossRankOptions options;
  options.fallback_align_range = "decode";
  const auto analysis = llmprof::analyze_ranks(ranks, options);
  // The fixture opens `decode` where prefill ends, so the figures are those aligned on prefill.
  check_steps(analysis, expected.at("cpu").as_object());
  CHECK(analysis.alignment == "start of the first 'decode' range");
}

namespace {

llmprof::CrossRankAnalysis h200_run(const std::string& run) {
  std::vector<llmprof::RankTimeline> ranks;
  for (int rank : {0, 1}) {
    auto timeline =
        llmprof::rank_timeline_from_sqlite(rank, fixture / "h200x2" / run / ("r" + std::to_string(rank) + ".sqlite"));
    REQUIRE(timeline);
    ranks.push_back(timeline.value());
  }
  llmprof::CrossRankOptions options;
  options.fallback_align_range = "decode";  // as the pipeline sets it for a capture gated on decode
  return llmprof::analyze_ranks(ranks, options);
}

void check_h200_figures(const llmprof::CrossRankAnalysis& analysis, const boost::json::object& want) {
  CHECK(analysis.step_basis == "GPU");
  CHECK(analysis.alignment == "end of the first collective (NCCL) kernel");
  CHECK(analysis.compared_steps == static_cast<std::size_t>(want.at("steps").as_int64()));
  REQUIRE(analysis.latest_rank);
  CHECK(*analysis.latest_rank == want.at("straggler").as_int64());
  CHECK_THAT(*analysis.latest_lag_ms, WithinRel(number(want.at("straggler_lag_ms")), 1e-9));
  CHECK_THAT(*analysis.step_period_ms, WithinRel(number(want.at("step_period_ms")), 1e-9));
  CHECK_THAT(*analysis.skew_median_ms, WithinRel(number(want.at("skew_median_ms")), 1e-9));
  CHECK_THAT(*analysis.skew_max_ms, WithinRel(number(want.at("skew_max_ms")), 1e-9));
  for (const auto& rank : analysis.ranks) {
    const auto& figures = want.at("ranks").at(std::to_string(rank.rank)).as_object();
    CAPTURE(rank.rank);
    CHECK_THAT(*rank.kernel_time_s, WithinRel(number(figures.at("kernel_time_s")), 1e-9));
    CHECK_THAT(*rank.collective_share, WithinRel(number(figures.at("collective_share")), 1e-9));
  }
}

}  // namespace

// Real captures of tensor-parallel decode on two H200s with NCCL (tests/data/cross-rank/h200x2, figures from
// tests/tools/cross_rank_h200_expected.py).
TEST_CASE("two H200s: a rank that sleeps 5 ms before each step is named the straggler, the delay recovered") {
  const auto expected = boost::json::parse(read_file(fixture / "h200x2/expected.json")).as_object();
  const auto analysis = h200_run("straggler-5ms");
  check_h200_figures(analysis, expected.at("straggler-5ms").as_object());
  REQUIRE(analysis.straggler);
  CHECK(*analysis.straggler == 1);
  CHECK_THAT(*analysis.straggler_lag_ms, WithinRel(5.0, 0.2));
  CHECK_THAT(llmprof::cross_rank_markdown(analysis), Catch::Contains("- **Straggler**: rank 1, whose steps start"));
}

TEST_CASE("two H200s: without an injected delay no rank is named the straggler") {
  const auto expected = boost::json::parse(read_file(fixture / "h200x2/expected.json")).as_object();
  const auto analysis = h200_run("no-straggler");
  check_h200_figures(analysis, expected.at("no-straggler").as_object());
  CHECK_FALSE(analysis.straggler);
  CHECK(*analysis.latest_lag_ms < llmprof::kStragglerStepShare * *analysis.step_period_ms);
  CHECK_THAT(llmprof::cross_rank_markdown(analysis), Catch::Contains("- **No straggler**: the latest rank, rank "));
}

TEST_CASE("two H200s: a decode step busy mostly in NCCL kernels is 'waiting on collectives', not GPU-bound") {
  const auto expected = boost::json::parse(read_file(fixture / "h200x2/expected.json")).as_object();
  // Rank 0 of the straggler capture waits for rank 1 in every all-reduce.
  const auto timeline = llmprof::analyze_timeline(fixture / "h200x2/straggler-5ms/r0.sqlite");
  REQUIRE(timeline);
  const llmprof::TimelineStage* step = timeline->find_stage("decode_step");
  REQUIRE(step != nullptr);
  CHECK(step->collective_time_ns ==
        expected.at("straggler-5ms").at("ranks").at("0").at("decode_step_collective_ns").as_int64());
  CHECK(2 * step->collective_time_ns >= step->gpu_busy_ns);
  CHECK_THAT(step->verdict, Catch::StartsWith("waiting on collectives: GPU busy "));
  CHECK_THAT(step->verdict, Catch::Contains("of it in collective (NCCL) kernels"));
}

TEST_CASE("ranks.csv reads back into the figures it was written from, through the one column table") {
  const auto analysis = llmprof::analyze_ranks(fixture_ranks());
  std::istringstream csv(llmprof::cross_rank_csv(analysis));
  const auto read = llmprof::read_ranks_csv(csv, "ranks.csv");
  REQUIRE(read);
  CHECK(read->step_basis == analysis.step_basis);
  REQUIRE(read->ranks.size() == analysis.ranks.size());
  const auto same = [](const std::optional<double>& a, const std::optional<double>& b) {
    return a.has_value() == b.has_value() && (!a || std::abs(*a - *b) <= 1e-9 * std::max(1.0, std::abs(*b)));
  };
  for (std::size_t i = 0; i < read->ranks.size(); ++i) {
    const auto& back = read->ranks[i];
    const auto& written = analysis.ranks[i];
    CHECK(back.rank == written.rank);
    CHECK(back.steps == written.steps);
    CHECK(same(back.stage1_wall_s, written.stage1_wall_s));
    CHECK(same(back.kernel_time_s, written.kernel_time_s));
    CHECK(same(back.collective_share, written.collective_share));
    CHECK(same(back.comm_compute_overlap, written.comm_compute_overlap));
    CHECK(same(back.mean_step_start_lag_ms, written.mean_step_start_lag_ms));
    CHECK_FALSE(back.sampled);  // nothing sampled: no sampled columns, and none invented on reading
  }
}

TEST_CASE("ranks.csv: a cell that is not a number, or a missing column, is an error naming the file, line and "
          "column") {
  std::istringstream bad_cell(
      "rank,stage1_wall_s,nsys_wall_s,kernel_time_s,collective_kernel_time_s,collective_share,comm_compute_overlap,"
      "steps,mean_step_start_lag_ms,step_start_basis\n0,,,0.05,0.022,0.44,,3,0,CPU\n1,,,fast,0.008,0.2,0.5,3,4,CPU\n");
  const auto cell = llmprof::read_ranks_csv(bad_cell, "run/analysis/ranks.csv");
  REQUIRE_FALSE(cell);
  CHECK_THAT(cell.error().message, Catch::Contains("run/analysis/ranks.csv:3"));
  CHECK_THAT(cell.error().message, Catch::Contains("kernel_time_s"));
  std::istringstream no_lag("rank,stage1_wall_s,nsys_wall_s,kernel_time_s,collective_kernel_time_s,collective_share,"
                            "comm_compute_overlap,steps,step_start_basis\n0,,,0.05,0.022,0.44,,3,CPU\n");
  const auto column = llmprof::read_ranks_csv(no_lag, "ranks.csv");
  REQUIRE_FALSE(column);
  CHECK_THAT(column.error().message, Catch::Contains("mean_step_start_lag_ms"));
}

TEST_CASE("every ranks.csv column is documented in docs/report-json.md") {
  llmprof::CrossRankAnalysis analysis;
  analysis.ranks.resize(1);
  analysis.ranks[0].sampled.emplace();  // so the sampled columns are written too
  const std::string csv = llmprof::cross_rank_csv(analysis);
  const std::string docs = read_file(std::filesystem::path(LLMPROF_SOURCE_DIR) / "docs" / "report-json.md");
  std::istringstream header(csv.substr(0, csv.find('\n')));
  std::string column;
  int columns = 0;
  while (std::getline(header, column, ',')) {
    ++columns;
    INFO(column);
    CHECK(docs.find("`" + column + "`") != std::string::npos);
  }
  CHECK(columns == 18);
}
