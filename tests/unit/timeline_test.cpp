// The timeline engine on real nsys SQLite exports (H100, nsys 2025.3; a CPU program under nsys 2022.4).
// Expected figures: tests/data/nsys-sqlite/expected.tsv, written by tests/tools/timeline_expected.py
// (Python sqlite3, a different algorithm, no code shared with libllmprof); fixtures trimmed from
// the H100 recordings by tests/tools/trim_nsys_sqlite.py (same rows for engine and oracle).
#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "llmprof/analysis.hpp"
#include "llmprof/report.hpp"
#include "llmprof/timeline.hpp"
#include "rundir/timeline_record_json.hpp"
#include "llmprof/percent.hpp"
#include "oracle.hpp"
#include "core/json_fields.hpp"
#include "parse/sqlite_database.hpp"
#include "test_support.hpp"

using Catch::Detail::Approx;
using llmprof::analyze_timeline;
using llmprof::TimelineReport;
using llmprof::TimelineStage;
using llmprof::testing::data_path;

namespace {

std::filesystem::path fixture(const std::string& name) { return data_path("nsys-sqlite/" + name + ".sqlite"); }

const TimelineReport& report_of(const std::string& name) {
  static std::map<std::string, TimelineReport> cache;
  auto found = cache.find(name);
  if (found != cache.end()) return found->second;
  auto report = analyze_timeline(fixture(name));
  if (!report) FAIL(report.error().describe());
  return cache.emplace(name, std::move(*report)).first->second;
}

const TimelineStage& stage_of(const std::string& file, const std::string& stage) {
  const auto* found = report_of(file).find_stage(stage);
  if (found == nullptr) FAIL("no stage " << stage << " in " << file);
  return *found;
}

// The figure named in expected.tsv, read from the engine's stage.
std::optional<double> engine_figure(const TimelineStage& stage, const std::string& figure) {
  const std::map<std::string, double> figures{
      {"count", stage.cpu_duration.count},
      {"total_ns", stage.cpu_duration.total_ns},
      {"mean_ns", stage.cpu_duration.mean_ns},
      {"p50_ns", stage.cpu_duration.p50_ns},
      {"p90_ns", stage.cpu_duration.p90_ns},
      {"p99_ns", stage.cpu_duration.p99_ns},
      {"max_ns", stage.cpu_duration.max_ns},
      {"gpu_busy_ns", stage.gpu_busy_ns},
      {"active_ns", stage.active_ns},
      {"launch_api_ns", stage.launch_api_ns},
      {"sync_api_ns", stage.sync_api_ns},
      {"launches", stage.loss.launches},
      {"launches_without_record", stage.loss.launches_without_record},
      {"graph_launches", stage.loss.graph_launches},
      {"graph_launches_without_record", stage.loss.graph_launches_without_record},
      {"graph_executions", stage.graph_executions},
      {"gpu_time_ns", stage.gpu_time_ns},
      {"graph_time_ns", stage.graph_time_ns},
      {"warmup_instances", static_cast<double>(stage.warmup_instances.size())},
      {"steady_gpu_busy_mean_ns", stage.steady_gpu_busy.mean_ns},
      {"steady_gpu_busy_count", stage.steady_gpu_busy.count}};
  if (figure == "gpu_busy_fraction") return stage.gpu_busy_fraction;
  if (figure == "top_kernel_count" && !stage.kernels.empty()) return stage.kernels.front().count;
  if (figure == "top_kernel_total_ns" && !stage.kernels.empty()) return stage.kernels.front().total_ns;
  if (figure == "top_kernel_from_graph" && !stage.kernels.empty()) return stage.kernels.front().from_graph ? 1 : 0;
  auto found = figures.find(figure);
  if (found == figures.end()) return std::nullopt;
  return found->second;
}

}  // namespace

TEST_CASE("timeline: every stage figure matches the independent Python computation", "[timeline]") {
  std::ifstream expected(data_path("nsys-sqlite/expected.tsv"));
  REQUIRE(expected);
  std::string line;
  int compared = 0;
  while (std::getline(expected, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string file, stage, figure, value;
    std::getline(fields, file, '\t');
    std::getline(fields, stage, '\t');
    std::getline(fields, figure, '\t');
    std::getline(fields, value, '\t');
    INFO(file << " " << stage << " " << figure << " expected " << value);
    const auto& engine_stage = stage_of(file, stage);
    if (figure == "top_kernel") {
      REQUIRE_FALSE(engine_stage.kernels.empty());
      CHECK(engine_stage.kernels.front().name == value);
    } else if (figure == "graph_kernel_names") {
      std::size_t from_graph = 0;
      for (const auto& kernel : engine_stage.kernels) from_graph += kernel.from_graph ? 1 : 0;
      // The engine lists the top kernels_per_stage (10) kernels only.
      CHECK(from_graph == std::min<std::size_t>(std::stoul(value), engine_stage.kernels.size()));
    } else {
      const auto actual = engine_figure(engine_stage, figure);
      REQUIRE(actual.has_value());
      CHECK(*actual == Approx(std::stod(value)).epsilon(1e-12));
    }
    ++compared;
  }
  CHECK(compared > 400);
}

TEST_CASE("timeline: graph capture: decode counts the graph executions, is not host-bound, reports the loss",
          "[timeline][graphs]") {
  const auto& report = report_of("graphtrace");
  CHECK(report.graph_trace == "graph");
  const auto& decode = stage_of("graphtrace", "decode");
  // 15 graph executions of 12,525,437 ns in total (fixture README) are GPU work of decode.
  CHECK(decode.graph_executions == 15);
  CHECK(decode.graph_time_ns == 12525437);
  CHECK(decode.gpu_busy_ns >= decode.graph_time_ns);
  CHECK(decode.mostly_graphs());
  CHECK(decode.verdict.find("host/launch-bound") == std::string::npos);
  CHECK(decode.verdict.find("CUDA graphs, fused") == std::string::npos);
  CHECK_FALSE(decode.gpu_busy_fraction.has_value());  // partial: no busy fraction from lost work
  CHECK_FALSE(decode.headroom.has_value());
  CHECK(decode.partial());
  REQUIRE(report.validity.capture_losses.size() == 1);  // decode_step's loss is inside decode's
  const auto& loss = report.validity.capture_losses.front();
  CHECK(loss.find("49 of 64 graph launches inside `decode` have no GPU record") == 0);
  CHECK(loss.find("Synchronise") != std::string::npos);
  CHECK(report.validity.partial_capture);
  REQUIRE(report.validity.graph_hidden.has_value());
  CHECK(report.validity.graph_hidden->find("15 CUDA graph executions") == 0);
  // The steady state sets the capture-time steps aside; a recorded step is one 0.835 ms replay.
  const auto& step = stage_of("graphtrace", "decode_step");
  CHECK(step.warmup_instances == std::vector<std::size_t>{0, 1});
  CHECK(step.steady_gpu_busy.mean_ns == Approx(0.835e6).epsilon(0.02));
  CHECK(step.verdict.find("host/launch-bound") == std::string::npos);
}

TEST_CASE("timeline: node capture lists the graph kernels and attributes them to decode", "[timeline][graphs]") {
  const auto& report = report_of("nodetrace");
  CHECK(report.graph_trace == "node");
  const auto& decode = stage_of("nodetrace", "decode");
  REQUIRE(decode.kernels.size() == 10);
  for (const auto& kernel : decode.kernels) CHECK(kernel.from_graph);
  CHECK(decode.kernels.front().name.find("nvjet_sm90") == 0);
  // nvtx_kern_sum attributes 31.9 ms of kernel time to decode (fixture README); graph nodes are most of it.
  CHECK(decode.graph_time_ns == Approx(31.9e6).epsilon(0.01));
  CHECK(decode.mostly_graphs());
  CHECK(decode.verdict.find("host/launch-bound") == std::string::npos);
  CHECK(decode.loss.graph_launches == 64);
}

TEST_CASE("timeline: eager decode is host-bound and its headroom predicts the graph step time",
          "[timeline][headroom]") {
  const auto& step = stage_of("eager", "decode_step");
  CHECK(step.verdict.find("host/launch-bound") == 0);
  REQUIRE(step.gpu_busy_fraction.has_value());
  CHECK(*step.gpu_busy_fraction < 0.1);
  REQUIRE(step.headroom.has_value());
  // What a decode step costs without launch overhead: the graph replays really took 0.835 ms.
  CHECK(step.headroom->predicted_step_ns == Approx(0.835e6).epsilon(0.15));
  CHECK(step.headroom->predicted_steps_per_s == Approx(1e9 / step.headroom->predicted_step_ns));
  CHECK(step.headroom->speedup > 10);
  CHECK(step.idle.total_ns() > 0);
  CHECK(step.idle.host_launching_ns + step.idle.nothing_launched_ns == step.idle.total_ns());  // never synchronises
  CHECK_FALSE(report_of("eager").validity.partial_capture);
  CHECK(report_of("eager").validity.capture_losses.empty());
}

TEST_CASE("timeline: the sample stage is no longer GPU-bound 100%", "[timeline]") {
  const auto& sample = stage_of("ex1b8", "sample");
  REQUIRE(sample.gpu_busy_fraction.has_value());
  CHECK(*sample.gpu_busy_fraction < 0.5);
  CHECK(sample.verdict.find("GPU-bound") == std::string::npos);
  // Its 8 instances are spread over decode: the span is ~148 ms, the time they were open far less.
  CHECK(sample.span_ns > 100 * sample.active_ns);
}

// Two ranks in one capture reuse correlation ids (tests/tools/make_two_process_sqlite.py): rank 1's
// launches come first and its kernels are slower, so a join on the id alone gives rank 0 rank 1's
// kernels and hides rank 1's lost launches behind rank 0's records of the same ids.
TEST_CASE("timeline: GPU rows join their launch within their own process (2022.4 and 2025.3 schemas)",
          "[timeline][ranks]") {
  for (const std::string file : {"twoproc2022", "twoproc2025"}) {
    INFO(file);
    const auto& rank0 = stage_of(file, "rank0_step");
    const auto& rank1 = stage_of(file, "rank1_step");
    REQUIRE_FALSE(rank0.kernels.empty());
    REQUIRE_FALSE(rank1.kernels.empty());
    for (const auto& kernel : rank0.kernels) CHECK(kernel.name.find("rank1") == std::string::npos);
    for (const auto& kernel : rank1.kernels) CHECK(kernel.name.find("rank0") == std::string::npos);
    CHECK(rank0.loss.launches_without_record == 0);
    CHECK(rank1.loss.launches_without_record == 2);
    CHECK(rank0.gpu_busy_fraction.has_value());
    CHECK_FALSE(rank1.gpu_busy_fraction.has_value());  // partial: withheld
  }
  CHECK(stage_of("twoproc2025", "rank1_step").loss.graph_launches_without_record == 1);
  CHECK(stage_of("twoproc2025", "rank0_step").graph_executions == 3);
}

TEST_CASE("timeline: a 2022.4 CPU export gives stage instances, percentiles and the warm-up", "[timeline]") {
  const auto& report = report_of("cpu2022");
  CHECK(report.nsys_version == "2022.4.2.1");
  CHECK(report.schema_version == "3.0.0");
  CHECK(report.validity.empty_capture);
  const auto& step = stage_of("cpu2022", "decode_step");
  CHECK(step.cpu_duration.count == 12);
  CHECK(step.parent == std::optional<std::string>("generation"));  // the start/end range encloses the steps
  CHECK(step.warmup_instances == std::vector<std::size_t>{0});
  CHECK(step.steady_cpu_duration.count == 11);
  CHECK(step.verdict.find("CPU only") == 0);
  CHECK(step.cpu_duration.p50_ns <= step.cpu_duration.p90_ns);
  const auto* schedule = report.find_stage("scheduler:schedule");  // a second NVTX domain
  REQUIRE(schedule != nullptr);
  CHECK(schedule->cpu_duration.count == 12);
}

namespace {

std::filesystem::path copy_fixture(const llmprof::testing::TempDir& directory, const std::string& name) {
  const auto copy = directory / (name + ".sqlite");
  std::filesystem::copy_file(fixture(name), copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  return copy;
}

void run_sql(const std::filesystem::path& file, const std::string& sql) {
  auto database = llmprof::detail::SqliteDatabase::open_writable(file);
  REQUIRE(database);
  REQUIRE(database->execute(sql));
}

void check_error(const std::filesystem::path& file, llmprof::ErrorCode code, const std::string& says) {
  auto report = analyze_timeline(file);
  REQUIRE_FALSE(report);
  INFO(report.error().describe());
  CHECK(report.error().code == code);
  CHECK(report.error().message.find(file.string()) != std::string::npos);
  CHECK(report.error().message.find(says) != std::string::npos);
}

}  // namespace

TEST_CASE("timeline: bad input gets an error naming the file", "[timeline][errors]") {
  llmprof::testing::TempDir directory;
  using llmprof::ErrorCode;
  SECTION("missing") { check_error(directory / "absent.sqlite", ErrorCode::not_found, "no SQLite export"); }
  SECTION("truncated") {
    const auto whole = llmprof::testing::read_file(fixture("graphtrace"));
    const auto truncated = directory / "truncated.sqlite";
    llmprof::testing::write_file(truncated, whole.substr(0, whole.size() / 3));
    auto report = analyze_timeline(truncated);
    REQUIRE_FALSE(report);
    CHECK(report.error().code == ErrorCode::parse_error);
    CHECK(report.error().message.find(truncated.string()) != std::string::npos);
  }
  SECTION("not SQLite at all") {
    llmprof::testing::write_file(directory / "text.sqlite", "Generating '/tmp/nsys-report.qdstrm'\n");
    check_error(directory / "text.sqlite", ErrorCode::parse_error, "not a database");
  }
  SECTION("a SQLite file that is not an nsys export") {
    run_sql(directory / "other.sqlite", "CREATE TABLE notes(id INTEGER, body TEXT)");
    check_error(directory / "other.sqlite", ErrorCode::parse_error, "not an nsys export");
  }
  SECTION("an unknown schema version") {
    const auto copy = copy_fixture(directory, "cpu2022");
    run_sql(copy, "UPDATE EXPORT_META_DATA SET value = '4.1.0' WHERE name = 'EXPORT_SCHEMA_VERSION'");
    check_error(copy, ErrorCode::parse_error, "export schema version '4.1.0'");
  }
  SECTION("a table without a column the engine reads") {
    const auto copy = copy_fixture(directory, "graphtrace");
    run_sql(copy, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN correlationId");
    check_error(copy, ErrorCode::parse_error, "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'correlationId'");
  }
  SECTION("GPU rows without the process that launched them") {
    const auto copy = copy_fixture(directory, "twoproc2022");
    run_sql(copy, "ALTER TABLE CUPTI_ACTIVITY_KIND_MEMSET DROP COLUMN globalPid");
    check_error(copy, ErrorCode::parse_error, "table CUPTI_ACTIVITY_KIND_MEMSET has no column 'globalPid'");
  }
  SECTION("no NVTX range") {
    const auto copy = copy_fixture(directory, "cpu2022");
    run_sql(copy, "DELETE FROM NVTX_EVENTS");
    check_error(copy, ErrorCode::no_report, "no closed NVTX range");
  }
  // Found by fuzz_nsys_sqlite: a kernel stamped before the session began gave decode more GPU busy
  // time than its span. Times outside a capture, or intervals that end before they start, are damage.
  SECTION("a kernel that starts before the session (fuzz regression)") {
    const auto copy = directory / "kernel_before_session.sqlite";
    std::filesystem::copy_file(data_path("fuzz-regressions/nsys_sqlite_kernel_before_session.sqlite"), copy);
    check_error(copy, ErrorCode::parse_error, "a row of CUPTI_ACTIVITY_KIND_KERNEL runs from -41088 ns to 4138873 ns");
  }
  SECTION("an API call that ends before it starts") {
    const auto copy = copy_fixture(directory, "graphtrace");
    run_sql(copy,
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1 WHERE rowid = (SELECT min(rowid) FROM "
            "CUPTI_ACTIVITY_KIND_RUNTIME)");
    check_error(copy, ErrorCode::parse_error, "a row of CUPTI_ACTIVITY_KIND_RUNTIME runs from");
  }
  SECTION("an NVTX range far beyond any capture") {
    const auto copy = copy_fixture(directory, "cpu2022");
    run_sql(copy,
            "UPDATE NVTX_EVENTS SET end = 9223372036854775807 WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS "
            "WHERE end IS NOT NULL)");
    check_error(copy, ErrorCode::parse_error, "a row of NVTX_EVENTS runs from");
  }
}

TEST_CASE("timeline: GPU work stamped before its launch call counts from the launch", "[timeline]") {
  // CPU and GPU clocks can disagree by a little; GPU work never starts before the call that launched
  // it, so busy time stays inside the window of the instance that launched it.
  llmprof::testing::TempDir directory;
  const auto copy = copy_fixture(directory, "graphtrace");
  run_sql(copy,
          "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 0 WHERE correlationId = (SELECT k.correlationId FROM "
          "CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
          "ORDER BY k.start LIMIT 1)");
  auto report = analyze_timeline(copy);
  REQUIRE(report);
  for (const auto& stage : report->stages) {
    INFO(stage.qualified_name());
    CHECK(stage.gpu_busy_ns <= stage.span_ns);
    CHECK(stage.gpu_busy_ns <= stage.active_ns);
    for (const auto& instance : stage.instances) {
      if (instance.gpu_start_ns) CHECK(*instance.gpu_start_ns >= instance.cpu_start_ns);
    }
  }
}

TEST_CASE("timeline: the JSON carries the verdicts, the loss and per-instance rows", "[timeline]") {
  const auto text = llmprof::timeline_json(report_of("graphtrace"));
  CHECK(text.find("\"graph_trace\": \"graph\"") != std::string::npos);
  CHECK(text.find("49 of 64 graph launches") != std::string::npos);
  CHECK(text.find("\"gpu_busy_fraction\": null") != std::string::npos);
  CHECK(text.find("\"instances\": [") != std::string::npos);
}

TEST_CASE("timeline: the analysis of a run directory takes the timeline's verdict over the summaries'",
          "[timeline][analysis]") {
  // The graph capture's own `nsys stats` CSVs say "GPU busy 0.64%, host-bound" for decode (nsys 2025.3, the H100
  // CUDA-graph decode).
  llmprof::testing::TempDir run;
  std::filesystem::create_directories(run / "nsys");
  for (const auto& entry : std::filesystem::directory_iterator(data_path("nsys-sqlite/graphtrace_summaries")))
    std::filesystem::copy_file(entry.path(), run / ("nsys/" + entry.path().filename().string()),
                               std::filesystem::copy_options::none);
  auto without = llmprof::analyze_run_directory(run.path(), {});
  REQUIRE(without);
  std::filesystem::copy_file(fixture("graphtrace"), run / "nsys/profile.sqlite");
  auto with = llmprof::analyze_run_directory(run.path(), {});
  REQUIRE(with);
  const auto decode_of = [](const llmprof::AnalysisReport& report) {
    for (const auto& stage : report.stages)
      if (stage.name == "decode") return stage;
    FAIL("no decode stage");
    return llmprof::StageAnalysis{};
  };
  CHECK(decode_of(*without).verdict.find("host/launch-bound") == 0);  // the defect, from the summaries alone
  const auto decode = decode_of(*with);
  CHECK(decode.verdict.find("host/launch-bound") == std::string::npos);
  CHECK(decode.verdict.find("partial capture") == 0);
  CHECK_FALSE(decode.gpu_busy_fraction.has_value());
  REQUIRE(with->timeline.has_value());
  bool warned = false;
  for (const auto& warning : with->warnings) warned |= warning.find("49 of 64 graph launches") == 0;
  CHECK(warned);
  const auto json = llmprof::analysis_report_json(*with);
  CHECK(json.find("\"timeline\": {") != std::string::npos);
  CHECK(json.find("\"graph_trace\": \"graph\"") != std::string::npos);

  // The report renders the timeline: stage instances, measurement validity, per-step chart, histogram.
  REQUIRE(llmprof::write_analysis(*with, run / "analysis"));
  auto model = llmprof::load_run_report(run.path());
  REQUIRE(model);
  REQUIRE(model->timeline.has_value());
  const auto markdown = llmprof::render_markdown(*model);
  CHECK(markdown.find("## Stage instances (nsys SQLite timeline)") != std::string::npos);
  CHECK(markdown.find("## Measurement validity") != std::string::npos);
  CHECK(markdown.find("- 49 of 64 graph launches inside `decode`") != std::string::npos);
  const auto html = llmprof::render_html(*model);
  CHECK(html.find("id=\"stage-instances\"") != std::string::npos);
  CHECK(html.find("id=\"measurement-validity\"") != std::string::npos);
  CHECK(html.find("Instance time histogram of <code>decode_step</code>") != std::string::npos);
}

TEST_CASE("timeline: 70,000 kernels of 39 hours each saturate the sums instead of overflowing them",
          "[timeline][errors]") {
  // Each row is within what the reader admits (2^47 ns); their sum is not within int64 (2^63 ns).
  llmprof::testing::TempDir directory;
  const auto copy = copy_fixture(directory, "twoproc2025");
  constexpr std::int64_t longest = std::int64_t{1} << 47;
  const std::string pid = "16793993216", thread = "16793993223";  // rank 0's process (1001 << 24) and thread
  run_sql(copy,
          "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE; "
          "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME; DELETE FROM NVTX_EVENTS; "
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (0, " +
              std::to_string(longest) + ", 59, 'huge', " + thread +
              ", 0); "
              "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 1, " +
              thread +
              ", 1, 1, 0, NULL); "
              "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70000) "
              "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
              "globalPid, demangledName, shortName, graphNodeId) SELECT 20, " +
              std::to_string(longest) + ", 0, 1, 7, 1, " + pid + ", 10, 11, NULL FROM n;");
  auto report = analyze_timeline(copy);
  REQUIRE(report);
  const llmprof::TimelineStage* huge = report->find_stage("huge");
  REQUIRE(huge != nullptr);
  CHECK(huge->gpu_time_ns == std::numeric_limits<std::int64_t>::max());
  CHECK(huge->gpu_busy_ns == longest - 20);
  REQUIRE(huge->gpu_busy_fraction);
  CHECK(*huge->gpu_busy_fraction <= 1.0);
  REQUIRE_FALSE(huge->kernels.empty());
  CHECK(huge->kernels.front().count == 70000);
  CHECK(huge->kernels.front().total_ns == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("report.json keeps every instance of the charted loop and the first ones of other stages; instances.csv all") {
  // expected.tsv (timeline_expected.py): eager has decode 1, decode_step 64, attention 512, mlp 512 instances.
  const TimelineReport& timeline = report_of("eager");
  const auto capped = llmprof::detail::timeline_json_object(timeline, llmprof::detail::InstanceCap{"decode", 100});
  std::map<std::string, std::pair<std::size_t, std::int64_t>> kept;  // stage -> (instances written, omitted)
  for (const auto& value : capped.at("stages").as_array()) {
    const auto& stage = value.as_object();
    const auto* omitted = stage.if_contains("instances_omitted");
    kept[std::string(stage.at("name").as_string())] = {stage.at("instances").as_array().size(),
                                                       omitted ? omitted->to_number<std::int64_t>() : 0};
  }
  CHECK(kept["decode"] == std::pair<std::size_t, std::int64_t>{1, 0});
  CHECK(kept["decode_step"] == std::pair<std::size_t, std::int64_t>{64, 0});  // inside the loop stage: all
  CHECK(kept["attention"] == std::pair<std::size_t, std::int64_t>{100, 412});
  CHECK(kept["mlp"] == std::pair<std::size_t, std::int64_t>{100, 412});
  // Without a cap (timeline_json()) every instance is written.
  const auto full = llmprof::detail::timeline_json_object(timeline);
  for (const auto& value : full.at("stages").as_array()) CHECK_FALSE(value.as_object().contains("instances_omitted"));

  llmprof::testing::TempDir directory;
  llmprof::AnalysisReport report;
  report.timeline = timeline;
  REQUIRE(llmprof::write_analysis(report, directory.path()));
  std::ifstream csv(directory.path() / "instances.csv");
  std::string line;
  std::map<std::string, int> rows;
  std::getline(csv, line);
  CHECK(line.rfind("stage,instance,cpu_start_ns,", 0) == 0);
  while (std::getline(csv, line)) ++rows[line.substr(0, line.find(','))];  // these names need no quoting
  CHECK(rows == std::map<std::string, int>{{"attention", 512}, {"decode", 1}, {"decode_step", 64}, {"mlp", 512}});
}

// Gaps between consecutive CUDA graph replays against tests/tools/graph_replays_expected.py (Python sqlite3,
// replays grouped by launch call in launch order), whose output ctest compares with tests/data/oracles/graph_replays.txt.
TEST_CASE("timeline: the gaps between graph replays and the host time between them match the Python oracle",
          "[timeline][graphs]") {
  using llmprof::testing::oracle_figure;
  using llmprof::testing::oracle_text;
  const std::vector<std::pair<std::string, std::string>> stages = {
      {"graphtrace", "decode"}, {"graphtrace", "decode_step"}, {"nodetrace", "decode"},
      {"nodetrace", "decode_step"}, {"twoproc2025", "rank0_step"}, {"twoproc2025", "rank1_step"}};
  for (const auto& [file, name] : stages) {
    const std::string line = file + " " + name + ":";
    INFO(line);
    const auto& stage = stage_of(file, name);
    REQUIRE(stage.graph_replays.has_value());
    const auto& replays = *stage.graph_replays;
    const auto figure = [&](const std::string& key) { return oracle_figure("graph_replays", line, key); };
    CHECK(replays.replays == figure("replays"));
    CHECK(replays.gap.count == figure("pairs"));
    CHECK(replays.gap.total_ns == figure("gap_total_ns"));
    CHECK(replays.gap.mean_ns == Approx(figure("gap_mean_ns")).epsilon(1e-12));
    CHECK(replays.gap.p50_ns == figure("gap_p50_ns"));
    CHECK(replays.gap.max_ns == figure("gap_max_ns"));
    CHECK(replays.gap_before_launch_ns == figure("gap_before_launch_ns"));
    CHECK(replays.host_between_launches.total_ns == figure("host_between_total_ns"));
    CHECK(replays.host_between_launches.mean_ns == Approx(figure("host_between_mean_ns")).epsilon(1e-12));
    CHECK(replays.host_between_launches.p50_ns == figure("host_between_p50_ns"));
    CHECK(replays.host_between_launches.max_ns == figure("host_between_max_ns"));
    CHECK(replays.replay_gpu.count == figure("replay_gpu_count"));
    CHECK(replays.replay_gpu.mean_ns == Approx(figure("replay_gpu_mean_ns")).epsilon(1e-12));
    // The sentence carries them where graphs are most of the stage's GPU work (after the partial capture's or the
    // graph stage's verdict); the two-rank stages launch more GPU time outside graphs, and the host-bound verdict
    // with its idle shares speaks for them.
    CHECK((stage.verdict.find("between consecutive graph replays (" + oracle_text("graph_replays", line, "pairs") +
                              " pair") != std::string::npos) == stage.mostly_graphs());
  }
  // Eager decode launches no graph: no replay figures, no sentence.
  for (const std::string name : {"decode", "decode_step"}) {
    CHECK(oracle_text("graph_replays", "eager " + name + ": no", "pair") == "of");
    CHECK_FALSE(stage_of("eager", name).graph_replays.has_value());
    CHECK(stage_of("eager", name).verdict.find("graph replays") == std::string::npos);
  }
  // The recorded graph decode: the host called each next replay long before the GPU reached it, so the GPU's
  // 16.8 µs between replays are launch latency, none of it waiting for the host (oracle: gap_before_launch_ns=0).
  const auto& step = stage_of("graphtrace", "decode_step");
  CHECK(step.verdict.find("the GPU waited 16.8 µs per replay (median 16.9 µs, max 17.4 µs), none of it for the host "
                          "to call the next replay; the host took 146 µs per step between one replay's launch call "
                          "and the next, against 835 µs of GPU time per replay") != std::string::npos);
  CHECK(stage_of("graphtrace", "decode").mostly_graphs());
  CHECK(stage_of("nodetrace", "decode_step").mostly_graphs());
  // The synthetic two-rank capture (ids reused across processes): rank 1's lost graph launch ends its pairs, and
  // rank 0's gaps are mostly the host's: 178 of 188 µs before the next launch call (the oracle's figures above).
  CHECK(stage_of("twoproc2025", "rank0_step").graph_replays->gap_before_launch_ns == 178000);
  CHECK(stage_of("twoproc2025", "rank1_step").graph_replays->gap.count == 1);
  const std::string json = llmprof::timeline_json(report_of("graphtrace"));
  CHECK(json.find("\"graph_replays\"") != std::string::npos);
  CHECK(json.find("\"gap_before_launch_ns\"") != std::string::npos);
}

TEST_CASE("timeline: idle shares are worded as shares of the GPU idle time, not of the stage", "[timeline]") {
  const auto& step = stage_of("eager", "decode_step");
  const double idle = static_cast<double>(step.idle.total_ns());
  REQUIRE(idle > 0);
  // "of its GPU idle time, X while the host launched, ... Y with nothing launched": X and Y add up to 100% of the
  // idle time (the eager decode never synchronises), while the stage is idle only 1 - busy of its time.
  const std::string expected = "of its GPU idle time, " +
                               llmprof::format_fraction_percent(step.idle.host_launching_ns / idle) +
                               " while the host launched, " +
                               llmprof::format_fraction_percent(step.idle.host_in_sync_ns / idle) +
                               " while it waited in a synchronise, " +
                               llmprof::format_fraction_percent(step.idle.nothing_launched_ns / idle) +
                               " with nothing launched";
  INFO(step.verdict);
  CHECK(step.verdict.find(expected) != std::string::npos);
  CHECK(step.verdict.find("GPU idle " + llmprof::format_fraction_percent(step.idle.host_launching_ns / idle)) ==
        std::string::npos);
}

// The timeline's field tables: what the analysis writes under report.json "timeline" the report reads back as the
// same records, member for member, on every recorded export (the computed `partial` is recomputed, and an
// instance's capture loss and thread are not written).
TEST_CASE("timeline: report.json's timeline is read back as the records the engine built", "[timeline][report_model]") {
  for (const std::string name : {"graphtrace", "nodetrace", "twoproc2025"}) {
    INFO(name);
    const auto& built = report_of(name);
    const auto read = llmprof::detail::read_timeline_record(llmprof::detail::timeline_json_object(built), "timeline.");
    CHECK(read.source == built.source);
    CHECK(read.graph_trace == built.graph_trace);
    CHECK(read.unclosed_ranges == built.unclosed_ranges);
    CHECK(read.unclosed_range_names == built.unclosed_range_names);
    CHECK(read.validity.capture_losses == built.validity.capture_losses);
    CHECK(read.validity.graph_hidden == built.validity.graph_hidden);
    REQUIRE(read.stages.size() == built.stages.size());
    for (std::size_t i = 0; i < built.stages.size(); ++i) {
      const auto& want = built.stages[i];
      const auto& got = read.stages[i];
      INFO(want.qualified_name());
      CHECK(got.qualified_name() == want.qualified_name());
      CHECK(got.parent == want.parent);
      CHECK(got.cpu_duration.p99_ns == want.cpu_duration.p99_ns);
      CHECK(got.steady_gpu_busy.mean_ns == want.steady_gpu_busy.mean_ns);
      CHECK(got.warmup_instances == want.warmup_instances);
      CHECK(got.gpu_busy_fraction == want.gpu_busy_fraction);
      CHECK(got.idle.host_in_sync_ns == want.idle.host_in_sync_ns);
      CHECK(got.loss.graph_launches_without_record == want.loss.graph_launches_without_record);
      CHECK(got.partial() == want.partial());
      CHECK(got.headroom.has_value() == want.headroom.has_value());
      if (want.headroom) CHECK(got.headroom->predicted_steps_per_s == want.headroom->predicted_steps_per_s);
      CHECK(got.graph_replays.has_value() == want.graph_replays.has_value());
      if (want.graph_replays) CHECK(got.graph_replays->gap.p50_ns == want.graph_replays->gap.p50_ns);
      REQUIRE(got.kernels.size() == want.kernels.size());
      for (std::size_t k = 0; k < want.kernels.size(); ++k) {
        CHECK(got.kernels[k].name == want.kernels[k].name);
        CHECK(got.kernels[k].from_graph == want.kernels[k].from_graph);
      }
      REQUIRE(got.instances.size() == want.instances.size());
      for (std::size_t k = 0; k < want.instances.size(); ++k) {
        CHECK(got.instances[k].cpu_duration_ns() == want.instances[k].cpu_duration_ns());
        CHECK(got.instances[k].gpu_end_ns == want.instances[k].gpu_end_ns);
        CHECK(got.instances[k].gpu_busy_ns == want.instances[k].gpu_busy_ns);
      }
      CHECK(got.verdict == want.verdict);
    }
  }
}

TEST_CASE("timeline: a field of the wrong type in report.json's timeline names its full path", "[timeline][report_model]") {
  auto object = llmprof::detail::timeline_json_object(report_of("graphtrace"));
  auto& stage = object.at("stages").as_array().at(1).as_object();
  stage.at("cpu_duration").as_object()["p50_ns"] = "fast";
  try {
    (void)llmprof::detail::read_timeline_record(object, "timeline.");
    FAIL("a string p50_ns was read");
  } catch (const llmprof::detail::JsonFieldError& error) {
    CHECK(error.field == "timeline.stages[1].cpu_duration.p50_ns");
  }
  stage.at("cpu_duration").as_object()["p50_ns"] = 5;
  stage.at("instances").as_array().at(2).as_object()["gpu_end_ns"] = boost::json::array{};
  try {
    (void)llmprof::detail::read_timeline_record(object, "timeline.");
    FAIL("an array gpu_end_ns was read");
  } catch (const llmprof::detail::JsonFieldError& error) {
    CHECK(error.field == "timeline.stages[1].instances[2].gpu_end_ns");
  }
}
