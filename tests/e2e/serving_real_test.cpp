// Serving engines with the REAL nsys 2022.4 (Debian's, no GPU): the engine-shaped loop tests/e2e/engine_loop.cpp
// (serve > scheduler_step > prefill_batch | decode_batch | mixed_batch, sampling) under the default gate
// ("decode", which it never emits), with discovery, and with a repeat capture of two windows.
//
// Where the tools are absent the tests skip (tests/support/real_tools.hpp), unless CI requires them.
#include <sys/wait.h>

#include <csignal>

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <iostream>

#include "llmprof/exit_code.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/shell_quote.hpp"
#include "real_tools.hpp"
#include "run_manifest_reading.hpp"
#include "daemon_pids.hpp"
#include "process_handshake.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> engine_run(const TempDir& temp, std::vector<std::string> extra) {
  std::vector<std::string> args = {"run",
                                   "--set",
                                   "run.runs_root=" + (temp / "runs").string(),
                                   "--set",
                                   "run.run_id=serving",
                                   "--set",
                                   "run.min_free_space_gb=0",
                                   "--set",
                                   "run.enable_ncu=false"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", LLMPROF_ENGINE_LOOP_EXE, "60"});
  return args;
}

}  // namespace

TEST_CASE("real nsys: the default gate on an engine loop names the ranges it emitted and gives the --set line") {
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(temp, engine_run(temp, {}));
  const RunManifest manifest = manifest_of(temp / "runs" / "serving");
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys stage: " << nsys.reason);
  CHECK(nsys.status == StageStatus::failed);
  // The bare run named no range, so discovery came first and showed that `decode` is not among them.
  CHECK(nsys.reason.find("would never open (the workload does not emit its range), so no capture was gated on it") !=
        std::string::npos);
  CHECK(nsys.reason.find("scheduler_step x60 (in serve)") != std::string::npos);
  CHECK(nsys.reason.find("decode_batch x48 (in scheduler_step)") != std::string::npos);
  CHECK(nsys.reason.find("--set nsys.capture_range=nvtx --set nsys.nvtx_capture=serve --set run.stage=decode_batch") !=
        std::string::npos);
  CHECK(fs::exists(temp / "runs" / "serving" / "nsys" / "discovery" / "profile.sqlite"));
}

TEST_CASE("real nsys: with discovery the run goes on with the discovery capture and the chosen step range") {
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(temp, engine_run(temp, {"--set", "run.on_empty_gate=discover"}));
  const fs::path main = temp / "runs" / "serving";
  const RunManifest manifest = manifest_of(main);
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys stage: " << nsys.reason);
  CHECK(nsys.status == StageStatus::ok);
  CHECK(run.out.find("going on with the discovery capture (ungated) and `decode_batch`") != std::string::npos);
  // Discovery's choice is in run.json's capture record: select, ncu, analyze and run --resume read it there.
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->discovered_stage == std::optional<std::string>("decode_batch"));
  const std::string steps = read_file(main / "analysis" / "step_kinds.md");
  CHECK(steps.find("Step range `scheduler_step`: 60 steps") != std::string::npos);
  CHECK(steps.find("| `decode_batch` | 48 |") != std::string::npos);
  CHECK(steps.find("| `prefill_batch` | 6 |") != std::string::npos);
  CHECK(steps.find("| `mixed_batch` | 6 |") != std::string::npos);
  // The loop wrote its step tokens where the capture told it (LLMPROF_STEP_TOKENS_FILE), the adopted discovery
  // capture's file moved beside the timeline: 48 decode steps x 8 tokens, 6 prefill x 128, 6 mixed x (64 + 8).
  CHECK(fs::exists(main / "nsys" / "step_tokens.json"));
  CHECK(steps.find("| `decode_batch` | 48 | 0 | 384 | 8 | ") != std::string::npos);
  CHECK(steps.find("| `prefill_batch` | 6 | 768 | 0 | 128 | ") != std::string::npos);
  CHECK(steps.find("| `mixed_batch` | 6 | 384 | 48 | 72 | ") != std::string::npos);
  CHECK(steps.find("withheld") == std::string::npos);
  CHECK(read_file(main / "report.md").find("## Engine steps") != std::string::npos);
}

TEST_CASE("real nsys: a repeat capture of two windows gives two numbered reports, each exported and listed") {
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(temp, engine_run(temp, {"--set", "nsys.nvtx_capture=scheduler_step", "--set",
                                                            "nsys.capture_range_end=repeat:2"}));
  const fs::path main = temp / "runs" / "serving";
  const RunManifest manifest = manifest_of(main);
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys stage: " << nsys.reason);
  CHECK(nsys.status == StageStatus::ok);
  CHECK(read_file(main / "nsys" / "cmd.txt").find("--capture-range-end=repeat:2") != std::string::npos);
  CHECK(fs::exists(main / "nsys" / "profile.1.nsys-rep"));
  CHECK(fs::exists(main / "nsys" / "profile.2.nsys-rep"));
  CHECK_FALSE(fs::exists(main / "nsys" / "profile.3.nsys-rep"));
  CHECK(fs::exists(main / "nsys" / "profile.sqlite"));
  CHECK(fs::exists(main / "nsys" / "window-2" / "profile.sqlite"));
  const auto windows = boost::json::parse(read_file(main / "nsys" / "windows.json")).as_object();
  const auto& listed = windows.at("windows").as_array();
  REQUIRE(listed.size() == 2);
  CHECK(listed[1].at("directory").as_string() == "nsys/window-2");
}

TEST_CASE("real nsys: run --discover names the ranges, the profiler window and the --set line, and profiles nothing") {
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(
      temp, {"run", "--discover", "--set", "run.runs_root=" + (temp / "runs").string(), "--set", "run.run_id=serving",
             "--set", "run.min_free_space_gb=0", "--", LLMPROF_ENGINE_LOOP_EXE, "60"});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("scheduler_step x60 (in serve)") != std::string::npos);
  CHECK(run.out.find("decode_batch x48 (in scheduler_step)") != std::string::npos);
  CHECK(run.out.find("cudaProfilerStart/Stop calls: 0/0") != std::string::npos);
  CHECK(run.out.find("To profile it: --set nsys.capture_range=nvtx --set nsys.nvtx_capture=serve "
                     "--set run.stage=decode_batch") != std::string::npos);
  // Its own run directory: the probe and one ungated capture; no bare run, no ncu, no analysis.
  const fs::path main = temp / "runs" / "serving-discovery";
  const RunManifest manifest = manifest_of(main);
  CHECK(stage_of(manifest, "nsys").status == StageStatus::ok);
  CHECK(stage_of(manifest, "stage1").status == StageStatus::skipped);
  CHECK(stage_of(manifest, "ncu").status == StageStatus::skipped);
  CHECK(read_file(main / "nsys" / "cmd.txt").find("--capture-range") == std::string::npos);
  CHECK_FALSE(fs::exists(main / "analysis" / "report.json"));
  // --discover with --launcher is refused at once.
  const Finished refused = deep_profile(temp, {"run", "--discover", "--launcher", "srun -n 2", "--", "true"});
  CHECK(refused.exit_code == 2);
}

// Issue 33, ownership: an engine that leaves a SIGTERM-proof setsid daemon (a worker holding its port) in every
// run. With the real nsys 2022.4, whose CLI exits while its own agent (`nsys --start-agent`, re-parented to us)
// still writes the report, the daemon is ended after stage 1 and after the capture, and the agent is not: the
// capture keeps every range (48 decode_batch steps) and the step kinds are reported.
TEST_CASE("real nsys: the workload's daemon is ended after every stage, the profiler's own processes are not") {
  if (!have_real_tools()) return;
  TempDir temp;
  const fs::path pids = temp / "daemons";
  fs::create_directories(pids);
  const fs::path workload = temp / "engine_with_daemon.sh";
  write_file(workload,
             "#!/bin/sh\n" + source_handshake() + "leave_term_proof_daemon '" + pids.string() +
                 "' || exit 1\n"
             "exec " + quote_shell_argument(LLMPROF_ENGINE_LOOP_EXE) + " 60\n");
  fs::permissions(workload, fs::perms::owner_all);
  std::vector<std::string> args = {"run", "--set", "run.runs_root=" + (temp / "runs").string(), "--set",
                                   "run.run_id=serving", "--set", "run.min_free_space_gb=0", "--set",
                                   "run.enable_ncu=false", "--set", "nsys.nvtx_capture=serve", "--set",
                                   "run.stage=decode_batch", "--set", "run.survivor_grace_s=0.2", "--",
                                   workload.string()};
  const Finished run = deep_profile(temp, args);
  INFO(run.out);
  const fs::path main = temp / "runs" / "serving";
  const RunManifest manifest = manifest_of(main);
  CHECK(stage_of(manifest, "nsys").status == StageStatus::ok);
  std::size_t named = 0;
  for (const auto& stage : manifest.stages) {
    for (const auto& warning : stage.warnings) {
      if (warning.find("process(es) running after exiting") == std::string::npos) continue;
      ++named;
      CHECK_THAT(warning, Catch::Contains("ended them with SIGTERM, and with SIGKILL after"));
      // Only the daemon: never nsys's agent nor its launcher.
      const bool names_no_profiler_process = warning.find("(nsys") == std::string::npos;
      CHECK(names_no_profiler_process);
    }
  }
  const DaemonCount counted = count_and_kill_daemons(pids);
  const std::size_t daemons = counted.started, alive = counted.alive;
  CHECK(daemons == 2);  // stage 1 and the nsys capture
  CHECK(named == 2);
  CHECK(alive == 0);
  // The capture is whole: the agent finished it.
  const std::string steps = read_file(main / "analysis" / "step_kinds.md");
  CHECK_THAT(steps, Catch::Contains("decode_batch"));
}

// Issue 34: run.stage = "auto" on an engine that names its steps by SGLang's modes alone (decode, extend, mixed at
// the top level of its thread, no step range): the nsys stage says which kind it chose and why, run.json records
// the choice (resume and `analyze MAIN` read it there), and the step kinds are found.
TEST_CASE("real nsys: run.stage = auto picks the step kind of an engine with SGLang's mode names and records it") {
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(
      temp, {"run", "--set", "run.runs_root=" + (temp / "runs").string(), "--set", "run.run_id=serving", "--set",
             "run.min_free_space_gb=0", "--set", "run.enable_ncu=false", "--set", "nsys.capture_range=none", "--set",
             "run.stage=auto", "--", LLMPROF_ENGINE_LOOP_EXE, "60", "--flat", "--no-outer", "--names", "sglang"});
  INFO(run.out);
  const fs::path main = temp / "runs" / "serving";
  const RunManifest manifest = manifest_of(main);
  CHECK(stage_of(manifest, "nsys").status == StageStatus::ok);
  // No GPU here: by steps (48 decode of 60).
  CHECK(run.out.find("run.stage = auto chose `decode`, the step kind with the most steps inside the captured "
                     "window (48 of 60; no GPU work was recorded); the other kinds: extend x6, mixed x6") !=
        std::string::npos);
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->discovered_stage == std::optional<std::string>("decode"));
  CHECK_THAT(manifest.capture->stage_choice, Catch::StartsWith("run.stage = auto chose `decode`"));
  CHECK_THAT(read_file(main / "analysis" / "step_kinds.md"),
             Catch::Contains("Kind ranges that stand alone, each instance one step: 60 steps"));
}

// A workload with no NVTX of its own, with the defaults (gated on `decode`, run.on_empty_gate = diagnose) and the real
// nsys 2022.4: the engine loop whose only ranges are CCCL's scans (`--library-only`, as CUDA 13's CUB marks the
// scan of a Hugging Face generate()), and the loop with no range at all (`--no-nvtx`). The gate never opens, the
// discovery capture shows no range of the workload's own and no cudaProfilerStart (no CUDA here), so the run keeps it
// as the whole run instead of failing with a --set line, and says so in run.json and the report.
TEST_CASE("real nsys: only CCCL's ranges, defaults: the whole run is the capture, the scan listed as CCCL's") {
  if (!have_real_tools()) return;
  TempDir temp;
  std::vector<std::string> args = engine_run(temp, {});
  args.push_back("--library-only");
  const Finished run = deep_profile(temp, args);
  INFO(run.out);
  const fs::path main = temp / "runs" / "serving";
  const RunManifest manifest = manifest_of(main);
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys stage: " << nsys.reason);
  CHECK(nsys.status == StageStatus::ok);
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::none);
  CHECK(manifest.capture->whole_window_selection);
  CHECK_THAT(manifest.capture->scope,
             Catch::StartsWith("the first capture was discovery's (the bare run named no NVTX range), and the workload "
                               "emits no NVTX range of its own, only library ranges "
                               "(`CCCL:cub::DeviceScan::InclusiveScan` x60 (CCCL))"));
  CHECK_THAT(manifest.capture->scope, Catch::Contains("so the capture takes the whole run"));
  CHECK(run.out.find("--set run.stage=cub::DeviceScan::InclusiveScan") == std::string::npos);
  CHECK(run.out.find("going on with the discovery capture (ungated, the whole run)") != std::string::npos);
  // The discovery capture is the timeline: its scan is a stage of the report, marked, never the headline's.
  const std::string report = read_file(main / "report.md");
  CHECK(report.find("| **Capture** | the first capture was discovery's (the bare run named no NVTX range)") !=
        std::string::npos);
  CHECK(report.find("CCCL:cub::DeviceScan::InclusiveScan [library range: CCCL]") != std::string::npos);
  const auto json = boost::json::parse(read_file(main / "analysis" / "report.json")).as_object();
  bool marked = false;
  for (const auto& stage : json.at("stages").as_array())
    if (stage.at("name").as_string() == "cub::DeviceScan::InclusiveScan")
      marked = stage.at("domain").as_string() == "CCCL" && stage.at("library").as_string() == "CCCL";
  CHECK(marked);
}

TEST_CASE("real nsys: no NVTX at all, defaults: discovery lists no range and the run goes on with the whole run") {
  if (!have_real_tools()) return;
  TempDir temp;
  std::vector<std::string> args = engine_run(temp, {});
  args.push_back("--no-nvtx");
  const Finished run = deep_profile(temp, args);
  INFO(run.out);
  const RunManifest manifest = manifest_of(temp / "runs" / "serving");
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys stage: " << nsys.reason);
  CHECK(nsys.status == StageStatus::ok);
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::none);
  CHECK_THAT(manifest.capture->scope,
             Catch::StartsWith("the first capture was discovery's (the bare run named no NVTX range), and the workload "
                               "emits no NVTX range; the capture recorded no cudaProfilerStart call"));
  CHECK(fs::exists(temp / "runs" / "serving" / "nsys" / "profile.sqlite"));
}

// A workload that fails before its GPU work: nsys 2022.4 exits 0 and writes a capture of nothing, which is no reason
// to suggest "take the whole run".
TEST_CASE("real nsys: run --discover on a workload that fails at start says so and suggests nothing") {
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(
      temp, {"run", "--discover", "--set", "run.runs_root=" + (temp / "runs").string(), "--set", "run.run_id=broken",
             "--set", "run.min_free_space_gb=0", "--", "/bin/sh", "-c", "echo 'cannot open model.bin' >&2; exit 3"});
  INFO(run.out);
  CHECK(run.exit_code == static_cast<int>(exit_incomplete));
  CHECK_THAT(run.out, Catch::Contains("the discovery capture recorded no NVTX range and no CUDA call"));
  CHECK_THAT(run.out, Catch::Contains("the workload most likely failed before its GPU work"));
  CHECK_THAT(run.out, Catch::Contains((temp / "runs" / "broken-discovery" / "nsys" / "profile.log").string()));
  CHECK(run.out.find("To profile it:") == std::string::npos);
  CHECK_THAT(read_file(temp / "runs" / "broken-discovery" / "nsys" / "profile.log"),
             Catch::Contains("cannot open model.bin"));
}
