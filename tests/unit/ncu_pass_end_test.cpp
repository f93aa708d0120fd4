// The ncu stage's pass ends on the pipeline bench (fake runner): a pass ends its workload once its planned
// launches are profiled, every pass has a bound (ncu.pass_timeout_s, else from its estimate) past which the runner
// ends the workload and ncu keeps what it profiled, ncu killed past its own timeout keeps a report it wrote, and
// ncu is not run where the NVTX gate it would filter on never opened.
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "fake_process_runner.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/kernel_name.hpp"
#include "llmprof/logging.hpp"
#include "pipeline/ncu_pass.hpp"
#include "pipeline_bench.hpp"
#include "run_manifest_reading.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

struct PlannedPass {
  std::vector<std::string> kernels;  // nsys names
  std::int64_t launches = 0;
};

// The first pass the plan makes on this bench's fixtures, from a run of its own.
PlannedPass first_planned_pass() {
  Bench bench;
  script_planned_bench(bench);
  bench.script_ncu_report();
  bench.run();
  const auto plan = boost::json::parse(read_file(bench.main() / "ncu/plan.json")).as_object();
  const auto& pass = plan.at("passes").as_array().at(0).as_object();
  PlannedPass planned;
  for (const auto& kernel : pass.at("kernels").as_array()) planned.kernels.emplace_back(kernel.as_string());
  planned.launches = pass.at("profiled_launches").as_int64();
  return planned;
}

// ncu's progress lines for `count` launches of `kernels` in turn, by function name as ncu prints them.
std::vector<std::string> progress_lines(const std::vector<std::string>& kernels, std::int64_t count,
                                        std::int64_t first = 0) {
  std::vector<std::string> lines;
  for (std::int64_t i = first; i < first + count; ++i)
    lines.push_back("==PROF== Profiling \"" + kernel_function_name(kernels[std::size_t(i) % kernels.size()]) +
                    "\" - " + std::to_string(i) + " (" + std::to_string(i + 1) + "/" + std::to_string(i + 1) +
                    "): 0%....50%....100% - 17 passes");
  return lines;
}

}  // namespace

TEST_CASE("ncu plan: a pass whose planned launches are all profiled ends the workload, not ncu, and stays ok") {
  const PlannedPass planned = first_planned_pass();
  REQUIRE(planned.launches >= 2);
  Bench bench;
  script_planned_bench(bench);
  bench.config.ncu.workload_end_grace_s = 3;
  // ncu goes on profiling (the workload keeps launching) until its workload is ended; then it says the
  // application's exit code (15, SIGTERM), still writes its report and exits 15.
  std::vector<std::string> lines = {"==PROF== Connected to process 1 (/bin/workload)"};
  for (auto& line : progress_lines(planned.kernels, planned.launches + 5)) lines.push_back(line);
  lines.push_back("==PROF== Disconnected from process 1");
  const std::string report_line = "==PROF== Report: " + (bench.main() / "ncu/profile.ncu-rep").string();
  lines.push_back(report_line);
  bench.runner.on(ncu_profile(true), FakeAnswer::printing(lines)
                                         .writing("{output}.ncu-rep", "ncu report")
                                         .when_descendants_end({"==PROF== Disconnected from process 1",
                                                                "==ERROR== The application returned an error code (15).",
                                                                report_line},
                                                               15));
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  INFO(ncu.reason);
  CHECK(ncu.status == StageStatus::ok);
  CHECK(summary.outcome == RunOutcome::ok);
  // The request went with the spec, with the configured grace; the extra launches were never reached.
  const auto specs = bench.runner.runs();
  const auto pass = std::find_if(specs.begin(), specs.end(), [](const ProcessSpec& spec) { return ncu_profile(true)(spec); });
  REQUIRE(pass != specs.end());
  REQUIRE(pass->end_descendants);
  CHECK(pass->end_descendants->requested());
  CHECK(pass->descendants_kill_grace == std::chrono::milliseconds(3000));
  const std::string log = read_file(bench.main() / "ncu/profile.log");
  CHECK(log.find(" - " + std::to_string(planned.launches - 1) + " (") != std::string::npos);
  CHECK(log.find(" - " + std::to_string(planned.launches) + " (") == std::string::npos);
  const std::string ending =
      "pass 1 ended the workload after its " + std::to_string(planned.launches) + " planned launches at 0 s";
  // The plan's pass first; the recovery pass and the follow-up pass the recorded CSV leaves (nc1 has no row of
  // some planned kernels) end theirs too, each at its own launches: 1 planned by the recovery pass, which meets
  // its kernel in none of the fake's lines and ends at twice that, and the follow-up's --launch-count 1.
  REQUIRE(ncu.workload_endings.size() == 3);
  CHECK_THAT(ncu.workload_endings[0], Catch::StartsWith(ending));
  CHECK_THAT(ncu.workload_endings[0], Catch::Contains("exit code 15"));
  CHECK_THAT(ncu.workload_endings[1], Catch::StartsWith("the recovery pass ended the workload after its 1 planned "
                                                        "launches at 0 s, at 2 profiled launches (2x the plan)"));
  CHECK_THAT(ncu.workload_endings[2], Catch::StartsWith("follow-up pass 1 (") &&
                                          Catch::Contains(") ended the workload after its 1 planned launches"));
  const auto plan = boost::json::parse(read_file(bench.main() / "ncu/plan.json")).as_object();
  REQUIRE(plan.at("check").at("workload_endings").as_array().size() == 1);
  CHECK(plan.at("check").at("workload_endings").as_array()[0].as_string() == ending);
  CHECK_THAT(read_file(bench.main() / "ncu/plan.log"), Catch::Contains(ending));
  CHECK(fs::exists(bench.main() / "ncu/raw.csv"));
  // Each pass's estimate beside its measured time and its first progress line (the bench's clock stands still).
  const auto& timings = plan.at("check").at("pass_timings").as_array();
  REQUIRE(timings.size() == 1);
  CHECK(timings[0].at("estimated_seconds").as_double() == plan.at("passes").as_array()[0].at("estimated_seconds").as_double());
  CHECK(timings[0].at("first_launch_seconds").is_number());
  CHECK_THAT(read_file(bench.main() / "ncu/plan.log"), Catch::Contains("  pass 1: estimated "));
}

TEST_CASE("ncu plan: a pass whose workload ends before its plan is met runs to the end and the check names the rest") {
  const PlannedPass planned = first_planned_pass();
  REQUIRE(planned.launches >= 2);
  Bench bench;
  script_planned_bench(bench);
  // Only the first kernel's launch comes before the workload exits by itself.
  std::vector<std::string> lines = {"==PROF== Connected to process 1 (/bin/workload)"};
  for (auto& line : progress_lines(planned.kernels, 1)) lines.push_back(line);
  lines.push_back("==PROF== Disconnected from process 1");
  lines.push_back("==PROF== Report: " + (bench.main() / "ncu/profile.ncu-rep").string());
  bench.runner.on(ncu_profile(true), FakeAnswer::printing(lines)
                                         .writing("{output}.ncu-rep", "ncu report")
                                         .when_descendants_end({"never printed"}, 15));
  bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  INFO(ncu.reason);
  CHECK(ncu.status == StageStatus::ok);
  // Pass 1 ran to its end; only the recovery and follow-up passes after it ended theirs, at their launches.
  CHECK(std::none_of(ncu.workload_endings.begin(), ncu.workload_endings.end(),
                     [](const std::string& ending) { return ending.starts_with("pass 1 "); }));
  const auto specs = bench.runner.runs();
  const auto pass = std::find_if(specs.begin(), specs.end(), [](const ProcessSpec& spec) { return ncu_profile(true)(spec); });
  REQUIRE(pass != specs.end());
  REQUIRE(pass->end_descendants);
  CHECK_FALSE(pass->end_descendants->requested());
  // The recorded CSV (nc1) holds rows of some planned kernels only: the check names the others.
  const auto plan = boost::json::parse(read_file(bench.main() / "ncu/plan.json")).as_object();
  CHECK(plan.at("check").at("workload_endings").as_array().empty());
  CHECK(plan.at("check").at("kernels_without_rows").as_array().size() + plan.at("check").at("not_profiled").as_array().size() > 0);
  CHECK_THAT(read_file(bench.main() / "ncu/plan.log"), Catch::Contains("not profiled:"));
}

TEST_CASE("ncu plan: ncu.end_workload_when_planned = false lets every pass run to its end") {
  const PlannedPass planned = first_planned_pass();
  Bench bench;
  script_planned_bench(bench);
  bench.config.ncu.end_workload_when_planned = false;
  std::vector<std::string> lines = {"==PROF== Connected to process 1 (/bin/workload)"};
  for (auto& line : progress_lines(planned.kernels, planned.launches + 2)) lines.push_back(line);
  lines.push_back("==PROF== Report: " + (bench.main() / "ncu/profile.ncu-rep").string());
  bench.runner.on(ncu_profile(true), FakeAnswer::printing(lines).writing("{output}.ncu-rep", "ncu report"));
  bench.run();
  const auto specs = bench.runner.runs();
  const auto pass = std::find_if(specs.begin(), specs.end(), [](const ProcessSpec& spec) { return ncu_profile(true)(spec); });
  REQUIRE(pass != specs.end());
  // The pass keeps its bound, which the runner would reach by itself; nothing asked for the ending.
  REQUIRE(pass->end_descendants);
  CHECK_FALSE(pass->end_descendants->requested());
  CHECK(pass->end_descendants_after.has_value());
  CHECK(stage_of(bench.manifest(), "ncu").workload_endings.empty());
}

TEST_CASE("ncu plan: a stage past twice its estimate says so while running and in the stage's warnings") {
  Bench bench;
  script_planned_bench(bench);
  // Each profiled launch takes an hour by the bench's clock: far past any estimate.
  std::vector<std::string> lines = {"==PROF== Connected to process 1 (/bin/workload)"};
  for (auto& line : progress_lines({"reduce_kernel", "gemm"}, 2)) lines.push_back(line);
  lines.push_back("==PROF== Report: " + (bench.main() / "ncu/profile.ncu-rep").string());
  bench.runner.on(ncu_profile(true), FakeAnswer::printing(lines).writing("{output}.ncu-rep", "ncu report").doing(
                                         [&bench](const ProcessSpec&) { bench.clock.advance(std::chrono::hours(1)); }));
  bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(std::any_of(ncu.warnings.begin(), ncu.warnings.end(), [](const std::string& warning) {
    return warning.find("more than 2x the plan's estimate") != std::string::npos;
  }));
  bool said = false;
  for (const auto& event : bench.events)
    said = said || format_progress_event(event).find("past 2x the estimate") != std::string::npos;
  CHECK(said);
}

TEST_CASE("ncu plan: a pass ends at its planned launches once each of its kernels came, and at twice them if not") {
  NcuPlanPass pass;
  pass.kernels = {"void at::native::reduce_kernel<512, 1>(int)", "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT"};
  pass.profiled_launches = 3;
  const auto now = std::chrono::steady_clock::time_point{} + std::chrono::seconds(20);
  SECTION("every kernel met: the end comes at the planned count, ncu's cut names matching by prefix") {
    detail::NcuPassEnd end;
    end.planned_launches = pass.profiled_launches;
    for (const auto& kernel : pass.kernels) end.expect_kernel(kernel);
    end.finished_launch("reduce_kernel", now);
    end.finished_launch("reduce_kernel", now);
    CHECK_FALSE(end.ending->requested());
    end.finished_launch("nvjet_sm90_hsh_64x8_64x16_4x1...", now);
    CHECK(end.ending->requested());
    CHECK_FALSE(end.ended_at_bound);
    CHECK(end.describe() == "pass 1 ended the workload after its 3 planned launches at 20 s");
  }
  SECTION("a kernel never met: the pass still ends, at twice its planned launches, and says so") {
    detail::NcuPassEnd end;
    end.pass = 1;
    end.planned_launches = pass.profiled_launches;
    for (const auto& kernel : pass.kernels) end.expect_kernel(kernel);
    for (int i = 0; i < 5; ++i) end.finished_launch("reduce_kernel", now);
    CHECK_FALSE(end.ending->requested());
    end.finished_launch("reduce_kernel", now);  // the 6th: 2 x 3
    CHECK(end.ending->requested());
    CHECK(end.ended_at_bound);
    CHECK(end.describe() ==
          "pass 2 ended the workload after its 3 planned launches at 20 s, at 6 profiled launches (2x the plan) "
          "with 1 kernel(s) not met");
  }
  SECTION("a pass by mangled name: ncu's progress lines give mangled names, which meet their kernels") {
    // ncu 2025.3.1 with --kernel-name-base mangled printed the mangled name on the H100; matched by function
    // name only, no kernel was ever met and the 1b decode's passes ran to the workload's end.
    detail::NcuPassEnd end;
    end.planned_launches = 2;
    end.expect_kernel(pass.kernels[0], {"_ZN2at6native13reduce_kernelILi512ELi1EEEvi"});
    end.expect_kernel(pass.kernels[1], {"nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT"});
    end.finished_launch("_ZN2at6native13reduce_kernelILi512ELi1EEEvi", now);
    end.finished_launch("_ZN2at6native13reduce_kernelILi512ELi1EEEvi", now);
    CHECK_FALSE(end.ending->requested());
    CHECK(end.kernels_unseen.size() == 1);
    end.finished_launch("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT", now);
    CHECK(end.ending->requested());
    CHECK_FALSE(end.ended_at_bound);
  }
  SECTION("planned_launches 0 (ncu.end_workload_when_planned = false) never ends a pass") {
    detail::NcuPassEnd end;
    for (int i = 0; i < 10; ++i) end.finished_launch("reduce_kernel", now);
    CHECK_FALSE(end.ending->requested());
  }
}

namespace {

// The spec of the first ncu profile run (the plan's first pass, or the bounded plan's pass).
ProcessSpec first_ncu_pass(const Bench& bench) {
  const auto specs = bench.runner.runs();
  const auto pass = std::find_if(specs.begin(), specs.end(), [](const ProcessSpec& spec) { return ncu_profile(true)(spec); });
  REQUIRE(pass != specs.end());
  return *pass;
}

bool has_line(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("ncu plan: a pass whose plan is never met is ended at its bound; ncu keeps what it profiled and the stage "
          "says which bound ended it and how to raise it") {
  const PlannedPass planned = first_planned_pass();
  REQUIRE(planned.launches >= 2);
  Bench bench;
  script_planned_bench(bench);
  // One planned launch is profiled, then none: the workload never ends by itself (a serving engine), so only the
  // runner's limit ends it, after which ncu reports the application's code and writes its report.
  std::vector<std::string> lines = {"==PROF== Connected to process 1 (/bin/workload)"};
  for (auto& line : progress_lines(planned.kernels, 1)) lines.push_back(line);
  const std::string report_line = "==PROF== Report: " + (bench.main() / "ncu/profile.ncu-rep").string();
  bench.runner.on_first(ncu_profile(true),
                        FakeAnswer::printing(lines)
                            .writing("{output}.ncu-rep", "ncu report")
                            .when_descendants_end({"==PROF== Disconnected from process 1",
                                                   "==ERROR== The application returned an error code (15).",
                                                   report_line},
                                                  15)
                            .never_ending());
  bench.script_ncu_report();  // the recovery and follow-up passes end by themselves
  std::string bound_text;
  double bound_s = 0;
  SECTION("the default bound: three times the pass's estimate, at least a minute past it") {
    bench.run();
    const auto plan = boost::json::parse(read_file(bench.main() / "ncu/plan.json")).as_object();
    const double estimate = plan.at("passes").as_array()[0].at("estimated_seconds").to_number<double>();
    bound_s = std::max(3 * estimate, estimate + 60);
    bound_text = "(3x its estimate of ";
  }
  SECTION("ncu.pass_timeout_s sets it") {
    bench.config.ncu.pass_timeout_s = 42;
    bench.run();
    bound_s = 42;
    bound_text = "pass 1 reached its bound of 42 s (ncu.pass_timeout_s) after 1 profiled launches of its " +
                 std::to_string(planned.launches) + " planned";
  }
  const ProcessSpec pass = first_ncu_pass(bench);
  REQUIRE(pass.end_descendants_after);
  CHECK(pass.end_descendants_after->count() == Approx(bound_s * 1000).margin(1));
  // ncu itself only a minute past the bound and the workload's grace (3 s).
  REQUIRE(pass.timeout);
  CHECK(pass.timeout->count() == Approx((bound_s + 3 + 60) * 1000).margin(1));
  const RunManifest manifest = bench.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  INFO(ncu.reason);
  CHECK(ncu.status == StageStatus::ok);
  CHECK(fs::exists(bench.main() / "ncu/raw.csv"));  // the report it wrote is exported
  REQUIRE_FALSE(ncu.workload_endings.empty());
  CHECK_THAT(ncu.workload_endings[0], Catch::StartsWith("pass 1 reached its bound of ") &&
                                          Catch::Contains(bound_text) &&
                                          Catch::Contains("raise ncu.pass_timeout_s") &&
                                          Catch::Contains("ended at its limit"));
  CHECK(has_line(ncu.warnings, "pass 1 reached its bound of "));
  CHECK_THAT(read_file(bench.main() / "ncu/plan.log"), Catch::Contains("pass 1 reached its bound of "));
}

TEST_CASE("ncu killed past its own timeout: a report it wrote is kept, else the stage names both limits") {
  Bench bench;
  script_planned_bench(bench);
  SECTION("with a report") {
    bench.runner.on_first(ncu_profile(true), FakeAnswer::timing_out().writing("{output}.ncu-rep", "ncu report"));
    bench.script_ncu_report();
    bench.run();
    const RunManifest manifest = bench.manifest();
    const StageRecord& ncu = stage_of(manifest, "ncu");
    INFO(ncu.reason);
    CHECK(ncu.status == StageStatus::ok);
    CHECK(fs::exists(bench.main() / "ncu/raw.csv"));
    CHECK(has_line(ncu.warnings, "ncu ran past its timeout and was killed (pass 1's bound "));
    CHECK(has_line(ncu.warnings, "ncu/profile.ncu-rep, which it had written, is kept"));
  }
  SECTION("without one") {
    bench.runner.on_first(ncu_profile(true), FakeAnswer::timing_out());
    bench.script_ncu_report();
    bench.run();
    const StageRecord ncu = stage_of(bench.manifest(), "ncu");
    CHECK(ncu.status == StageStatus::failed);
    CHECK_THAT(ncu.reason, Catch::Contains("ran past its timeout") && Catch::Contains("pass 1's bound ") &&
                               Catch::Contains("raise ncu.pass_timeout_s or ncu.timeout_s"));
    CHECK_FALSE(fs::exists(bench.main() / "ncu/raw.csv"));
  }
}

TEST_CASE("the bounded plan's pass ends its workload after its --launch-count launches") {
  Bench bench;
  bench.config.ncu.plan = NcuPlanMode::bounded;
  bench.script_workload();
  bench.script_nsys_report();
  std::vector<std::string> lines = {"==PROF== Connected to process 1 (/bin/workload)"};
  for (auto& line : progress_lines({"reduce_kernel", "gemm"}, 300)) lines.push_back(line);
  bench.runner.on_first(ncu_profile(true), FakeAnswer::printing(lines)
                                               .writing("{output}.ncu-rep", "ncu report")
                                               .when_descendants_end({"==PROF== Disconnected from process 1"}, 15));
  bench.script_ncu_report();
  bench.run();
  const ProcessSpec pass = first_ncu_pass(bench);
  const auto count = std::find(pass.argv.begin(), pass.argv.end(), "--launch-count");
  REQUIRE(count != pass.argv.end());
  const std::string launches = *(count + 1);
  const StageRecord ncu = stage_of(bench.manifest(), "ncu");
  INFO(ncu.reason);
  CHECK(ncu.status == StageStatus::ok);
  REQUIRE_FALSE(ncu.workload_endings.empty());
  CHECK_THAT(ncu.workload_endings[0],
             Catch::StartsWith("the ncu pass ended the workload after its " + launches + " planned launches"));
  // The lines after the last counted launch never came.
  const std::string log = read_file(bench.main() / "ncu/profile.log");
  CHECK(log.find(" - " + std::to_string(std::stoi(launches) - 1) + " (") != std::string::npos);
  CHECK(log.find(" - " + launches + " (") == std::string::npos);
}

TEST_CASE("ncu is not run where the NVTX gate it would filter on never opened") {
  Bench bench;
  bench.config.nsys.nvtx_capture = "decode";
  bench.config.ncu.nvtx_include = {"decode/"};
  bench.script_workload({"prefill"});
  bench.runner.on(nsys_capture(), FakeAnswer::printing({"Processing events...", "Generated:", "    No reports were generated"}));
  bench.script_ncu_report();
  bench.run();
  const RunManifest manifest = bench.manifest();
  CHECK(stage_of(manifest, "nsys").status == StageStatus::failed);
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(ncu.status == StageStatus::skipped);
  CHECK_THAT(ncu.reason, Catch::Contains("nsys's NVTX gate on `decode` never opened, so ncu's --nvtx-include "
                                         "decode/ cannot match either"));
  CHECK(bench.runs_of(ncu_profile(false)).empty());
  CHECK(bench.runs_of(ncu_profile(true)).empty());
}
