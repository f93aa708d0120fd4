// RunDirectory: unique run ids, never overwriting, refusing outputs/, atomic run.json that
// round-trips, inputs.json, retention, and clear errors for unwritable roots.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <set>
#include <thread>

#include "llmprof/run_directory.hpp"
#include "llmprof/tool_cost.hpp"
#include "oracle.hpp"
#include "skip.hpp"
#include "test_support.hpp"
#include "rundir/run_records.hpp"

using llmprof::ErrorCode;
using llmprof::ManualClock;
using llmprof::RunDirectory;
using llmprof::RunDirectoryOptions;
using llmprof::RunStatus;
using llmprof::StageStatus;
using llmprof::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// 2026-11-22T15:31:22Z = 1795361482 s since the epoch (python3: datetime(2026,11,22,15,31,22,tzinfo=utc).timestamp()).
ManualClock fixed_clock() {
  return ManualClock(std::chrono::system_clock::time_point(std::chrono::seconds(1795361482)));
}

RunDirectoryOptions options_in(const TempDir& dir) {
  RunDirectoryOptions options;
  options.runs_root = dir / "runs";
  return options;
}

llmprof::RunManifest sample_manifest() {
  llmprof::RunManifest manifest;
  manifest.run_id = "20261122T153122Z-0a1b2c";
  manifest.created_utc = "2026-11-22T15:31:22Z";
  manifest.updated_utc = "2026-11-22T15:32:00Z";
  manifest.status = RunStatus::incomplete;
  manifest.workload = {
      {"python3", "decode.py", "--prompt", "it's \"quoted\"\n"}, "/srv/decode", {{"HF_HOME", "/tmp/hf"}}};
  llmprof::StageRecord nsys;
  nsys.name = "nsys";
  nsys.status = StageStatus::failed;
  nsys.reason = "No reports were generated: the NVTX range 'decode' never opened";
  nsys.started_utc = "2026-11-22T15:31:30Z";
  nsys.duration_s = 12.25;
  nsys.exit_code = 0;
  nsys.command = "nsys profile --trace=cuda,nvtx python3 decode.py";
  nsys.cmd_file = "nsys/cmd.txt";
  nsys.log_file = "nsys/nsys.log";
  nsys.artifacts = {"nsys/profile.qdstrm"};
  nsys.warnings = {"importer missing libdw.so.1"};
  llmprof::StageRecord ncu;
  ncu.name = "ncu";
  ncu.status = StageStatus::skipped;
  ncu.reason = "ncu not found";
  manifest.stages = {nsys, ncu};
  manifest.total_bytes = 2261951157ULL;  // a 2.2 GB .qdstrm: more than 32 bits
  return manifest;
}

}  // namespace

TEST_CASE("generated run ids are UTC-timestamped, sortable and unique") {
  auto clock = fixed_clock();
  const auto id = llmprof::generate_run_id(clock);
  CHECK(id.rfind("20261122T153122Z-", 0) == 0);
  CHECK(llmprof::is_generated_run_id(id));
  std::set<std::string> ids;
  for (int i = 0; i < 200; ++i) ids.insert(llmprof::generate_run_id(clock));
  CHECK(ids.size() >= 199);  // 24 random bits: a clash among 200 has probability ~0.1%
  clock.advance(std::chrono::seconds(1));
  CHECK(llmprof::generate_run_id(clock) > id);
  CHECK_FALSE(llmprof::is_generated_run_id("20261122T153122Z-0A1B2C"));
  CHECK_FALSE(llmprof::is_generated_run_id("my-run"));
}

TEST_CASE("create makes MAIN with its subdirectories and a manifest at once") {
  TempDir dir;
  const auto clock = fixed_clock();
  auto run = RunDirectory::create(options_in(dir), clock);
  REQUIRE(run.has_value());
  CHECK(run->path().parent_path() == dir / "runs");
  for (const char* sub : {"stage1", "nsys", "ncu", "analysis"}) CHECK(fs::is_directory(run->path() / sub));
  const auto reread = llmprof::manifest_from_json(llmprof::testing::read_file(run->path() / "run.json"));
  REQUIRE(reread.has_value());
  CHECK(reread->run_id == run->path().filename().string());
  CHECK(reread->created_utc == "2026-11-22T15:31:22Z");
  CHECK(reread->status == RunStatus::running);
}

TEST_CASE("an existing run id is never overwritten") {
  TempDir dir;
  auto options = options_in(dir);
  options.run_id = "baseline";
  REQUIRE(RunDirectory::create(options, fixed_clock()).has_value());
  llmprof::testing::write_file(dir / "runs/baseline/nsys/keep.txt", "precious");
  const auto again = RunDirectory::create(options, fixed_clock());
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == ErrorCode::already_exists);
  CHECK(llmprof::testing::read_file(dir / "runs/baseline/nsys/keep.txt") == "precious");
}

TEST_CASE("bad roots and run ids are refused with a hint") {
  TempDir dir;
  auto options = options_in(dir);
  SECTION("outputs/ is reserved") {
    for (const std::string root : {"outputs", "outputs/", "./outputs", "a/../outputs"}) {
      options.runs_root = dir / root;
      const auto run = RunDirectory::create(options, fixed_clock());
      REQUIRE_FALSE(run.has_value());
      CHECK(run.error().code == ErrorCode::invalid_argument);
      CHECK_FALSE(fs::exists(dir / "outputs"));
    }
  }
  SECTION("run id with a slash") {
    options.run_id = "../escape";
    const auto run = RunDirectory::create(options, fixed_clock());
    REQUIRE_FALSE(run.has_value());
    CHECK(run.error().code == ErrorCode::invalid_argument);
  }
  SECTION("root below a regular file (fails even for root)") {
    llmprof::testing::write_file(dir / "file", "x");
    options.runs_root = dir / "file/runs";
    const auto run = RunDirectory::create(options, fixed_clock());
    REQUIRE_FALSE(run.has_value());
    CHECK(run.error().code == ErrorCode::io_error);
    CHECK(run.error().message.find((dir / "file/runs").string()) != std::string::npos);
    CHECK(run.error().hint.find("writable runs root") != std::string::npos);
  }
  SECTION("keep_newest_runs below 1") {
    options.keep_newest_runs = 0;
    CHECK_FALSE(RunDirectory::create(options, fixed_clock()).has_value());
  }
}

TEST_CASE("a read-only runs root gives an io_error naming the path") {
  if (::geteuid() == 0) {
    llmprof::testing::skip_test(
        "running as root, where chmod 0500 does not stop writes; covered by the regular-file case");
    return;
  }
  TempDir dir;
  fs::create_directories(dir / "runs");
  fs::permissions(dir / "runs", fs::perms::owner_read | fs::perms::owner_exec);
  const auto run = RunDirectory::create(options_in(dir), fixed_clock());
  REQUIRE_FALSE(run.has_value());
  CHECK(run.error().code == ErrorCode::io_error);
  CHECK(run.error().message.find((dir / "runs").string()) != std::string::npos);
  CHECK_FALSE(run.error().hint.empty());
}

TEST_CASE("run.json round-trips through manifest_to_json and manifest_from_json") {
  const auto manifest = sample_manifest();
  const auto text = llmprof::manifest_to_json(manifest);
  const auto parsed = boost::json::parse(text).as_object();
  CHECK(parsed.at("schema") == "llmprof.run/1");
  CHECK(parsed.at("stages").as_array().at(1).as_object().at("exit_code").is_null());
  CHECK(parsed.at("stages").as_array().at(1).as_object().at("command").is_null());
  CHECK(parsed.at("total_bytes").to_number<std::uint64_t>() == 2261951157ULL);
  const auto back = llmprof::manifest_from_json(text);
  REQUIRE(back.has_value());
  CHECK(llmprof::manifest_to_json(*back) == text);
  CHECK(back->workload.argv == manifest.workload.argv);
  CHECK(back->stages.at(0).exit_code == 0);
  CHECK(back->stages.at(0).duration_s == 12.25);
  CHECK(back->stages.at(1).status == StageStatus::skipped);
}

TEST_CASE("the capture record round-trips through run.json and says which range the timeline is limited to") {
  auto manifest = sample_manifest();
  CHECK(llmprof::manifest_to_json(manifest).find("\"capture\"") == std::string::npos);  // absent until captured
  llmprof::CaptureRecord capture;
  capture.gate = llmprof::CaptureGateKind::nvtx;
  capture.range = "decode@llm";
  capture.ungated_rerun = true;  // the gate never opened: the whole run was captured instead
  capture.windows.push_back({"nsys/profile.nsys-rep"});
  capture.graph_trace = "graph";
  capture.node_capture_directory = "nsys/node";
  manifest.capture = capture;
  const auto text = llmprof::manifest_to_json(manifest);
  const auto object = boost::json::parse(text).as_object().at("capture").as_object();
  CHECK(object.at("gate") == "nvtx");
  CHECK_FALSE(object.at("gate_opened").as_bool());
  CHECK(object.at("ungated_rerun").as_bool());
  CHECK(object.at("windows").as_array().at(0).as_object().at("report") == "nsys/profile.nsys-rep");
  const auto back = llmprof::manifest_from_json(text);
  REQUIRE(back.has_value());
  REQUIRE(back->capture.has_value());
  CHECK(back->capture->range == "decode@llm");
  CHECK(back->capture->node_capture_directory == std::optional<std::string>("nsys/node"));
  CHECK(llmprof::manifest_to_json(*back) == text);
  // An ungated re-run is not limited to the gate's range; the same gate that opened is, without its domain.
  CHECK_FALSE(back->capture->gated_range().has_value());
  capture.ungated_rerun = false;
  capture.gate_opened = true;
  CHECK(capture.gated_range() == std::optional<std::string>("decode"));
  capture.gate = llmprof::CaptureGateKind::cuda_profiler_api;
  CHECK_FALSE(capture.gated_range().has_value());
  CHECK(llmprof::parse_capture_gate_kind("cudaProfilerApi") == llmprof::CaptureGateKind::cuda_profiler_api);
  CHECK_FALSE(llmprof::parse_capture_gate_kind("nvtx-range").has_value());
}

TEST_CASE("read_manifest reads run.json, and says not_found without one") {
  TempDir dir;
  auto clock = fixed_clock();
  auto run = RunDirectory::create(options_in(dir), clock).value();
  REQUIRE(run.write_manifest(clock).has_value());
  const auto manifest = llmprof::read_manifest(run.path());
  REQUIRE(manifest.has_value());
  CHECK(manifest->run_id == run.manifest().run_id);
  CHECK(llmprof::read_manifest(dir / "nope").error().code == ErrorCode::not_found);
}

TEST_CASE("every stage has one recorded name, and the bare run's stays stage1") {
  std::vector<std::string> names;
  for (const llmprof::Stage stage : llmprof::kStages) {
    names.emplace_back(llmprof::to_string(stage));
    CHECK(llmprof::parse_stage(names.back()) == stage);
  }
  CHECK(names == std::vector<std::string>{"probe", "stage1", "nsys", "select", "ncu", "analyze", "report"});
  CHECK_FALSE(llmprof::parse_stage("workload").has_value());
  CHECK(llmprof::RunLayout::stage_directory(llmprof::Stage::analyze) == fs::path("analysis"));
  CHECK(llmprof::RunLayout::rank_stage_status(1, llmprof::Stage::nsys) == fs::path("ranks/r1/nsys/status.json"));
  CHECK(llmprof::RunLayout::attempt_directory(2) == fs::path("attempts/2"));
}

TEST_CASE("manifest_from_json names what is wrong") {
  CHECK(llmprof::manifest_from_json("{\"schema\": \"llmprof.run/1\",").error().code == ErrorCode::parse_error);
  const auto wrong_schema =
      llmprof::manifest_from_json(R"({"schema":"other/1","run_id":"x","status":"ok","stages":[]})");
  CHECK(wrong_schema.error().subject == "schema");
  const auto bad_status =
      llmprof::manifest_from_json(R"({"schema":"llmprof.run/1","run_id":"x","status":"done","stages":[]})");
  CHECK(bad_status.error().subject == "status");
  const auto bad_stage = llmprof::manifest_from_json(
      R"({"schema":"llmprof.run/1","run_id":"x","status":"ok","stages":[{"name":"nsys","status":"ok","exit_code":"0"}]})");
  CHECK(bad_stage.error().subject == "stages.exit_code");
}

TEST_CASE("write_manifest records stages, updated time and total bytes; open reads it back") {
  TempDir dir;
  auto clock = fixed_clock();
  auto run = RunDirectory::create(options_in(dir), clock).value();
  REQUIRE(run.write_text("nsys/cmd.txt", std::string(1000, 'x')).has_value());
  auto& stage = run.stage("nsys");
  stage.status = StageStatus::ok;
  stage.cmd_file = "nsys/cmd.txt";
  CHECK(&run.stage("nsys") == &stage);  // found again, not added twice
  clock.advance(std::chrono::seconds(90));
  REQUIRE(run.write_manifest(clock).has_value());
  const auto reopened = RunDirectory::open(run.path());
  REQUIRE(reopened.has_value());
  CHECK(reopened->manifest().updated_utc == "2026-11-22T15:32:52Z");
  REQUIRE(reopened->manifest().stages.size() == 1);
  CHECK(reopened->manifest().stages[0].cmd_file == "nsys/cmd.txt");
  // cmd.txt (1000 bytes) plus the first run.json, which existed when the total was taken.
  CHECK(reopened->manifest().total_bytes > 1000);
  CHECK(reopened->manifest().total_bytes < 1000 + 4096);
  CHECK(run.total_bytes() == 1000 + fs::file_size(run.path() / "run.json"));
}

TEST_CASE("open reports a missing directory and a corrupt manifest") {
  TempDir dir;
  CHECK(RunDirectory::open(dir / "nope").error().code == ErrorCode::not_found);
  llmprof::testing::write_file(dir / "broken/run.json", "{\"schema\": ");
  const auto broken = RunDirectory::open(dir / "broken");
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().code == ErrorCode::parse_error);
  CHECK(broken.error().subject == (dir / "broken/run.json").string());
}

TEST_CASE("a reader polling run.json never sees a partial manifest") {
  TempDir dir;
  auto clock = fixed_clock();
  auto run = RunDirectory::create(options_in(dir), clock).value();
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, bad_reads{0};
  std::thread reader([&] {
    while (!done) {
      const auto text = llmprof::testing::read_file(run.path() / "run.json");
      if (!llmprof::manifest_from_json(text)) ++bad_reads;
      ++reads;
    }
  });
  for (int i = 0; i < 300; ++i) {
    auto& stage = run.stage("stage" + std::to_string(i));
    stage.reason = std::string(static_cast<std::size_t>(i) * 10, 'r');  // the file grows with every write
    REQUIRE(run.write_manifest(clock).has_value());
  }
  done = true;
  reader.join();
  CHECK(reads > 0);
  CHECK(bad_reads == 0);
  for (const auto& entry : fs::directory_iterator(run.path())) {
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);  // no temp files left
  }
}

TEST_CASE("write_text and write_json stay inside MAIN and check their input") {
  TempDir dir;
  auto run = RunDirectory::create(options_in(dir), fixed_clock()).value();
  CHECK(run.write_text("../escape.txt", "x").error().code == ErrorCode::invalid_argument);
  CHECK(run.write_text("/tmp/escape.txt", "x").error().code == ErrorCode::invalid_argument);
  CHECK(run.write_json("analysis/a.json", "{not json").error().code == ErrorCode::invalid_argument);
  REQUIRE(run.write_json("analysis/deep/a.json", R"({"b":[1,2],"c":{}})").has_value());
  CHECK(llmprof::testing::read_file(run.path() / "analysis/deep/a.json") ==
        "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {}\n}\n");
}

TEST_CASE("write_inputs records argv, env overrides and cwd") {
  TempDir dir;
  auto run = RunDirectory::create(options_in(dir), fixed_clock()).value();
  const llmprof::WorkloadRecord workload{{"python3", "decode.py", "8"}, "/srv/model", {{"CUDA_VISIBLE_DEVICES", "0"}}};
  REQUIRE(run.write_inputs(workload).has_value());
  const auto inputs = boost::json::parse(llmprof::testing::read_file(run.path() / "inputs.json")).as_object();
  CHECK(inputs.at("schema") == "llmprof.inputs/1");
  CHECK(inputs.at("argv").as_array().size() == 3);
  CHECK(inputs.at("argv").as_array().at(1) == "decode.py");
  CHECK(inputs.at("cwd") == "/srv/model");
  CHECK(inputs.at("env").as_object().at("CUDA_VISIBLE_DEVICES") == "0");
  CHECK(run.manifest().workload.argv == workload.argv);
}

TEST_CASE("retention keeps the newest N run directories and nothing else") {
  TempDir dir;
  auto clock = fixed_clock();
  auto options = options_in(dir);
  std::vector<fs::path> created;
  for (int i = 0; i < 4; ++i) {
    created.push_back(RunDirectory::create(options, clock).value().path());
    clock.advance(std::chrono::minutes(1));
  }
  // Look-alikes retention must not touch: a custom id, and a run-id-shaped folder with no run.json.
  fs::create_directories(dir / "runs/my-baseline");
  llmprof::testing::write_file(dir / "runs/my-baseline/run.json", "{}");
  fs::create_directories(dir / "runs/20200101T000000Z-abcdef");

  options.keep_newest_runs = 2;
  const auto newest = RunDirectory::create(options, clock).value().path();
  CHECK_FALSE(fs::exists(created[0]));
  CHECK_FALSE(fs::exists(created[1]));
  CHECK_FALSE(fs::exists(created[2]));
  CHECK(fs::exists(created[3]));
  CHECK(fs::exists(newest));
  CHECK(fs::exists(dir / "runs/my-baseline"));
  CHECK(fs::exists(dir / "runs/20200101T000000Z-abcdef"));

  const auto removed = llmprof::apply_retention(dir / "runs", 1);
  REQUIRE(removed.has_value());
  CHECK(removed->removed == std::vector<fs::path>{created[3]});
}

TEST_CASE("retention never deletes the run being created, even with a clock gone backwards") {
  TempDir dir;
  auto options = options_in(dir);
  auto late = fixed_clock();
  const auto existing = RunDirectory::create(options, late).value().path();
  ManualClock early;  // 1970
  options.keep_newest_runs = 1;
  const auto current = RunDirectory::create(options, early).value().path();
  CHECK(fs::exists(current));
  CHECK_FALSE(fs::exists(existing));
}

TEST_CASE("the cost of profiling as multiples of the bare run, over recorded run.json files", "[tool_cost]") {
  // tests/tools/tool_cost_expected.py computes the same figures from the same files with json alone.
  for (const std::string run : {"tests/data/h100-1b-decode", "examples/ncu-budget-h100/after-1b",
                                "examples/ncu-budget-h100/after-graphs", "examples/sampled-h200/s5-1b-sampled",
                                "examples/speed-h200/after-4-1b-load"}) {
    INFO(run);
    const auto manifest = llmprof::read_manifest(std::filesystem::path(LLMPROF_SOURCE_DIR) / run);
    REQUIRE(manifest.has_value());
    const auto cost = llmprof::tool_cost_of(manifest->stages);
    REQUIRE(cost.has_value());
    using llmprof::testing::oracle_figure;
    CHECK(cost->bare_s == Approx(oracle_figure("tool_cost", run + ":", "bare_s")).epsilon(1e-8));
    CHECK(cost->run_s == Approx(oracle_figure("tool_cost", run + ":", "run_s")).epsilon(1e-8));
    CHECK(cost->multiple() == Approx(oracle_figure("tool_cost", run + ":", "multiple")).epsilon(1e-8));
    REQUIRE(cost->nsys_multiple().has_value());
    CHECK(*cost->nsys_multiple() == Approx(oracle_figure("tool_cost", run + ":", "nsys_multiple")).epsilon(1e-8));
    const bool ncu_ran = run != "examples/sampled-h200/s5-1b-sampled";  // the sampled preset runs no ncu
    CHECK(cost->ncu_multiple().has_value() == ncu_ran);
    if (ncu_ran)
      CHECK(*cost->ncu_multiple() == Approx(oracle_figure("tool_cost", run + ":", "ncu_multiple")).epsilon(1e-8));
    const std::string summary = llmprof::testing::read_oracle_line("tool_cost", run + " summary: ");
    CHECK(llmprof::describe_tool_cost(*cost) == summary);
    // run.json keeps it, derived from the stages when written.
    const auto written = boost::json::parse(llmprof::manifest_to_json(*manifest)).as_object();
    REQUIRE(written.contains("tool_cost"));
    CHECK(written.at("tool_cost").at("summary").as_string() == summary);
    CHECK(written.at("tool_cost").at("multiple").as_double() == Approx(cost->multiple()));
  }
}

TEST_CASE("no multiple without a bare run that succeeded", "[tool_cost]") {
  std::vector<llmprof::StageRecord> stages(3);
  stages[0].name = "stage1";
  stages[0].status = llmprof::StageStatus::failed;
  stages[0].duration_s = 4;
  stages[1].name = "nsys";
  stages[1].status = llmprof::StageStatus::ok;
  stages[1].duration_s = 12;
  stages[2].name = "ncu";
  stages[2].status = llmprof::StageStatus::skipped;
  CHECK_FALSE(llmprof::tool_cost_of(stages).has_value());
  stages[0].status = llmprof::StageStatus::ok;
  const auto cost = llmprof::tool_cost_of(stages);
  REQUIRE(cost.has_value());
  CHECK(cost->multiple() == 4.0);  // (4 + 12) / 4
  CHECK_FALSE(cost->ncu_multiple().has_value());
  CHECK(llmprof::describe_tool_cost(*cost) == "this run took 4.0x the bare run: nsys 3.0x");
  stages[0].duration_s = 0;  // a bare run too short to time is no base for a multiple
  CHECK_FALSE(llmprof::tool_cost_of(stages).has_value());
}
