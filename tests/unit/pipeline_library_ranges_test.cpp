// A plain run of a workload with no NVTX of its own, on a scripted machine (the Bench: fake nsys/ncu answered with
// recorded outputs). The exports are the recorded H100 serving window made into such a workload
// (tests/support/library_range_exports.hpp): only CCCL's scans, or no range at all, with or without the workload's
// own cudaProfilerStart/Stop window. With the defaults (gated on `decode`, run.on_empty_gate = diagnose) and a bare
// run that names no range, discovery's capture comes first, shows no range of the workload's own, and the run follows
// the window (discovery's capture restricted to it, or a second capture; ncu inside it) or keeps the whole run, selects the whole window, infers the steps and
// says so.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include "core/format.hpp"
#include "llmprof/report.hpp"
#include "library_range_exports.hpp"
#include "oracle.hpp"
#include "pipeline_bench.hpp"
#include "run_manifest_reading.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

FakeMatcher capture_range(const std::string& range) {
  return [range](const ProcessSpec& spec) {
    return nsys_capture()(spec) && has_argument(spec.argv, "--capture-range=" + range);
  };
}

FakeMatcher ungated_capture() {
  return [](const ProcessSpec& spec) { return nsys_capture()(spec) && !has_argument(spec.argv, "--capture-range"); };
}

FakeAnswer report_at(const fs::path& report) {
  return FakeAnswer::printing({"Collecting data...", "Generated:", "\t" + report.string()}).writing(report.string(),
                                                                                                      "report");
}

FakeAnswer no_report() {
  return FakeAnswer::printing({"Processing events...", "Generated:", "    No reports were generated"});
}

// `nsys export` writes the discovery capture's export from `discovery`, any other from `main`.
void script_exports(Bench& bench, const fs::path& discovery, const fs::path& main) {
  bench.runner.on_first(command_is("nsys", {"export"}), FakeAnswer::exiting(0).doing([=](const ProcessSpec& spec) {
    const std::string output = argument_after(spec, "--output");
    fs::copy_file(output.find("discovery") != std::string::npos ? discovery : main, output,
                  fs::copy_options::overwrite_existing);
  }));
}

// The workload as a Hugging Face generate(): it writes no llmprof metrics, so its range names are unknown.
void script_uninstrumented_workload(Bench& bench) { bench.runner.on(command_is("workload"), FakeAnswer::printing({"done"})); }

// The defaults' gate (`decode`) never opens: the gated capture writes no report, discovery (ungated) records the
// whole run, and every export is `recorded`; then the run, ncu answered with a recorded report.
void run_with_unopened_gate(Bench& bench, const fs::path& recorded) {
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("nvtx"), no_report());
  bench.runner.on(ungated_capture(), report_at(bench.main() / "nsys/discovery/profile.nsys-rep"));
  script_exports(bench, recorded, recorded);
  bench.script_ncu_report();
  bench.run();
}

std::vector<std::string> ncu_profile_argv(const Bench& bench) {
  const auto runs = bench.runs_of([](const ProcessSpec& spec) {
    return command_is("ncu")(spec) && argv_contains("-o")(spec);
  });
  REQUIRE_FALSE(runs.empty());
  return runs.front();
}

bool has(const std::vector<std::string>& argv, const std::string& argument) {
  return std::find(argv.begin(), argv.end(), argument) != argv.end();
}

// The figures a window of inferred steps' headline gives, computed here from analysis/step_kinds.json's sums:
// (steps, "X per step under the profiler, GPU busy Y% (Z of GPU work per step).").
std::pair<std::string, std::string> expected_headline(const fs::path& main) {
  const auto root = boost::json::parse(read_file(main / "analysis/step_kinds.json")).as_object();
  const auto& window = root.at("windows").as_array().front().as_object();
  const std::int64_t steps = window.at("steps").as_int64();
  std::int64_t total = 0, busy = 0, most = 0;
  double median = 0;
  std::string frequent;
  for (const auto& kind : window.at("kinds").as_array()) {
    total += kind.at("total_ns").as_int64();
    busy += kind.at("gpu_busy_ns").as_int64();
    if (kind.at("count").as_int64() > most) {
      most = kind.at("count").as_int64();
      median = static_cast<double>(kind.at("p50_ns").as_int64());
      frequent = std::string(kind.at("name").as_string());
    }
  }
  REQUIRE(steps > 0);
  REQUIRE(total > 0);
  const auto per_step = [&](std::int64_t sum) { return static_cast<double>(sum) / static_cast<double>(steps); };
  const double mean = per_step(total);
  // The median step of the most frequent kind where it and the mean are more than 1.5x apart.
  const std::string step = mean > 1.5 * median || median > 1.5 * mean
                               ? detail::format_duration_ns(median) + " per step under the profiler (the median " +
                                     frequent + " step; " + detail::format_duration_ns(mean) + " on average over all " +
                                     std::to_string(steps) + ")"
                               : detail::format_duration_ns(mean) + " per step under the profiler";
  return {std::to_string(steps), step + ", GPU busy " +
                                     detail::format_fraction_percent(static_cast<double>(busy) /
                                                                     static_cast<double>(total)) +
                                     " of the steps' time (" + detail::format_duration_ns(per_step(busy)) +
                                     " of GPU work per step)."};
}

// This machine has no NVIDIA driver, so the run's report says that instead of a headline (env.json); the report of
// the same run as a GPU machine records it, re-rendered from the run directory as `deep-profile report` does.
void render_as_on_a_gpu_machine(const fs::path& main) {
  auto environment = boost::json::parse(read_file(main / "env.json")).as_object();
  environment.at("tools").as_object().at("nvidia_driver").as_object()["present"] = true;
  write_file(main / "env.json", boost::json::serialize(environment));
  REQUIRE(write_reports(main).has_value());
}

// The report's headline says the window's steps, with the figures of step_kinds.json, and never a library range.
void check_inferred_headline(const fs::path& main, const std::string& steps) {
  render_as_on_a_gpu_machine(main);
  const std::string report = read_file(main / "report.md");
  INFO(report.substr(0, 2000));
  const auto [count, figures] = expected_headline(main);
  CHECK(count == steps);
  CHECK_THAT(report, Catch::Contains("**the captured window: " + count + " steps inferred"));
  CHECK_THAT(report, Catch::Contains(figures));
  CHECK_THAT(report, !Catch::Contains("**cub::DeviceScan::InclusiveScan:"));
  CHECK_THAT(read_file(main / "report.html"), Catch::Contains("the captured window: " + count + " steps inferred"));
}

std::string recorded_window_steps() {
  std::istringstream lines(read_file(data_path("serving/expected.tsv")));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("serving_window1_h100\tsteps\tcount\t", 0) == 0) return line.substr(line.rfind('\t') + 1);
  FAIL("tests/data/serving/expected.tsv has no serving_window1_h100 steps count");
  return {};
}

// The run's manifest, once its nsys stage ended ok (the stage's reason shown when not).
RunManifest manifest_with_nsys_ok(const Bench& bench) {
  RunManifest manifest = bench.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys: " << nsys.reason);
  REQUIRE(nsys.status == StageStatus::ok);
  return manifest;
}

}  // namespace

namespace {

std::int64_t count_rows(const fs::path& export_file, const std::string& table) {
  auto database = detail::SqliteDatabase::open_read_only(export_file);
  REQUIRE(database.has_value());
  auto statement = database->prepare("SELECT COUNT(*) FROM " + table);
  REQUIRE(statement.has_value());
  auto row = statement->step();
  REQUIRE((row.has_value() && *row));
  return statement->integer(0);
}

// The workload's window in an export: the starts of its cudaProfilerStart and cudaProfilerStop calls.
CaptureSpan profiler_window_of(const fs::path& export_file) {
  auto database = detail::SqliteDatabase::open_read_only(export_file);
  REQUIRE(database.has_value());
  auto statement = database->prepare(
      "SELECT MIN(CASE WHEN nameId = 90001 THEN start END), MIN(CASE WHEN nameId = 90002 THEN start END) "
      "FROM CUPTI_ACTIVITY_KIND_RUNTIME");
  REQUIRE(statement.has_value());
  auto row = statement->step();
  REQUIRE((row.has_value() && *row));
  return {statement->integer(0), statement->integer(1)};
}

// A run over a workload with only CCCL's ranges and a window of its own, the window-gated capture scripted too: the
// run follows the window, however it takes it (the defaults restrict discovery's capture, `= false` captures again).
struct FollowedWindow {
  fs::path window;  // the window-gated capture's export
  fs::path whole;   // the whole run's export, the window inside it
  RunSummary summary;
  RunManifest manifest;
};

FollowedWindow run_followed_window(Bench& bench, const fs::path& exports, bool work_after_window = false) {
  FollowedWindow followed;
  followed.window = export_without_own_ranges(exports, "window", {.cccl_scans = true});
  followed.whole = export_without_own_ranges(
      exports, "run", {.cccl_scans = true, .profiler_window = true, .work_after_window = work_after_window});
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("nvtx"), no_report());
  bench.runner.on(ungated_capture(), report_at(bench.main() / "nsys/discovery/profile.nsys-rep"));
  bench.runner.on(capture_range("cudaProfilerApi"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  script_exports(bench, followed.whole, followed.window);
  bench.script_ncu_report();
  followed.summary = bench.run();
  followed.manifest = manifest_with_nsys_ok(bench);
  return followed;
}

// What a run that followed the workload's window says and does, whether it captured the window or restricted
// discovery's capture to it: the gate and scope in run.json and the report, ncu inside the window on the whole
// window's kernels, steps inferred and the headline of the window's steps.
void check_followed_window(const Bench& bench, const FollowedWindow& followed) {
  const RunManifest& manifest = followed.manifest;
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::cuda_profiler_api);
  CHECK(manifest.capture->gate_opened);
  CHECK(manifest.capture->whole_window_selection);
  CHECK_FALSE(manifest.capture->ungated_rerun);
  CHECK_THAT(manifest.capture->scope,
             Catch::StartsWith("the first capture was discovery's (the bare run named no NVTX range), and the workload "
                               "emits no NVTX range of its own, only library ranges "
                               "(`CCCL:cub::DeviceScan::InclusiveScan` x"));
  CHECK_THAT(manifest.capture->scope, Catch::Contains("it calls cudaProfilerStart (1x), so the capture follows its window"));
  CHECK_THAT(read_file(bench.main() / "report.md"),
             Catch::Contains("| **Capture** | the first capture was discovery's (the bare run named no NVTX range)"));
  CHECK(std::any_of(followed.summary.notes.begin(), followed.summary.notes.end(), [](const std::string& note) {
    return note.find("named no NVTX range), and the workload emits") != std::string::npos;
  }));
  CHECK(stage_of(manifest, "select").status == StageStatus::ok);
  const auto ncu = ncu_profile_argv(bench);
  const auto from_start = std::find(ncu.begin(), ncu.end(), "--profile-from-start");
  REQUIRE(from_start != ncu.end());
  CHECK(*(from_start + 1) == "off");
  CHECK_FALSE(has(ncu, "--nvtx-include"));
  CHECK_THAT(read_file(bench.main() / "analysis/step_kinds.json"), Catch::Contains("\"inferred\":\"steps inferred"));
  CHECK_THAT(read_file(bench.main() / "report.md"),
             Catch::Contains("CCCL:cub::DeviceScan::InclusiveScan [library range: CCCL]"));
  check_inferred_headline(bench.main(), recorded_window_steps());
}

}  // namespace

TEST_CASE("defaults, only CCCL's ranges and the workload's own window: the window comes out of the discovery capture") {
  Bench bench;
  TempDir exports;
  const FollowedWindow followed = run_followed_window(bench, exports.path());
  const RunManifest& manifest = followed.manifest;

  // One capture: discovery's (the bare run named no range, so no capture is gated on `decode`), restricted to the
  // workload's window; nothing gated on the window runs the workload again.
  const auto captures = bench.runs_of(nsys_capture());
  REQUIRE(captures.size() == 1);
  CHECK_FALSE(has_argument(captures[0], "--capture-range"));
  REQUIRE(manifest.capture.has_value());
  REQUIRE(manifest.capture->restricted_window.has_value());
  const CaptureSpan expected = profiler_window_of(followed.whole);
  CHECK(manifest.capture->restricted_window->start_ns == expected.start_ns);
  CHECK(manifest.capture->restricted_window->end_ns == expected.end_ns);
  REQUIRE(manifest.capture->windows.size() == 1);
  CHECK(manifest.capture->windows.front().report == "nsys/discovery/profile.nsys-rep");
  CHECK(count_rows(bench.main() / "nsys/profile.sqlite", "CUPTI_ACTIVITY_KIND_KERNEL") ==
        count_rows(followed.window, "CUPTI_ACTIVITY_KIND_KERNEL"));
  CHECK_THAT(read_file(bench.main() / "deep-profile.log"),
             Catch::Contains("the timeline is the discovery capture restricted to the workload's first "
                             "cudaProfilerStart/Stop window"));
  check_followed_window(bench, followed);
}

TEST_CASE("nsys.restrict_discovery_to_window = false: the workload's window is captured again, gated on it") {
  Bench bench;
  bench.config.nsys.restrict_discovery_to_window = false;
  TempDir exports;
  const FollowedWindow followed = run_followed_window(bench, exports.path());
  const RunManifest& manifest = followed.manifest;

  const auto captures = bench.runs_of(nsys_capture());
  REQUIRE(captures.size() == 2);
  CHECK_FALSE(has_argument(captures[0], "--capture-range"));
  CHECK(has(captures[1], "--capture-range=cudaProfilerApi"));
  CHECK_FALSE(has_argument(captures[1], "--nvtx-capture"));
  REQUIRE(manifest.capture.has_value());
  CHECK_FALSE(manifest.capture->restricted_window.has_value());
  REQUIRE(manifest.capture->windows.size() == 1);
  CHECK(manifest.capture->windows.front().report == "nsys/profile.nsys-rep");
  CHECK_THAT(read_file(bench.main() / "deep-profile.log"),
             Catch::Contains("capturing again, inside the workload's own cudaProfilerStart/Stop window "
                             "(nsys.restrict_discovery_to_window = false)"));
  check_followed_window(bench, followed);
}

// The whole run holds the window's work twice: inside the window, and again after its cudaProfilerStop. The
// restricted timeline must hold the window's steps alone, as the window-gated capture would.
TEST_CASE("work after the workload's window: the timeline restricted to the window holds the window's steps alone") {
  Bench bench;
  TempDir exports;
  const FollowedWindow followed = run_followed_window(bench, exports.path(), /*work_after_window=*/true);
  REQUIRE(count_rows(followed.whole, "CUPTI_ACTIVITY_KIND_KERNEL") ==
          2 * count_rows(followed.window, "CUPTI_ACTIVITY_KIND_KERNEL"));
  CHECK(bench.runs_of(nsys_capture()).size() == 1);
  const fs::path timeline = bench.main() / "nsys/profile.sqlite";
  for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY"}) {
    CAPTURE(table);
    CHECK(count_rows(timeline, table) == count_rows(followed.window, table));
  }
  CHECK(count_rows(bench.main() / "nsys/discovery/profile.sqlite", "CUPTI_ACTIVITY_KIND_KERNEL") ==
        count_rows(followed.whole, "CUPTI_ACTIVITY_KIND_KERNEL"));
  check_followed_window(bench, followed);
}

TEST_CASE("defaults, no NVTX at all and no window: the discovery capture is the whole run, ncu from the start") {
  Bench bench;
  TempDir exports;
  const auto bare = export_without_own_ranges(exports.path(), "bare", {});
  run_with_unopened_gate(bench, bare);
  const RunManifest manifest = bench.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys: " << nsys.reason);
  REQUIRE(nsys.status == StageStatus::ok);
  CHECK(bench.runs_of(nsys_capture()).size() == 1);  // discovery alone: no gated attempt, no second capture
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::none);
  CHECK_FALSE(manifest.capture->gate_opened);
  CHECK(manifest.capture->whole_window_selection);
  CHECK_THAT(manifest.capture->scope,
             Catch::StartsWith("the first capture was discovery's (the bare run named no NVTX range), and the workload "
                               "emits no NVTX range; the capture recorded no cudaProfilerStart call"));
  CHECK_THAT(manifest.capture->scope, Catch::Contains("so the capture takes the whole run"));
  CHECK(manifest.capture->windows.size() == 1);
  CHECK(manifest.capture->windows.front().report == "nsys/discovery/profile.nsys-rep");
  const auto ncu = ncu_profile_argv(bench);
  CHECK_FALSE(has(ncu, "--profile-from-start"));
  CHECK_FALSE(has(ncu, "--nvtx-include"));
  check_inferred_headline(bench.main(), recorded_window_steps());
}

TEST_CASE("the serving preset's window holding only CCCL's ranges: the whole window is the stage, steps inferred") {
  Bench bench;
  bench.config.nsys.capture_range = NsysCaptureRange::cuda_profiler_api;
  bench.config.run.stage = std::string(kAutoStage);
  bench.config.ncu.nvtx_include = {"decode_batch/"};
  TempDir exports;
  const auto window = export_without_own_ranges(exports.path(), "window", {.cccl_scans = true});
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("cudaProfilerApi"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  script_exports(bench, window, window);
  bench.script_ncu_report();
  bench.run();
  const RunManifest manifest = bench.manifest();
  REQUIRE(stage_of(manifest, "nsys").status == StageStatus::ok);
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->scope.empty());  // the configured capture: nothing for the run to follow
  CHECK(manifest.capture->whole_window_selection);
  CHECK_FALSE(manifest.capture->discovered_stage.has_value());  // never the scan
  CHECK_THAT(manifest.capture->stage_choice,
             Catch::StartsWith("the capture holds no NVTX range of the workload's own, only library ranges "
                               "(`CCCL:cub::DeviceScan::InclusiveScan` (CCCL))"));
  CHECK_FALSE(has(ncu_profile_argv(bench), "--nvtx-include"));
  // report.json lists the scan, marked; the stage table shows it as CCCL's.
  const auto report = boost::json::parse(read_file(bench.main() / "analysis/report.json")).as_object();
  bool marked = false;
  for (const auto& stage : report.at("stages").as_array())
    if (stage.at("name").as_string() == "cub::DeviceScan::InclusiveScan") marked = stage.at("library").as_string() == "CCCL";
  CHECK(marked);
  check_inferred_headline(bench.main(), recorded_window_steps());
}

// The same window with nothing to cut steps at (no copy, no synchronisation): the run says the inference found
// none, not that the capture lacks a range named like a step kind (its only ranges are CCCL's).
TEST_CASE("the serving preset's window of CCCL's ranges with no step to infer: the run says what the inference lacked") {
  Bench bench;
  bench.config.nsys.capture_range = NsysCaptureRange::cuda_profiler_api;
  bench.config.run.stage = std::string(kAutoStage);
  TempDir exports;
  const auto window = export_without_own_ranges(exports.path(), "window", {.cccl_scans = true, .unsynchronised = true});
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("cudaProfilerApi"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  script_exports(bench, window, window);
  bench.script_ncu_report();
  bench.run();
  CHECK_FALSE(fs::exists(bench.main() / "analysis/step_kinds.json"));
  const std::string steps = read_file(bench.main() / "analysis/step_kinds.md");
  CHECK_THAT(steps, Catch::Contains("none could be inferred from its launches"));
  CHECK_THAT(steps, !Catch::Contains("no NVTX range named like one"));
}

TEST_CASE("a workload with ranges of its own, none the gate: still the diagnosis, and ncu does not replay for nothing") {
  // (ncu's skip is ncu_pass.cpp's unopened_gate_filter: its --nvtx-include names the gate that never opened.)
  Bench bench;
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("nvtx"), no_report());
  bench.runner.on(ungated_capture(), report_at(bench.main() / "nsys/discovery/profile.nsys-rep"));
  const fs::path engine = data_path(kRecordedServingWindow);  // the engine's own scheduler_step > *_batch ranges
  script_exports(bench, engine, engine);
  bench.script_ncu_report();
  bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::failed);
  CHECK_THAT(nsys.reason, Catch::Contains("run.stage=decode_batch"));
  // Discovery came first and showed that `decode` is not among the ranges: no capture was gated on it.
  CHECK(bench.runs_of(nsys_capture()).size() == 1);
  CHECK_THAT(nsys.reason, Catch::StartsWith("the NVTX gate nsys.nvtx_capture=\"decode\" would never open (the "
                                            "workload does not emit its range), so no capture was gated on it."));
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->scope.empty());
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(ncu.status == StageStatus::skipped);
  CHECK_THAT(ncu.reason, Catch::Contains("never opened, so ncu's --nvtx-include decode/ cannot match either"));
  CHECK(bench.runs_of([](const ProcessSpec& spec) { return command_is("ncu")(spec) && argv_contains("-o")(spec); })
            .empty());
}

// The zoo's Hugging Face generate() recorded on the H100 (tests/data/zoo): the whole run, its only range CCCL's scan
// x2, no window. With the defaults: the gate never opens, discovery is the whole run, and the headline counts the
// steps the step-inference oracle counts (tests/tools/zoo_steps_expected.py), not the scan.
TEST_CASE("defaults on a recorded generate() whole run: the whole run, the steps the oracle counts, not the scan") {
  Bench bench;
  const fs::path whole = data_path("zoo/hf_dynamic_whole.sqlite");
  run_with_unopened_gate(bench, whole);
  const RunManifest manifest = bench.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys: " << nsys.reason);
  REQUIRE(nsys.status == StageStatus::ok);
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::none);
  CHECK_THAT(manifest.capture->scope, Catch::Contains("only library ranges (`CCCL:cub::DeviceScan::InclusiveScan` x2 (CCCL))"));
  CHECK_FALSE(has(ncu_profile_argv(bench), "--nvtx-include"));
  check_inferred_headline(bench.main(), oracle_text("zoo_steps", "hf_dynamic_whole: ", "steps"));
}

// A recorded whole run of generate() with its own window on the H100 (a warm-up generate() before the window, the
// measured one inside): the timeline restricted to the window holds the measured call's steps alone, as many as the
// oracle counts between its cudaProfilerStart and Stop, where the whole run holds twice as many.
TEST_CASE("defaults on a recorded generate() whole run with a window: the measured call's steps, from one capture") {
  Bench bench;
  const fs::path whole = data_path("zoo/hf_small_whole_window.sqlite");
  run_with_unopened_gate(bench, whole);
  const RunManifest manifest = manifest_with_nsys_ok(bench);
  CHECK(bench.runs_of(nsys_capture()).size() == 1);
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::cuda_profiler_api);
  REQUIRE(manifest.capture->restricted_window.has_value());
  CHECK(manifest.capture->restricted_window->start_ns ==
        std::stoll(oracle_text("restrict_window", "hf_small_whole_window in its window: ", "start")));
  CHECK(manifest.capture->restricted_window->end_ns ==
        std::stoll(oracle_text("restrict_window", "hf_small_whole_window in its window: ", "end")));
  CHECK(count_rows(bench.main() / "nsys/profile.sqlite", "CUPTI_ACTIVITY_KIND_KERNEL") ==
        std::stoll(oracle_text("restrict_window", "hf_small_whole_window in its window: ", "window_capture_kernels")));
  check_inferred_headline(bench.main(), oracle_text("zoo_steps", "hf_small_whole_window in its window: ", "steps"));
}

// The serving preset on the recorded generate() window (the issue's run: "cub::DeviceScan::InclusiveScan: 52.5 us per
// step"): the window is the stage and the headline its inferred steps, as many as the oracle's.
TEST_CASE("the serving preset on a recorded generate() window: the headline is the window's steps, not the scan") {
  Bench bench;
  bench.config.nsys.capture_range = NsysCaptureRange::cuda_profiler_api;
  bench.config.run.stage = std::string(kAutoStage);
  const fs::path window = data_path("zoo/hf_dynamic_window.sqlite");
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("cudaProfilerApi"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  script_exports(bench, window, window);
  bench.script_ncu_report();
  bench.run();
  const RunManifest manifest = bench.manifest();
  REQUIRE(stage_of(manifest, "nsys").status == StageStatus::ok);
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->whole_window_selection);
  CHECK_FALSE(manifest.capture->discovered_stage.has_value());
  check_inferred_headline(bench.main(), oracle_text("zoo_steps", "hf_dynamic_window: ", "steps"));
}

// The serving preset's window never opened and the workload has ranges of its own (the engine's): the diagnosis, and
// no ncu, which would run with --profile-from-start off waiting for that window.
TEST_CASE("a cudaProfilerApi window that never opens on a workload with ranges: no ncu replay for nothing") {
  Bench bench;
  bench.config.nsys.capture_range = NsysCaptureRange::cuda_profiler_api;
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("cudaProfilerApi"), no_report());
  bench.runner.on(ungated_capture(), report_at(bench.main() / "nsys/discovery/profile.nsys-rep"));
  const fs::path engine = data_path(kRecordedServingWindow);
  script_exports(bench, engine, engine);
  bench.script_ncu_report();
  bench.run();
  const RunManifest manifest = bench.manifest();
  CHECK(stage_of(manifest, "nsys").status == StageStatus::failed);
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(ncu.status == StageStatus::skipped);
  CHECK_THAT(ncu.reason, Catch::Contains("the cudaProfilerApi window never opened, so ncu, which profiles only inside "
                                         "it (--profile-from-start off), would profile no kernel"));
}

TEST_CASE("a fork-started worker nsys did not trace: the run captures again with forks traced, by itself") {
  Bench bench;
  bench.environment.nvidia_driver_present = true;  // on a machine without a GPU no capture holds a kernel anyway
  TempDir exports;
  const auto front = export_without_own_ranges(exports.path(), "front", {.front_only = true});
  const auto engine = export_without_own_ranges(exports.path(), "engine", {.profiler_window = true});
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("nvtx"), no_report());
  bench.runner.on(ungated_capture(), report_at(bench.main() / "nsys/discovery/profile.nsys-rep"));
  bench.runner.on(capture_range("cudaProfilerApi"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  // What nsys 2025.3.1 records of the engine: the front alone, unless the capture traces forked children.
  int discovery_exports = 0;
  bench.runner.on_first(command_is("nsys", {"export"}), FakeAnswer::exiting(0).doing([&](const ProcessSpec& spec) {
    const std::string output = argument_after(spec, "--output");
    const bool discovery = output.find("discovery") != std::string::npos;
    const fs::path source = discovery && discovery_exports++ == 0 ? front : engine;
    fs::copy_file(source, output, fs::copy_options::overwrite_existing);
  }));
  bench.script_ncu_report();
  const RunSummary summary = bench.run();
  const RunManifest manifest = manifest_with_nsys_ok(bench);

  // Discovery, then discovery tracing forks, restricted to the workload's window: forks traced from the second on.
  const auto captures = bench.runs_of(nsys_capture());
  REQUIRE(captures.size() == 2);
  CHECK_FALSE(has(captures[0], "--trace-fork-before-exec=true"));
  CHECK_FALSE(has_argument(captures[1], "--capture-range"));
  CHECK(has(captures[1], "--trace-fork-before-exec=true"));
  CHECK(discovery_exports == 2);

  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->learned_nsys_arguments == std::vector<std::string>{"--trace-fork-before-exec=true"});
  CHECK(manifest.capture->gate == CaptureGateKind::cuda_profiler_api);
  CHECK(manifest.capture->restricted_window.has_value());
  CHECK_THAT(manifest.capture->scope, Catch::Contains("it calls cudaProfilerStart (1x), so the capture follows its window"));
  const auto said = std::find_if(summary.notes.begin(), summary.notes.end(), [](const std::string& note) {
    return note.find("holds no CUDA kernel although this machine has an NVIDIA GPU") != std::string::npos;
  });
  REQUIRE(said != summary.notes.end());
  CHECK_THAT(*said, Catch::Contains("with it the capture holds 3600 kernels"));
  CHECK(stage_of(manifest, "select").status == StageStatus::ok);
  CHECK(stage_of(manifest, "ncu").status == StageStatus::ok);
}

TEST_CASE("a whole run with no kernel on a machine without a GPU: no second capture for forks") {
  Bench bench;
  bench.environment.nvidia_driver_present = false;
  TempDir exports;
  run_with_unopened_gate(bench, export_without_own_ranges(exports.path(), "front", {.front_only = true}));
  const auto captures = bench.runs_of(nsys_capture());
  REQUIRE(captures.size() == 1);  // discovery alone
  for (const auto& argv : captures) CHECK_FALSE(has(argv, "--trace-fork-before-exec=true"));
  REQUIRE(bench.manifest().capture.has_value());
  CHECK(bench.manifest().capture->learned_nsys_arguments.empty());
}

// A workload that names `decode` itself but writes no llmprof metrics (its bare run names no range): discovery comes
// first, sees the gate's range, and the gated capture follows; the run goes on with it as with any opened gate.
TEST_CASE("no metrics but the gate's own range: discovery, then the gated capture opens and the run goes on with it") {
  Bench bench;
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("nvtx"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  bench.runner.on(ungated_capture(), report_at(bench.main() / "nsys/discovery/profile.nsys-rep"));
  const fs::path decode = data_path("nsys-sqlite/eager.sqlite");  // the 1b decode: decode > decode_step > ...
  script_exports(bench, decode, decode);
  bench.script_ncu_report();
  const RunSummary summary = bench.run();
  const RunManifest manifest = manifest_with_nsys_ok(bench);
  const auto captures = bench.runs_of(nsys_capture());
  REQUIRE(captures.size() == 2);
  CHECK_FALSE(has_argument(captures[0], "--capture-range"));
  CHECK(has(captures[1], "--capture-range=nvtx"));
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::nvtx);
  CHECK(manifest.capture->gate_opened);
  CHECK_FALSE(manifest.capture->ungated_rerun);
  CHECK(manifest.capture->scope.empty());
  CHECK(manifest.capture->windows.front().report == "nsys/profile.nsys-rep");
  CHECK(std::any_of(summary.notes.begin(), summary.notes.end(), [](const std::string& note) {
    return note.find("discovery saw `decode` among the workload's ranges: capturing gated on it") != std::string::npos;
  }));
}

// A workload whose bare run named its ranges (it writes llmprof metrics) gets the gated capture first, as configured:
// discovery is only for names nobody told the run.
TEST_CASE("metrics naming the gate's range: the gated capture first, no discovery") {
  Bench bench;
  bench.script_workload();
  bench.runner.on(capture_range("nvtx"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  const fs::path decode = data_path("nsys-sqlite/eager.sqlite");
  script_exports(bench, decode, decode);
  bench.script_ncu_report();
  bench.run();
  const RunManifest manifest = manifest_with_nsys_ok(bench);
  const auto captures = bench.runs_of(nsys_capture());
  REQUIRE(captures.size() == 1);
  CHECK(has(captures[0], "--capture-range=nvtx"));
  CHECK_FALSE(fs::exists(bench.main() / "nsys/discovery"));
}

// A gate the user set to a range of their own is tried first even when the bare run names no range: it names a range
// they know the workload emits.
TEST_CASE("no metrics but a gate set to another range: the gated capture first, no discovery") {
  Bench bench;
  bench.config.nsys.nvtx_capture = "decode_step";
  script_uninstrumented_workload(bench);
  bench.runner.on(capture_range("nvtx"), report_at(bench.main() / "nsys/profile.nsys-rep"));
  const fs::path decode = data_path("nsys-sqlite/eager.sqlite");
  script_exports(bench, decode, decode);
  bench.script_ncu_report();
  bench.run();
  const auto captures = bench.runs_of(nsys_capture());
  REQUIRE(captures.size() == 1);
  CHECK(has(captures[0], "--nvtx-capture=decode_step"));
  CHECK_FALSE(fs::exists(bench.main() / "nsys/discovery"));
}
