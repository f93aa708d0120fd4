// End to end: the real `deep-profile run` binary with the fake nsys/ncu of tests/fake_tools on PATH
// (they run the real workload as a child), asserting on the run directory and run.json.
// The workload is the bundled example (CPU build, tiny preset) where it is built, else
// tests/e2e/workload.sh; the failure scenarios use the script (crash, hang, slow on purpose).
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <thread>

#include "end_to_end.hpp"
#include "library_range_exports.hpp"
#include "llmprof/run_directory.hpp"
#include "skip.hpp"
#include "daemon_pids.hpp"
#include "process_handshake.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

const fs::path script_workload = fs::path(LLMPROF_SOURCE_DIR) / "tests/e2e/workload.sh";

using Finished = CliResult;

std::vector<std::string> script_args() { return {"--", script_workload.string()}; }

void check_full_success(EndToEnd& e2e, const Finished& finished) {
  const RunManifest manifest = e2e.manifest();
  for (const char* stage : {"probe", "stage1", "nsys", "select", "ncu", "analyze", "report"}) {
    INFO(stage << ": " << stage_of(manifest, stage).reason);
    CHECK(stage_of(manifest, stage).status == StageStatus::ok);
  }
  CHECK(stage_of(manifest, "stage1").exit_code == 0);
  for (const char* file : {"run.json",
                           "env.json",
                           "config.toml",
                           "inputs.json",
                           "deep-profile.log",
                           "sections.txt",
                           "stage1/metrics.json",
                           "stage1/stdout.log",
                           "stage1/cmd.txt",
                           "nsys/profile.nsys-rep",
                           "nsys/cmd.txt",
                           "nsys/profile.log",
                           "nsys/summary_cuda_gpu_kern_sum.csv",
                           "nsys/summary_nvtx_kern_sum.csv",
                           "nsys/selection.json",
                           "ncu/profile.ncu-rep",
                           "ncu/raw.csv",
                           "ncu/cmd.txt",
                           "analysis/report.json",
                           "analysis/kernels.csv",
                           "report.md",
                           "report.html"}) {
    INFO(file);
    CHECK(fs::exists(e2e.main() / file));
  }
  const std::string nsys_commands = read_file(e2e.main() / "nsys/cmd.txt");
  CHECK(nsys_commands.find("--nvtx-capture=decode") != std::string::npos);
  CHECK(nsys_commands.find("NSYS_NVTX_PROFILER_REGISTER_ONLY=0") != std::string::npos);
  const std::string ncu_commands = read_file(e2e.main() / "ncu/cmd.txt");
  CHECK(ncu_commands.find("--kernel-name") != std::string::npos);
  CHECK(ncu_commands.find("regex:") != std::string::npos);
  CHECK(ncu_commands.find("--launch-count") != std::string::npos);
  CHECK(manifest.total_bytes > 0);
  CHECK(finished.out.find(e2e.main().string()) != std::string::npos);  // the summary names MAIN
  CHECK(read_file(e2e.main() / "report.md").find("decode") != std::string::npos);
  CHECK(read_file(e2e.main() / "report.md").find("Run status** | ok") != std::string::npos);
}

}  // namespace

TEST_CASE("full success on the workload script: every stage ok, every artifact present", "[e2e][slow]") {
  EndToEnd e2e;
  const Finished finished = e2e.run({script_args()});
  check_full_success(e2e, finished);
  CHECK(finished.exit_code == 0);
  CHECK(e2e.manifest().status == RunStatus::ok);
}

TEST_CASE("full success on the bundled example (CPU build, tiny preset)", "[e2e][slow]") {
#ifdef LLMPROF_EXAMPLE_EXE
  EndToEnd e2e;
  const Finished finished = e2e.run({{"--set", "workload.example_args=[\"--preset\",\"tiny\"]"}});
  check_full_success(e2e, finished);
  const RunManifest manifest = e2e.manifest();
  REQUIRE_FALSE(manifest.workload.argv.empty());
  CHECK(fs::path(manifest.workload.argv[0]).filename() == "llmprof-decode");
  CHECK(read_file(e2e.main() / "stage1/metrics.json").find("\"nvtx_ranges\"") != std::string::npos);
#else
  skip_test("the llmprof-decode example is not built here (no LibTorch); the script variant covers the pipeline");
#endif
}

TEST_CASE("an NVTX gate that never opens ends with the diagnosis and the exact fix", "[e2e][slow]") {
  EndToEnd e2e;
  auto args = std::vector<std::string>{"--set", "nsys.nvtx_capture=range"};
  const auto workload = script_args();
  args.insert(args.end(), workload.begin(), workload.end());
  const Finished finished = e2e.run({args});
  CHECK(finished.exit_code == 1);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::failed);
  CHECK_THAT(nsys.reason, Catch::Contains("never opened"));
  CHECK_THAT(nsys.reason, Catch::Contains("\"prefill\", \"decode\""));
  CHECK_THAT(nsys.reason, Catch::Contains("Fix: --set nsys.nvtx_capture=decode"));
  CHECK(finished.out.find("note: nsys: ") != std::string::npos);
  CHECK(finished.out.find("Fix: --set nsys.nvtx_capture=decode") != std::string::npos);
  CHECK(finished.err.find("No such file") == std::string::npos);
  CHECK(stage_of(manifest, "select").status == StageStatus::skipped);
  CHECK(stage_of(manifest, "ncu").status == StageStatus::ok);  // ncu goes on, unfiltered and bounded
  CHECK(read_file(e2e.main() / "ncu/cmd.txt").find("--kernel-name") == std::string::npos);
  CHECK_FALSE(fs::exists(e2e.main() / "nsys/profile.nsys-rep"));
}

TEST_CASE("only a .qdstrm with a broken importer: nsys fails with the missing library, the rest goes on",
          "[e2e][slow]") {
  EndToEnd e2e;
  const Finished finished =
      e2e.run({script_args(), {{"FAKE_NSYS_MODE", "importer_broken"}, {"FAKE_IMPORTER_MODE", "missing_libdw"}}});
  CHECK(finished.exit_code == 1);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::failed);
  CHECK_THAT(nsys.reason, Catch::Contains("libdw.so.1"));
  CHECK(fs::exists(e2e.main() / "nsys/profile.qdstrm"));
  CHECK_FALSE(fs::exists(e2e.main() / "nsys/profile.nsys-rep"));
  CHECK(stage_of(manifest, "probe").status == StageStatus::ok);
  CHECK_FALSE(stage_of(manifest, "probe").warnings.empty());  // the probe already said the importer is broken
  CHECK(stage_of(manifest, "ncu").status == StageStatus::ok);
  CHECK(fs::exists(e2e.main() / "ncu/raw.csv"));
}

TEST_CASE("ncu with no kernels matched re-runs once without the kernel filter and says so", "[e2e][slow]") {
  EndToEnd e2e;
  const Finished finished = e2e.run({script_args(), {{"FAKE_NCU_MODE", "no_kernels"}}});
  CHECK(finished.exit_code == 1);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(ncu.status == StageStatus::failed);  // the fake profiles nothing either way
  CHECK_THAT(ncu.reason, Catch::Contains("profiled no kernels"));
  REQUIRE_FALSE(ncu.warnings.empty());
  CHECK_THAT(ncu.warnings.front(), Catch::Contains("unfiltered re-run"));
  const std::string commands = read_file(e2e.main() / "ncu/cmd.txt");
  const auto first = commands.find("--kernel-name");
  REQUIRE(first != std::string::npos);
  const auto second_line = commands.find('\n', first) + 1;  // the line after the filtered pass (each has a comment)
  CHECK(commands.find("--kernel-name", second_line) == std::string::npos);
  CHECK(commands.substr(second_line).find("--launch-count 200") != std::string::npos);
  CHECK(fs::exists(e2e.main() / "ncu/profile_unfiltered.log"));
  CHECK(finished.out.find("re-running once without the kernel filter") != std::string::npos);
  CHECK_FALSE(fs::exists(e2e.main() / "ncu/raw.csv"));
}

TEST_CASE("nsys missing: its stage is skipped with the reason, ncu runs unfiltered, exit code 3", "[e2e][slow]") {
  // deep-profile looks in NVIDIA's and Debian's install folders too; where one holds an nsys (the GPU machine's
  // /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys), nsys is not missing and the test cannot apply.
  for (const char* install : {"/opt/nvidia/nsight-systems", "/opt/nvidia/nsight-compute", "/usr/local/cuda/bin/nsys",
                              "/usr/lib/nsight-systems", "/usr/lib/x86_64-linux-gnu/nsight-systems"}) {
    std::error_code error;
    if (fs::exists(install, error)) {
      skip_test(std::string("this machine has Nsight installed at ") + install + ", so nsys cannot be missing");
      return;
    }
  }
  EndToEnd e2e;
  const fs::path only_ncu = e2e.temp() / "only-ncu";
  fs::create_directories(only_ncu);
  fs::create_symlink(fs::path(LLMPROF_FAKE_TOOLS_DIR) / "ncu", only_ncu / "ncu");
  // An empty Nsight cache: the real tools of scripts/install-nsight.sh must not stand in for the missing nsys.
  const Finished finished = e2e.run({script_args(),
                                     {{"PATH", only_ncu.string() + ":/usr/bin:/bin:" + std::getenv("PATH")},
                                      {"LLMPROF_NSIGHT_DIR", (e2e.temp() / "no-nsight").string()}}});
  CHECK(finished.exit_code == 3);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::skipped);
  CHECK_THAT(nsys.reason, Catch::Contains("not found"));
  CHECK(stage_of(manifest, "select").status == StageStatus::skipped);
  CHECK(stage_of(manifest, "ncu").status == StageStatus::ok);
  CHECK(fs::exists(e2e.main() / "ncu/raw.csv"));
  CHECK(manifest.status == RunStatus::environment);
}

TEST_CASE("workload crash: stage1 failed with exit code and stderr, profilers not run", "[e2e][slow]") {
  EndToEnd e2e;
  const Finished finished = e2e.run({script_args(), {{"E2E_WORKLOAD_MODE", "crash"}}});
  CHECK(finished.exit_code == 1);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& stage1 = stage_of(manifest, "stage1");
  CHECK(stage1.status == StageStatus::failed);
  CHECK(stage1.exit_code == 3);
  CHECK_THAT(stage1.reason, Catch::Contains("exit code 3"));
  CHECK_THAT(stage1.reason, Catch::Contains("illegal memory access"));
  CHECK(stage_of(manifest, "nsys").status == StageStatus::skipped);
  CHECK(stage_of(manifest, "ncu").status == StageStatus::skipped);
  CHECK_FALSE(fs::exists(e2e.main() / "nsys/cmd.txt"));
  CHECK(manifest.status == RunStatus::failed);
}

TEST_CASE("workload hang: the timeout kills the whole tree, exit code 124", "[e2e][slow]") {
  EndToEnd e2e;
  const fs::path pid_file = e2e.temp() / "grandchild.pid";
  // The library's timer, not the test, signals the tree: the 5 s are the workload's head start to start its
  // grandchild and write its pid (one fork and one line), and the pid file below checks that it had it.
  auto args = std::vector<std::string>{"--set", "workload.timeout_s=5"};
  const auto workload = script_args();
  args.insert(args.end(), workload.begin(), workload.end());
  const Finished finished = e2e.run({args, {{"E2E_WORKLOAD_MODE", "hang"}, {"E2E_PID_FILE", pid_file.string()}}});
  INFO("deep-profile stderr: " << finished.err);
  CHECK(finished.exit_code == 124);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& stage1 = stage_of(manifest, "stage1");
  CHECK(stage1.status == StageStatus::failed);
  CHECK_THAT(stage1.reason, Catch::Contains("timeout"));
  CHECK(stage1.duration_s < 60);  // the timeout and the kill grace, not the grandchild's 600 s
  REQUIRE(holds_line(pid_file));  // the workload was ready (its grandchild started) before the timeout
  CHECK(await_gone(static_cast<pid_t>(std::stol(read_file(pid_file)))));
}

TEST_CASE("SIGINT mid-run: the stage is interrupted, artifacts and run.json kept, exit code 130", "[e2e][slow]") {
  EndToEnd e2e;
  const fs::path started_file = e2e.temp() / "workload.started";
  Invocation invocation{script_args(), {{"E2E_WORKLOAD_MODE", "slow"}, {"E2E_STARTED_FILE", started_file.string()}}};
  std::chrono::steady_clock::time_point signalled;
  // The workload writes the file once it runs (its pid, after the metrics file): SIGINT goes only to a stage 1
  // whose workload is running, never to the probe before it.
  invocation.while_running = [&started_file, &signalled](pid_t pid) {
    await_pid_file(started_file);
    signalled = std::chrono::steady_clock::now();
    ::kill(pid, SIGINT);
  };
  const Finished finished = e2e.run(invocation);
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(30));  // not the workload's 60 s
  CHECK(finished.exit_code == 130);
  const RunManifest manifest = e2e.manifest();
  CHECK(manifest.status == RunStatus::interrupted);
  CHECK(stage_of(manifest, "probe").status == StageStatus::ok);
  CHECK(stage_of(manifest, "stage1").status == StageStatus::interrupted);
  for (const char* later : {"nsys", "select", "ncu", "analyze", "report"}) {
    CHECK(stage_of(manifest, later).status == StageStatus::skipped);
  }
  CHECK(fs::exists(e2e.main() / "env.json"));
  CHECK(fs::exists(e2e.main() / "stage1/cmd.txt"));
}

TEST_CASE("sweep: one run directory per point and an index comparing them", "[e2e][slow]") {
  EndToEnd e2e;
  Invocation invocation{{"--point", "run.top_n_kernels=3", "--point", "run.top_n_kernels=5,ncu.max_launches=50", "--",
                         script_workload.string()}};
  invocation.command = "sweep";
  const Finished finished = e2e.run(invocation);
  CHECK(finished.exit_code == 0);
  std::vector<fs::path> mains, sweeps;
  for (const auto& entry : fs::directory_iterator(e2e.temp() / "runs")) {
    // The runs root also keeps ncu-launch-cost.json, the per-kernel plan's measured cost per launch.
    if (!entry.is_directory()) continue;
    (entry.path().filename().string().rfind("sweep-", 0) == 0 ? sweeps : mains).push_back(entry.path());
  }
  REQUIRE(mains.size() == 2);
  REQUIRE(sweeps.size() == 1);
  for (const auto& main : mains) {
    CHECK(manifest_of(main).status == RunStatus::ok);
  }
  const std::string index = read_file(sweeps.front() / "index.json");
  CHECK(index.find("top_n_kernels-3") != std::string::npos);
  CHECK(index.find("ncu.max_launches=50") != std::string::npos);
  CHECK(fs::exists(sweeps.front() / "index.md"));
}

// Issue 33: a workload that leaves a daemon behind in every run (an engine worker that holds its port). After
// each stage that ran it (stage 1, the nsys captures) the daemon is named and ended, under a profiler too (the
// workload's survivors are told from the profiler's own by executable); an ncu pass that ends its workload ends
// the daemon with it, naming it among the processes that needed SIGKILL. With run.leave_survivors = true every
// one is named and left. Each daemon writes its pid to a file of its own; it is born ignoring SIGTERM, and the
// workload exits only once that file is written (leave_term_proof_daemon, tests/support/handshake.sh), so the
// stage's end only ever meets a daemon that is ready.
TEST_CASE("a daemon the workload leaves is named and ended after every stage, or left when asked", "[e2e][slow]") {
  for (const bool leave : {false, true}) {
    INFO("run.leave_survivors = " << leave);
    EndToEnd e2e;
    const fs::path pids = e2e.temp() / "daemons";
    fs::create_directories(pids);
    const fs::path workload = e2e.temp() / "leaves_daemon.sh";
    write_file(workload,
               "#!/bin/sh\n" + source_handshake() + "leave_term_proof_daemon '" + pids.string() +
                   "' || exit 1\n"
               "exit 0\n");
    fs::permissions(workload, fs::perms::owner_all);
    const Finished finished = e2e.run({{"--set", std::string("run.leave_survivors=") + (leave ? "true" : "false"),
                                        "--set", "run.survivor_grace_s=0.2", "--", workload.string()}});
    INFO(finished.out << finished.err);
    const RunManifest manifest = e2e.manifest();
    std::size_t named = 0;
    for (const auto& stage : manifest.stages) {
      for (const auto& warning : stage.warnings) {
        if (warning.find("process(es) running after exiting") == std::string::npos) continue;
        ++named;
        CHECK_THAT(warning, Catch::Contains(stage.name == "stage1" ? "the workload left" : "the workload under "));
        if (leave) {
          CHECK_THAT(warning, Catch::Contains("left running (run.leave_survivors = true)"));
        } else {
          CHECK_THAT(warning, Catch::Contains("ended them with SIGTERM, and with SIGKILL after"));
        }
      }
      for (const auto& ending : stage.workload_endings) {
        if (ending.find("SIGKILL after the 3 s grace to ") == std::string::npos) continue;
        CHECK_FALSE(leave);
        ++named;
        CHECK_THAT(ending, Catch::Contains(" (sleep)"));  // the daemon (leave_term_proof_daemon)
      }
    }
    const DaemonCount counted = count_and_kill_daemons(pids);
    const std::size_t daemons = counted.started, alive = counted.alive;
    CHECK(daemons >= 3);  // stage 1, the nsys capture, at least one ncu pass
    CHECK(named == daemons);
    CHECK(alive == (leave ? daemons : 0));
  }
}

// A plain `deep-profile run -- python3 script.py`, no option, of a program with no NVTX range of its own: its only
// ranges are CCCL's scans and it opens its own cudaProfilerStart/Stop window (the exports: the recorded H100 serving
// window made so, tests/support/library_range_exports.hpp). The fake nsys would never open the `decode` gate; its
// ungated (discovery) capture exports the whole run, its cudaProfilerApi capture the window.
TEST_CASE("a plain run of a program without NVTX of its own follows its window by itself", "[e2e][slow]") {
  EndToEnd e2e;
  const auto window = export_without_own_ranges(e2e.temp().path(), "window", {.cccl_scans = true});
  const auto whole = export_without_own_ranges(e2e.temp().path(), "run", {.cccl_scans = true, .profiler_window = true});
  const fs::path script = e2e.temp() / "script.py";
  write_file(script, "print('generated')\n");
  // One kernel for ncu only to keep the fake ncu's passes few (each runs the script again); the gate, the capture and
  // ncu's gating are the defaults'.
  const Finished finished = e2e.run({{"--set", "run.kernel_coverage=0", "--set", "run.top_n_kernels=1", "--",
                                      "python3", script.string()},
                                     {{"FAKE_NSYS_NVTX_RANGES", ""},
                                      {"FAKE_NSYS_SQLITE", window.string()},
                                      {"FAKE_NSYS_UNGATED_SQLITE", whole.string()}}});
  INFO(finished.out);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys: " << nsys.reason);
  REQUIRE(nsys.status == StageStatus::ok);
  // Discovery's capture (the bare run named no range), restricted to the window: one profile, not gated on `decode`,
  // and none gated on the window either (nsys.restrict_discovery_to_window).
  const std::string commands = read_file(e2e.main() / "nsys/cmd.txt");
  CHECK(commands.find("--nvtx-capture=decode") == std::string::npos);
  CHECK(commands.find("--capture-range=cudaProfilerApi") == std::string::npos);
  CHECK(fs::exists(e2e.main() / "nsys/discovery/profile.sqlite"));
  CHECK(fs::exists(e2e.main() / "nsys/profile.sqlite"));
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::cuda_profiler_api);
  CHECK(manifest.capture->restricted_window.has_value());
  CHECK_THAT(manifest.capture->scope, Catch::Contains("so the capture follows its window"));
  CHECK(finished.out.find("so the capture follows its window") != std::string::npos);  // the run's note
  CHECK(finished.out.find("Fix: --set") == std::string::npos);
  // ncu inside the same window, with no NVTX filter.
  const std::string ncu = read_file(e2e.main() / "ncu/cmd.txt");
  CHECK(ncu.find("--profile-from-start off") != std::string::npos);
  CHECK(ncu.find("--nvtx-include") == std::string::npos);
  // The steps inferred from the window; the scan listed as CCCL's.
  CHECK(read_file(e2e.main() / "analysis/step_kinds.json").find("\"steps\":40,") != std::string::npos);
  CHECK(read_file(e2e.main() / "report.md").find("CCCL:cub::DeviceScan::InclusiveScan [library range: CCCL]") !=
        std::string::npos);
}
