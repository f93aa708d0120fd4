// Sweeps on a batch scheduler: sweep.sbatch / merge.sbatch text (golden), their checks, sbatch
// submission on a scripted runner, one point into SWEEP/point-<I>/ (run once, resumed, never while
// another process runs it) and the index of the point directories.
#include "llmprof/sweep_batch.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "fake_process_runner.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/sweep.hpp"
#include "report_golden.hpp"
#include "rundir/run_lock.hpp"
#include "test_support.hpp"
#include "rundir/run_records.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

SweepBatchRequest request() {
  SweepBatchRequest request;
  request.deep_profile = "/opt/llmprof/bin/deep-profile";
  request.plan_file = "/home/user/plans/batch sweep.toml";  // a blank: quoted on the exec line
  request.sweep_directory = "/scratch/runs/sweep-batch";
  request.working_directory = "/home/user/work";
  request.points = 3;
  request.concurrency = 2;
  request.shared_arguments = {"--preset", "quick", "--set", "workload.example_args=[ '--batch', '4' ]"};
  request.workload = {"/opt/llmprof/bin/llmprof-decode", "--preset", "1b"};
  return request;
}

SweepBatchRequest request_in(const fs::path& sweep) {
  SweepBatchRequest in = request();
  in.sweep_directory = sweep;
  return in;
}

// A run.json in SWEEP/point-<index> with this status, as a run that got that far leaves it.
fs::path write_point_run(const fs::path& sweep, std::size_t index, RunStatus status) {
  const fs::path main = sweep_point_directory(sweep, index);
  RunManifest manifest;
  manifest.run_id = main.filename().string();
  manifest.status = status;
  write_file(main / "run.json", manifest_to_json(manifest));
  return main;
}

SweepPlan plan_of(std::size_t points) {
  SweepPlan plan;
  for (std::size_t i = 0; i < points; ++i) plan.points.push_back({"p" + std::to_string(i), {}});
  return plan;
}

// A point job whose workload and tools are answered by `runner` (no nsys/ncu on its PATH).
struct PointBench {
  TempDir temp;
  FakeProcessRunner runner;
  ManualClock clock;
  DeepProfileConfig config;
  DeepProfilerEnvironment environment;

  PointBench() {
    init_logging({LogLevel::error, true, nullptr});
    environment.path_variable = (temp / "empty-bin").string();
    environment.use_default_tool_locations = false;
    environment.attach_log_file = false;
    config.run.min_free_space_gb = 0;
    config.run.keep_newest_runs = 1;  // the job turns retention off: the other points must survive
    config.workload.argv = {"workload"};
    runner.on(command_is("nvidia-smi"),
              FakeAnswer::failing_to_start(make_error(ErrorCode::not_found, "nvidia-smi not found")));
    runner.on(command_is("workload"), FakeAnswer::printing({"done"}));
  }
  fs::path sweep() const { return temp.path() / "sweep"; }
  Result<SweepPointResult> run(std::size_t index) {
    SweepPointJob job(config, sweep(), index, runner, clock, {}, environment);
    return job.run();
  }
};

}  // namespace

TEST_CASE("sweep.sbatch is a job array over the points, one GPU each, a log per task", "[golden]") {
  check_golden("sweep.sbatch", render_sweep_array_script(request()));
}

TEST_CASE("merge.sbatch builds the index from the sweep directory", "[golden]") {
  check_golden("sweep-merge.sbatch", render_sweep_merge_script(request()));
}

TEST_CASE("without a concurrency limit the array line has no %K, and without a workload no --") {
  auto unlimited = request();
  unlimited.concurrency.reset();
  unlimited.workload.clear();
  const std::string script = render_sweep_array_script(unlimited);
  CHECK_THAT(script, Catch::Contains("#SBATCH --array=0-2\n"));
  CHECK_THAT(script, Catch::EndsWith("--point-index \"$SLURM_ARRAY_TASK_ID\"\n"));
}

TEST_CASE("point directories are SWEEP/point-<I> as the array task id spells I; SWEEP defaults from the plan name") {
  CHECK(sweep_point_directory("/s", 0) == fs::path("/s/point-0"));
  CHECK(sweep_point_directory("/s", 12) == fs::path("/s/point-12"));
  CHECK(default_sweep_directory("runs", "plans/batch.toml") == fs::path("runs/sweep-batch"));
}

TEST_CASE("the scripts are written executable with the logs directory Slurm will not create") {
  TempDir temp;
  auto scripts = write_sweep_batch_scripts(request_in(temp / "sweep"));
  REQUIRE(scripts);
  CHECK(scripts->array_script == temp / "sweep/sweep.sbatch");
  CHECK(read_file(scripts->array_script) == render_sweep_array_script(request_in(temp / "sweep")));
  CHECK(read_file(scripts->merge_script) == render_sweep_merge_script(request_in(temp / "sweep")));
  CHECK(fs::is_directory(temp / "sweep/logs"));
  struct stat info {};
  REQUIRE(::stat(scripts->array_script.c_str(), &info) == 0);
  CHECK((info.st_mode & S_IXUSR) != 0);
}

TEST_CASE("requests the scripts cannot express are refused with the reason") {
  TempDir temp;
  auto none = request_in(temp / "sweep");
  none.points = 0;
  auto zero = request_in(temp / "sweep");
  zero.concurrency = 0;
  auto blank = request_in(temp / "my sweep");
  auto percent = request_in(temp / "sweep-50%");
  auto relative = request_in("runs/sweep");
  struct Case {
    SweepBatchRequest request;
    std::string says;
  };
  for (const auto& [bad, says] : {Case{none, "no points"}, Case{zero, "at least 1"}, Case{blank, "#SBATCH line"},
                                  Case{percent, "#SBATCH line"}, Case{relative, "absolute path"}}) {
    auto written = write_sweep_batch_scripts(bad);
    REQUIRE_FALSE(written);
    CHECK(written.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(written.error().message, Catch::Contains(says));
  }
  CHECK_FALSE(fs::exists(temp / "my sweep"));
}

TEST_CASE("sbatch --parsable output gives the job id with or without a cluster name") {
  CHECK(*parse_sbatch_job_id("1234\n") == "1234");
  CHECK(*parse_sbatch_job_id("77;cluster-a\n") == "77");
  auto garbage = parse_sbatch_job_id("sbatch: error: invalid partition\n");
  REQUIRE_FALSE(garbage);
  CHECK(garbage.error().code == ErrorCode::parse_error);
  CHECK_THAT(garbage.error().hint, Catch::Contains("sinfo"));
}

TEST_CASE("submitting runs sbatch on the array, then on the merge job after any end of the array") {
  TempDir temp;
  auto scripts = write_sweep_batch_scripts(request_in(temp / "sweep"));
  REQUIRE(scripts);
  const fs::path sbatch = temp / "bin/sbatch";  // found on disk; the scripted runner answers for it
  write_file(sbatch, "#!/bin/sh\nexit 99\n");
  ::chmod(sbatch.c_str(), 0755);
  FakeProcessRunner runner;
  runner.on(argv_contains(scripts->array_script.string()), FakeAnswer::printing({"4242;llmprof"}));

  SECTION("both accepted") {
    runner.on(argv_contains(scripts->merge_script.string()), FakeAnswer::printing({"4243"}));
    auto submitted = submit_sweep_batch(scripts.value(), runner, sbatch.string());
    REQUIRE(submitted);
    CHECK(submitted->array_job_id == "4242");
    CHECK(submitted->merge_job_id == "4243");
    REQUIRE(runner.runs().size() == 2);
    CHECK(runner.runs()[0].argv ==
          std::vector<std::string>{sbatch.string(), "--parsable", scripts->array_script.string()});
    CHECK(runner.runs()[1].argv == std::vector<std::string>{sbatch.string(), "--parsable", "--dependency=afterany:4242",
                                                            scripts->merge_script.string()});
  }
  SECTION("the merge job refused: the error names the submitted array and how to finish by hand") {
    runner.on(argv_contains(scripts->merge_script.string()),
              FakeAnswer::exiting(1).with_stderr({"sbatch: error: Invalid dependency"}));
    auto submitted = submit_sweep_batch(scripts.value(), runner, sbatch.string());
    REQUIRE_FALSE(submitted);
    CHECK(submitted.error().code == ErrorCode::process_failed);
    CHECK_THAT(submitted.error().message,
               Catch::Contains("job array 4242 was submitted") && Catch::Contains("Invalid dependency"));
    CHECK_THAT(submitted.error().hint,
               Catch::Contains("sbatch --dependency=afterany:4242 ") && Catch::Contains("scancel 4242"));
  }
}

TEST_CASE("without sbatch nothing is submitted and the error says the scripts are there") {
  TempDir temp;
  auto scripts = write_sweep_batch_scripts(request_in(temp / "sweep"));
  REQUIRE(scripts);
  FakeProcessRunner runner;
  auto submitted = submit_sweep_batch(scripts.value(), runner, (temp / "no-such/sbatch").string());
  REQUIRE_FALSE(submitted);
  CHECK(submitted.error().code == ErrorCode::process_failed);
  CHECK(exit_code_for(submitted.error()) == exit_not_ready);
  CHECK_THAT(submitted.error().hint, Catch::Contains(scripts->array_script.string()));
  CHECK(runner.runs().empty());
}

TEST_CASE("a point runs into SWEEP/point-<I> with retention off") {
  PointBench bench;
  const fs::path other = write_point_run(bench.sweep(), 0, RunStatus::ok);
  auto result = bench.run(1);
  REQUIRE(result);
  CHECK_FALSE(result->already_finished);
  CHECK(result->main_directory == bench.sweep() / "point-1");
  REQUIRE(result->outcome.has_value());
  CHECK(result->status != RunStatus::running);
  auto manifest = manifest_from_json(read_file(bench.sweep() / "point-1/run.json"));
  REQUIRE(manifest);
  CHECK(manifest->run_id == "point-1");
  CHECK(manifest->status == result->status);
  CHECK(fs::exists(other / "run.json"));
}

TEST_CASE("a finished point is not run again, whatever it ended with") {
  for (RunStatus status : {RunStatus::ok, RunStatus::incomplete, RunStatus::failed}) {
    PointBench bench;
    write_point_run(bench.sweep(), 2, status);
    auto result = bench.run(2);
    REQUIRE(result);
    CHECK(result->already_finished);
    CHECK(result->status == status);
    CHECK(result->exit_code() == (status == RunStatus::ok ? exit_ok : exit_incomplete));
    CHECK(bench.runner.runs().empty());
  }
}

TEST_CASE("an unfinished point (killed or interrupted) is removed and run from the start") {
  for (RunStatus status : {RunStatus::running, RunStatus::interrupted}) {
    PointBench bench;
    const fs::path main = write_point_run(bench.sweep(), 0, status);
    write_file(main / "nsys/stale.txt", "left by the killed attempt");
    auto result = bench.run(0);
    REQUIRE(result);
    CHECK_FALSE(result->already_finished);
    CHECK_FALSE(fs::exists(main / "nsys/stale.txt"));
    CHECK_FALSE(bench.runner.runs().empty());
    CHECK(manifest_from_json(read_file(main / "run.json"))->status != RunStatus::running);
  }
}

TEST_CASE("a point whose run.json cannot be read is refused, naming the file, and nothing is deleted") {
  // A finished point with a damaged run.json was deleted whole (nsys report, SQLite) and run again,
  // silently; `run --resume` refuses the same file.
  PointBench bench;
  const fs::path main = write_point_run(bench.sweep(), 0, RunStatus::ok);
  write_file(main / "run.json", "{ \"schema\": \"llmprof.run/1\", \"status\": ");
  write_file(main / "nsys/profile.nsys-rep", "the point's report");
  auto result = bench.run(0);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(result.error().message, Catch::Contains((main / "run.json").string()));
  CHECK(fs::exists(main / "nsys/profile.nsys-rep"));
  CHECK(bench.runner.runs().empty());
}

TEST_CASE("a point another process is running is left alone") {
  PointBench bench;
  const fs::path main = write_point_run(bench.sweep(), 0, RunStatus::running);
  auto held = detail::RunLock::acquire(main / detail::kRunLockName);
  REQUIRE(held);
  auto result = bench.run(0);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::already_exists);
  CHECK_THAT(result.error().message, Catch::Contains("being run by another process"));
  CHECK(fs::exists(main / "run.json"));
  CHECK(bench.runner.runs().empty());
}

TEST_CASE("the index of the point directories lists every point, failed and missing ones with the reason") {
  TempDir temp;
  const fs::path sweep = temp / "sweep";
  write_point_run(sweep, 0, RunStatus::ok);
  write_point_run(sweep, 2, RunStatus::running);  // killed: nobody holds its lock
  write_point_run(sweep, 3, RunStatus::failed);
  auto index = merge_sweep_points(plan_of(4), sweep, "decode");
  REQUIRE(index);
  REQUIRE(index->rows.size() == 4);
  CHECK(index->rows[0].status == "ok");
  CHECK(index->rows[1].status == "failed");
  CHECK_THAT(index->rows[1].error, Catch::Contains("left no run.json") && Catch::Contains("logs/point-1.out"));
  CHECK(index->rows[2].status == "failed");
  CHECK_THAT(index->rows[2].error, Catch::Contains("stopped without finishing"));
  CHECK(index->rows[3].status == "failed");
  CHECK(index->rows[3].error.empty());
  CHECK_THAT(read_file(sweep / "index.md"), Catch::Contains("| p1 |"));
  CHECK(fs::exists(sweep / "index.json"));
}

TEST_CASE("a point still running elsewhere stays running in the index") {
  TempDir temp;
  const fs::path main = write_point_run(temp / "sweep", 0, RunStatus::running);
  auto held = detail::RunLock::acquire(main / detail::kRunLockName);
  REQUIRE(held);
  auto index = merge_sweep_points(plan_of(1), temp / "sweep", "decode");
  REQUIRE(index);
  CHECK(index->rows[0].status == "running");
  CHECK(index->rows[0].error.empty());
}
