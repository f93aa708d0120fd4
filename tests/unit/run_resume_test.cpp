// DeepProfiler::resume (`deep-profile run --resume MAIN`): a run that failed at ncu continues from its first
// stage that is not ok without running the workload bare or under nsys again, and every reason to refuse
// (workload or tools changed, nothing to resume, still running, no fingerprints) leaves MAIN as it was.
#include <catch2/catch.hpp>
#include <csignal>

#include "pipeline_bench.hpp"
#include "rundir/run_records.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

// A run whose ncu stage failed (ncu exits 1 the first time it profiles), everything else ok.
void run_with_failing_ncu(Bench& bench) {
  bench.script_workload();
  bench.script_nsys_report();
  bench.runner.on(ncu_profile(true), FakeAnswer::printing({"==ERROR== The application returned an error code (1)."}, 1),
                  1);
  bench.script_ncu_report();
  const RunSummary first = bench.run();
  REQUIRE(first.outcome == RunOutcome::incomplete);
  REQUIRE(stage_of(bench.manifest(), "ncu").status == StageStatus::failed);
}

std::size_t count_runs(const Bench& bench, const FakeMatcher& matcher, std::size_t from) {
  std::size_t count = 0;
  for (std::size_t i = from; i < bench.runner.runs().size(); ++i) count += matcher(bench.runner.runs()[i]) ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE("resume after a failed ncu runs select, ncu, analyze and report again, nothing before them") {
  Bench bench;
  run_with_failing_ncu(bench);
  const RunManifest before = bench.manifest();
  const std::size_t runs_before = bench.runner.runs().size();
  // The bench has no nvidia-smi; a recorded gpu_state.json stands in for the first run's snapshots.
  write_file(bench.main() / "gpu_state.json", "{\"schema\": \"llmprof.gpu_state/1\", \"snapshots\": []}\n");

  auto resumed = bench.resume();
  REQUIRE(resumed.has_value());
  CHECK(resumed->outcome == RunOutcome::ok);
  // Neither the bare workload nor nsys ran again; ncu did.
  CHECK(count_runs(bench, command_is("workload"), runs_before) == 0);
  CHECK(count_runs(bench, nsys_capture(), runs_before) == 0);
  CHECK(count_runs(bench, ncu_profile(true), runs_before) >= 1);

  const RunManifest after = bench.manifest();
  CHECK(after.status == RunStatus::ok);
  for (const char* kept : {"stage1", "nsys"}) {
    INFO(kept);
    const StageRecord& old_record = stage_of(before, kept);
    const StageRecord& new_record = stage_of(after, kept);
    CHECK(new_record.status == StageStatus::ok);
    CHECK(new_record.started_utc == old_record.started_utc);
    CHECK(new_record.duration_s == old_record.duration_s);
    CHECK(new_record.artifacts == old_record.artifacts);
  }
  for (const char* rerun : {"probe", "select", "ncu", "analyze", "report"}) {
    INFO(rerun);
    CHECK(stage_of(after, rerun).status == StageStatus::ok);
  }
  REQUIRE(after.resumptions.size() == 1);
  const ResumptionRecord& resumption = after.resumptions.front();
  CHECK(resumption.from_stage == "select");  // ncu needs the selection's plan in memory: select runs again
  CHECK(resumption.attempts_directory == "attempts/1");
  REQUIRE(resumption.previous.size() == 4);
  CHECK(resumption.previous[1].name == "ncu");
  CHECK(resumption.previous[1].status == StageStatus::failed);
  // The failed attempt's files are kept aside, not overwritten.
  CHECK(fs::exists(bench.main() / "attempts/1/ncu/cmd.txt"));
  CHECK(fs::exists(bench.main() / "attempts/1/gpu_state.json"));
  CHECK(fs::exists(bench.main() / "attempts/1/nsys/selection.json"));
  CHECK(fs::exists(bench.main() / "ncu/raw.csv"));
  CHECK(fs::exists(bench.main() / "nsys/profile.nsys-rep"));  // nsys's files stay where they were

  SECTION("a run that finished ok has nothing to resume") {
    auto again = bench.resume();
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(again.error().message, Catch::Contains("nothing to resume"));
  }
}

TEST_CASE("resume refuses when the tools changed, naming the old and the new one, and leaves MAIN as it was") {
  Bench bench;
  run_with_failing_ncu(bench);
  const std::string manifest_text = read_file(bench.main() / "run.json");
  bench.runner.on_first(command_is("nsys", {"--version"}),
                        FakeAnswer::printing({"NVIDIA Nsight Systems version 2024.1.1.59-241133802077v0"}));
  auto resumed = bench.resume();
  REQUIRE_FALSE(resumed.has_value());
  CHECK(resumed.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(resumed.error().message, Catch::Contains("the profilers changed"));
  CHECK_THAT(resumed.error().message,
             Catch::Contains("2025.3.1") && Catch::Contains("-> ") && Catch::Contains("2024.1.1"));
  CHECK(read_file(bench.main() / "run.json") == manifest_text);
  CHECK_FALSE(fs::exists(bench.main() / "attempts"));
}

TEST_CASE("resume refuses when a file of the workload changed since the run started") {
  Bench bench;
  const fs::path script = bench.temp / "decode.py";
  write_file(script, "print('decode')\n");
  bench.config.workload.argv = {"workload", script.string()};
  bench.runner.on(command_is("workload"), FakeAnswer::printing({"done"}));
  run_with_failing_ncu(bench);
  write_file(script, "print('a different decode')\n");
  auto resumed = bench.resume();
  REQUIRE_FALSE(resumed.has_value());
  CHECK_THAT(resumed.error().message, Catch::Contains("the workload changed") && Catch::Contains(script.string()));
  CHECK_FALSE(fs::exists(bench.main() / "attempts"));

  SECTION("a different command is refused too") {
    write_file(script, "print('decode')\n");
    bench.config.workload.argv = {"workload", script.string(), "--batch", "8"};
    auto other = bench.resume();
    REQUIRE_FALSE(other.has_value());
    CHECK_THAT(other.error().message, Catch::Contains("workload command differs"));
  }
}

TEST_CASE("resume refuses a run that is still going and one recorded before fingerprints") {
  Bench bench;
  run_with_failing_ncu(bench);
  SECTION("another deep-profile holds run.lock") {
    auto holder = RunDirectory::open_to_resume(bench.main());
    REQUIRE(holder.has_value());
    auto resumed = bench.resume();
    REQUIRE_FALSE(resumed.has_value());
    CHECK_THAT(resumed.error().message, Catch::Contains("still going"));
  }
  SECTION("inputs recorded without file fingerprints") {
    RunManifest manifest = bench.manifest();
    manifest.workload.files.reset();
    write_file(bench.main() / "run.json", manifest_to_json(manifest));
    auto resumed = bench.resume();
    REQUIRE_FALSE(resumed.has_value());
    CHECK_THAT(resumed.error().message, Catch::Contains("predates run --resume"));
  }
}

TEST_CASE("a run whose ncu was killed by SIGTERM resumes at select; a missing nsys table moves it back to nsys") {
  Bench bench;
  bench.script_workload();
  bench.script_nsys_report();
  bench.runner.on(ncu_profile(true), FakeAnswer::killed_by(SIGTERM), 1);
  bench.script_ncu_report();
  const RunSummary first = bench.run();
  REQUIRE(first.outcome != RunOutcome::ok);
  REQUIRE(stage_of(bench.manifest(), "nsys").status == StageStatus::ok);
  const std::size_t runs_before = bench.runner.runs().size();

  SECTION("the nsys tables are there: select, ncu, analyze and report run again") {
    auto resumed = bench.resume();
    REQUIRE(resumed.has_value());
    CHECK(resumed->outcome == RunOutcome::ok);
    CHECK(count_runs(bench, command_is("workload"), runs_before) == 0);
    CHECK(count_runs(bench, nsys_capture(), runs_before) == 0);
    CHECK(bench.manifest().resumptions.front().from_stage == "select");
  }
  SECTION("a missing nsys table: nsys runs again, the workload bare does not") {
    for (const auto& entry : fs::directory_iterator(bench.main() / "nsys"))
      if (entry.path().filename().string().rfind("summary_", 0) == 0) fs::remove(entry.path());
    auto resumed = bench.resume();
    REQUIRE(resumed.has_value());
    CHECK(resumed->outcome == RunOutcome::ok);
    CHECK(count_runs(bench, command_is("workload"), runs_before) == 0);
    CHECK(count_runs(bench, nsys_capture(), runs_before) == 1);
    CHECK(bench.manifest().resumptions.front().from_stage == "nsys");
    CHECK(fs::exists(bench.main() / "attempts/1/nsys/profile.nsys-rep"));
  }
}

TEST_CASE("a run whose nsys capture was re-run ungated after an empty gate resumes with the ungated capture") {
  Bench bench;
  // The gate is the selection stage itself (nsys.nvtx_capture = run.stage = decode), so a capture taken as
  // gated would count every kernel in it as decode's.
  REQUIRE(bench.config.nsys.nvtx_capture == bench.config.run.stage);
  bench.config.run.on_empty_gate = OnEmptyGate::rerun_ungated;
  bench.script_workload();
  bench.runner.on(profile_with(true), FakeAnswer::printing({"Generated:", "    No reports were generated"}));
  bench.script_nsys_report(false);
  bench.runner.on(ncu_profile(true), FakeAnswer::printing({"==ERROR== The application returned an error code (1)."}, 1),
                  1);
  bench.script_ncu_report();
  bench.run();
  REQUIRE(stage_of(bench.manifest(), "nsys").status == StageStatus::ok);
  REQUIRE(stage_of(bench.manifest(), "ncu").status == StageStatus::failed);
  REQUIRE_THAT(read_file(bench.main() / "nsys/selection.json"), Catch::Contains("\"nvtx_kern_sum\""));
  // Without its NVTX range table the ungated timeline cannot tell decode's kernels from the rest of the run;
  // only a capture gated on decode could (all of it is decode).
  REQUIRE(fs::remove(bench.main() / "nsys/summary_nvtx_kern_sum.csv"));
  const std::size_t runs_before = bench.runner.runs().size();

  auto resumed = bench.resume();
  REQUIRE(resumed.has_value());
  CHECK(count_runs(bench, nsys_capture(), runs_before) == 0);
  const RunManifest after = bench.manifest();
  REQUIRE(after.resumptions.size() == 1);
  CHECK(after.resumptions.front().from_stage == "select");
  const StageRecord& select = stage_of(after, "select");
  CHECK(select.status != StageStatus::ok);
  CHECK_THAT(select.reason, Catch::Contains("nvtx_kern_sum is not available"));
}

namespace {

// Runs the test body from `directory`, and goes back to where it was afterwards.
class WorkingDirectoryScope {
 public:
  explicit WorkingDirectoryScope(const fs::path& directory) : previous_(fs::current_path()) {
    fs::current_path(directory);
  }
  ~WorkingDirectoryScope() {
    std::error_code ignored;
    fs::current_path(previous_, ignored);
  }
  WorkingDirectoryScope(const WorkingDirectoryScope&) = delete;
  WorkingDirectoryScope& operator=(const WorkingDirectoryScope&) = delete;

 private:
  fs::path previous_;
};

void write_program(const fs::path& path, const std::string& text) {
  write_file(path, "#!/bin/sh\necho " + text + "\n");
  fs::permissions(path, fs::perms::owner_all);
}

}  // namespace

TEST_CASE("resume from another directory whose ./prog is another program refuses, naming both directories") {
  Bench bench;
  const fs::path first = fs::canonical(bench.temp.path()) / "first";
  const fs::path second = fs::canonical(bench.temp.path()) / "second";
  write_program(first / "prog", "first");
  write_program(second / "prog", "second, a different program");
  bench.config.workload.argv = {"./prog"};
  bench.runner.on(command_is("./prog"), FakeAnswer::printing({"done"}));
  {
    WorkingDirectoryScope in_first(first);
    run_with_failing_ncu(bench);
  }
  CHECK(bench.manifest().workload.working_directory == first);  // recorded though workload.cwd is unset
  CHECK_THAT(read_file(bench.main() / "stage1/cmd.txt"), Catch::StartsWith("cd " + first.string() + " && "));
  const std::string manifest_text = read_file(bench.main() / "run.json");

  WorkingDirectoryScope in_second(second);
  auto resumed = bench.resume();
  REQUIRE_FALSE(resumed.has_value());
  CHECK(resumed.error().code == ErrorCode::invalid_argument);  // exit 2
  CHECK_THAT(resumed.error().message, Catch::Contains(first.string()) && Catch::Contains(second.string()));
  CHECK(read_file(bench.main() / "run.json") == manifest_text);

  SECTION("with workload.cwd naming the first directory it resumes, on the recorded program") {
    bench.config.workload.cwd = first;
    auto again = bench.resume();
    INFO((again ? std::string() : again.error().describe()));
    CHECK(again.has_value());
  }
}

TEST_CASE("resume refuses when the command names a file by path that was not there when the run started") {
  Bench bench;
  const fs::path directory = fs::canonical(bench.temp.path()) / "work";
  write_program(directory / "prog", "prog");
  bench.config.workload.argv = {"./prog", "prompts.txt"};
  bench.runner.on(command_is("./prog"), FakeAnswer::printing({"done"}));
  WorkingDirectoryScope in_directory(directory);
  run_with_failing_ncu(bench);
  write_file(directory / "prompts.txt", "a file the first run never read\n");
  auto resumed = bench.resume();
  REQUIRE_FALSE(resumed.has_value());
  CHECK_THAT(resumed.error().message,
             Catch::Contains((directory / "prompts.txt").string()) && Catch::Contains("did not fingerprint"));
}

TEST_CASE("a file given as the run directory to resume is named as a file, not as a run without config.toml",
          "[hardening]") {
  TempDir temp;
  const auto file = temp / "run.json";
  write_file(file, "{}\n");
  auto config = load_recorded_config(file);
  REQUIRE_FALSE(config.has_value());
  CHECK(config.error().message == file.string() + " is a file, not a run directory");  // before: "has no config.toml"
  CHECK_THAT(config.error().hint, Catch::Contains("a file inside a run names its run as its directory, here " +
                                                  temp.path().string()));
}
