// One rule for what a step is (analysis/step_rule.hpp), seen through step kinds, range discovery and the cross-rank
// view. Each case copies a real recording and adds the rows the adversarial round produced: a `decode_batch` nested
// in a `decode_batch`, ranges left open at exit, a kind instance whose step a window's edge cut off, a prefill
// before the bundled example's decode. The expected figures are those of the untouched recording (its oracle:
// tests/tools/step_kinds_expected.py, tests/tools/cross_rank_h200_expected.py) or counted from it by SQL, since the
// added rows are exactly what the rule must set aside.
#include <catch2/catch.hpp>

#include <algorithm>

#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "llmprof/cross_rank.hpp"
#include "llmprof/range_discovery.hpp"
#include "llmprof/step_kinds.hpp"
#include "parse/sqlite_database.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::TempDir;
namespace fs = std::filesystem;

namespace {

fs::path copy_of(const TempDir& directory, const std::string& fixture, const std::string& name) {
  const fs::path copy = directory / name;
  fs::copy_file(data_path(fixture), copy);
  fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
  return copy;
}

void run_sql(const fs::path& file, const std::string& sql) {
  auto database = detail::SqliteDatabase::open_writable(file);
  REQUIRE(database);
  REQUIRE(database->execute(sql));
}

// tests/data/serving/expected.tsv's figures of the engine loop (tests/tools/step_kinds_expected.py).
std::map<std::string, std::string> engine_loop_oracle() {
  std::ifstream in(data_path("serving/expected.tsv"));
  std::map<std::string, std::string> figures;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string file, subject, figure, value;
    std::getline(fields, file, '\t');
    std::getline(fields, subject, '\t');
    std::getline(fields, figure, '\t');
    std::getline(fields, value, '\t');
    if (file == "engine_loop_cpu2022") figures[subject + "/" + figure] = value;
  }
  REQUIRE(!figures.empty());
  return figures;
}

StepKindReport steps_of(const fs::path& sqlite) {
  auto timeline = analyze_timeline(sqlite);
  REQUIRE(timeline);
  auto steps = analyze_step_kinds(timeline.value());
  REQUIRE(steps);
  return *steps;
}

// The untouched recording's steps and kinds: 60 steps, 6 prefill + 6 mixed + 48 decode, with its percentiles.
void check_engine_loop_figures(const StepKindReport& steps) {
  const auto expected = engine_loop_oracle();
  CHECK(std::to_string(steps.steps) == expected.at("steps/count"));
  std::int64_t kinds = 0;
  for (const auto& kind : steps.kinds) {
    INFO(kind.name);
    CHECK(std::to_string(kind.count) == expected.at(kind.name + "/count"));
    CHECK(std::to_string(kind.step_time.p50_ns) == expected.at(kind.name + "/p50_ns"));
    CHECK(std::to_string(kind.step_time.p99_ns) == expected.at(kind.name + "/p99_ns"));
    kinds += kind.count;
  }
  CHECK(steps.kinds.size() == 3);
  CHECK(kinds == steps.steps);
}

const char* kDecodeBatch = "(text = 'decode_batch')";

}  // namespace

TEST_CASE("a decode_batch nested inside another decode_batch is part of that step, not a second one", "[step_rule]") {
  TempDir directory;
  const fs::path copy = copy_of(directory, "serving/engine_loop_cpu2022.sqlite", "nested.sqlite");
  // Inside the first six decode steps, a helper opens `decode_batch` again on the same thread.
  run_sql(copy, std::string("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                            "SELECT start + 1, end - 1, eventType, text, globalTid, domainId FROM NVTX_EVENTS WHERE ") +
                    kDecodeBatch + " ORDER BY start LIMIT 6");
  const StepKindReport steps = steps_of(copy);
  check_engine_loop_figures(steps);  // the kinds summed to 66 of 60 steps before the rule
  CHECK(steps.nested_set_aside == 6);
  const std::string markdown = step_kinds_markdown({steps});
  CHECK_THAT(markdown, Catch::Contains("set aside 6 range instance(s) nested inside another of the same name"));
  CHECK(steps.unclosed_ranges == 0);
}

TEST_CASE("ranges left open at exit are no step, and the report says so once", "[step_rule]") {
  TempDir directory;
  const fs::path copy = copy_of(directory, "serving/engine_loop_cpu2022.sqlite", "unclosed.sqlite");
  // A last scheduler_step and its decode_batch, opened after the loop and never closed (no end in the export).
  run_sql(copy,
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
          "SELECT max(end) + 10, NULL, 59, 'scheduler_step', globalTid, 0 FROM NVTX_EVENTS; "
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
          "SELECT max(start) + 10, NULL, 59, 'decode_batch', globalTid, 0 FROM NVTX_EVENTS;");
  const StepKindReport steps = steps_of(copy);
  check_engine_loop_figures(steps);
  CHECK(steps.unclosed_ranges == 2);
  // Two windows, one line: the rule is said once for the report, not per window or per kind.
  const std::string markdown = step_kinds_markdown({steps, steps});
  CHECK(markdown.find("Steps count only closed, outermost range instances") != std::string::npos);
  const auto first = markdown.find("left open at exit");
  CHECK(first != std::string::npos);
  CHECK(markdown.find("left open at exit", first + 1) == std::string::npos);
  CHECK_THAT(markdown, Catch::Contains("4 range(s) left open at exit"));  // summed over the two windows
  const auto json = boost::json::parse(step_kinds_json({steps})).as_object();
  CHECK(json.at("windows").as_array().at(0).as_object().at("unclosed_ranges").as_int64() == 2);
  // The timeline names them: a user whose `decode` never closed learns which range is missing from the figures.
  const auto timeline = analyze_timeline(copy);
  REQUIRE(timeline.has_value());
  CHECK(timeline->unclosed_range_names == std::vector<std::string>{"`decode_batch` x1", "`scheduler_step` x1"});
  const auto& notes = timeline->validity.notes;
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& note) {
    return note.rfind("2 NVTX ranges never closed inside the capture and are left out of the timeline: `decode_batch` "
                      "x1, `scheduler_step` x1 (left open at the workload's exit",
                      0) == 0;
  }));
}

TEST_CASE("a kind instance whose step a window's edge cut off is no step, and its range stays a kind", "[step_rule]") {
  TempDir directory;
  const fs::path copy = copy_of(directory, "serving/engine_loop_cpu2022.sqlite", "edge.sqlite");
  // A capture window that opens inside a step records its decode_batch but not the scheduler_step around it:
  // here, a decode_batch inside `serve` before the first step (serve opens at 315252641, the first step at
  // 315253963 ns).
  run_sql(copy,
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
          "SELECT 315252700, 315253900, 59, 'decode_batch', globalTid, 0 FROM NVTX_EVENTS WHERE text = 'serve'");
  const StepKindReport steps = steps_of(copy);
  check_engine_loop_figures(steps);  // decode_batch was no kind at all when its first instance decided its parent
}

TEST_CASE("discovery places a range where most of its instances are and gates on no range that misses some",
          "[step_rule]") {
  TempDir directory;
  // The bundled example (llmprof-decode --preset 1b --new-tokens 8 on the H100), recorded gated on `decode`: 8
  // decode steps x 16 layers = 128 `attention` and 128 `mlp` in `decode_step` (SELECT count(*) ... GROUP BY text).
  // Ungated, its prefill comes first with one `attention` and one `mlp` per layer: added here before `decode`.
  const fs::path copy = copy_of(directory, "nsys-sqlite/ex1b8.sqlite", "prefill.sqlite");
  run_sql(copy,
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
          "SELECT 1000000, 12000000, 59, 'prefill', globalTid, 0 FROM NVTX_EVENTS WHERE text = 'decode'; "
          "WITH RECURSIVE layer(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM layer WHERE i < 15) "
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
          "SELECT 1100000 + 600000 * i + 300000 * m.o, 1350000 + 600000 * i + 300000 * m.o, 59, m.name, d.globalTid, 0 "
          "FROM layer, (SELECT 'attention' AS name, 0 AS o UNION ALL SELECT 'mlp', 1) m, "
          "(SELECT globalTid FROM NVTX_EVENTS WHERE text = 'decode') d;");
  // The prefill's attention is where its GPU time goes (prompt 512): 570 µs per layer, launched like the recorded
  // kernel of correlation id 8918 (cudaLaunchKernel), which makes `attention` the range discovery chooses.
  run_sql(
      copy,
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
      "returnValue) SELECT n.start + 1000, n.start + 5000, r.eventClass, r.globalTid, 900000 + n.start / 1000, "
      "r.nameId, 0 FROM NVTX_EVENTS n, CUPTI_ACTIVITY_KIND_RUNTIME r WHERE n.text = 'attention' AND "
      "n.start < 12000000 AND r.correlationId = 8918; "
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, "
      "demangledName, shortName) SELECT n.start + 10000, n.start + 580000, k.deviceId, k.contextId, k.streamId, "
      "900000 + n.start / 1000, k.globalPid, k.demangledName, k.shortName FROM NVTX_EVENTS n, "
      "CUPTI_ACTIVITY_KIND_KERNEL k WHERE n.text = 'attention' AND n.start < 12000000 AND k.correlationId = 8918;");
  auto timeline = analyze_timeline(copy);
  REQUIRE(timeline);
  auto discovery = discover_ranges(timeline.value(), copy);
  REQUIRE(discovery);
  for (const auto& range : discovery->ranges) {
    if (range.name != "attention" && range.name != "mlp") continue;
    INFO(range.name);
    CHECK(range.count == 144);
    CHECK(range.parent == std::optional<std::string>("decode_step"));  // the first instance's parent: prefill
    CHECK(range.parents == std::vector<std::pair<std::string, std::int64_t>>{{"decode_step", 128}, {"prefill", 16}});
  }
  // Listed, and indented, under decode_step (two levels below decode).
  CHECK_THAT(describe_discovery(*discovery),
             Catch::Contains("\n      attention x144 (in decode_step x128, prefill x16)"));
  INFO(describe_discovery(*discovery));
  CHECK(discovery->stage == "attention");
  // Neither `prefill` (16 of 144) nor `decode` (128 of 144) holds every instance: no gate is suggested.
  CHECK(discovery->nvtx_capture.empty());
  CHECK(discovery->capture_range == "none");
}

TEST_CASE("cross-rank steps follow the same rule: a nested decode_step changes no figure of two H200 ranks",
          "[step_rule]") {
  TempDir directory;
  std::vector<RankTimeline> ranks;
  for (int rank : {0, 1}) {
    const std::string name = "r" + std::to_string(rank) + ".sqlite";
    const fs::path copy = copy_of(directory, "cross-rank/h200x2/straggler-5ms/" + name, name);
    // Rank 0 opens decode_step again inside each of its 16 steps; the nested copy also holds the step's kernels.
    if (rank == 0)
      run_sql(copy,
              "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
              "SELECT start + 1, end - 1, eventType, text, globalTid, domainId FROM NVTX_EVENTS "
              "WHERE text = 'decode_step'");
    auto timeline = rank_timeline_from_sqlite(rank, copy);
    REQUIRE(timeline);
    ranks.push_back(timeline.value());
  }
  CrossRankOptions options;
  options.fallback_align_range = "decode";  // as the pipeline sets it for a capture gated on decode
  const CrossRankAnalysis analysis = analyze_ranks(ranks, options);
  const auto expected = boost::json::parse(llmprof::testing::read_file(data_path("cross-rank/h200x2/expected.json")))
                            .as_object()
                            .at("straggler-5ms")
                            .as_object();
  CHECK(analysis.compared_steps == static_cast<std::size_t>(expected.at("steps").as_int64()));
  for (const auto& rank : analysis.ranks) CHECK(rank.steps == analysis.compared_steps);  // rank 0's nested too
  REQUIRE(analysis.latest_rank);
  CHECK(*analysis.latest_rank == expected.at("straggler").as_int64());
  CHECK_THAT(*analysis.latest_lag_ms,
             Catch::Matchers::WithinRel(expected.at("straggler_lag_ms").to_number<double>(), 1e-9));
  CHECK_THAT(*analysis.skew_max_ms, Catch::Matchers::WithinRel(expected.at("skew_max_ms").to_number<double>(), 1e-9));
  CHECK_THAT(cross_rank_markdown(analysis), Catch::Contains("set aside 16 range instance(s) nested"));
}

TEST_CASE("cross-rank steps from nvtx_pushpop_trace follow the rule by thread: nested copies out, other threads in",
          "[step_rule]") {
  const fs::path fixture = data_path("cross-rank");
  TempDir directory;
  std::vector<RankTimeline> plain, added;
  for (int rank : {0, 1}) {
    const std::string name = "r" + std::to_string(rank);
    fs::copy(fixture / name, directory / name);
    auto timeline = rank_timeline_from_nsys_stats(rank, fixture / name);
    REQUIRE(timeline);
    plain.push_back(timeline.value());
  }
  // Rank 0: a decode_step nested in its first one (same TID 4242), and one on another thread (TID 4243) at the
  // same time, which is no nesting: a second thread's step counts.
  {
    std::ofstream csv(directory / "r0/summary_nvtx_pushpop_trace.csv", std::ios::app);
    csv << "1052000000,1060000000,8000000,0,8000000,:decode_step,4242,4242,1,0,90,3,:3:90,decode_step\n"
        << "1052000000,1060000000,8000000,0,8000000,:decode_step,4242,4243,0,0,91,,:91,decode_step\n";
  }
  for (int rank : {0, 1}) {
    auto timeline = rank_timeline_from_nsys_stats(rank, directory / ("r" + std::to_string(rank)));
    REQUIRE(timeline);
    added.push_back(timeline.value());
  }
  CHECK(added[0].nested_set_aside == 1);
  const auto steps_of_rank0 = [](const RankTimeline& rank) {
    return std::count_if(rank.ranges->begin(), rank.ranges->end(),
                         [](const NvtxRangeInstance& range) { return range.name == ":decode_step"; });
  };
  CHECK(steps_of_rank0(added[0]) == steps_of_rank0(plain[0]) + 1);  // the other thread's
  CHECK_THAT(cross_rank_markdown(analyze_ranks(added)), Catch::Contains("set aside 1 range instance(s) nested"));
}
