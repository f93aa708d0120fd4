// End to end under real launchers: `deep-profile run --launcher 'mpirun ...'` with the fake nsys/ncu,
// asserting on MAIN/ranks/r<k>/ and run.json (srun, on a real single-node Slurm, is in slurm_test.cpp).
// Where a launcher is missing the tests skip with the reason, unless LLMPROF_REQUIRE_CLUSTER=1
// (scripts/test.sh, i.e. CI) turns the skip into a failure.
#include <csignal>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "end_to_end.hpp"
#include "llmprof/process.hpp"
#include "llmprof/run_directory.hpp"
#include "skip.hpp"
#include "daemon_pids.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

const fs::path rank_workload = fs::path(LLMPROF_SOURCE_DIR) / "tests/e2e/rank_workload.sh";

using Finished = CliResult;
const std::string mpirun = "mpirun --allow-run-as-root --oversubscribe -np 2";

// True when `program` is on PATH; otherwise skips (or fails in CI) with the reason.
bool have(const std::string& program, const std::string& package) {
  if (!find_executable(program).empty()) return true;
  const std::string why = program + " is not installed (apt-get install " + package + ", or scripts/install-deps.sh)";
  skip_test(why, "LLMPROF_REQUIRE_CLUSTER");
  return false;
}

std::vector<std::string> launched(const std::string& launcher, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--launcher", launcher};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", rank_workload.string()});
  return args;
}

// Every file a rank wrote is under its own ranks/r<k>/ and names no other rank's directory.
void check_nothing_shared(const fs::path& main, int world) {
  for (int rank = 0; rank < world; ++rank) {
    for (const auto& entry : fs::recursive_directory_iterator(main / "ranks" / ("r" + std::to_string(rank)))) {
      if (!entry.is_regular_file() || entry.path().extension() != ".txt") continue;
      const std::string text = read_file(entry.path());
      for (int other = 0; other < world; ++other) {
        if (other == rank) continue;
        INFO(entry.path());
        CHECK(text.find("/ranks/r" + std::to_string(other) + "/") == std::string::npos);
      }
    }
  }
  for (const char* single : {"stage1/metrics.json", "nsys/profile.nsys-rep", "ncu/profile.ncu-rep"}) {
    INFO(single);
    CHECK_FALSE(fs::exists(main / single));
  }
}

}  // namespace

TEST_CASE("mpirun -np 2: two rank directories with their own reports and per-rank status in run.json") {
  if (!have("mpirun", "openmpi-bin")) return;
  EndToEnd e2e;
  const Finished finished = e2e.run({launched(mpirun)});
  REQUIRE(finished.exit_code == 0);
  const RunManifest manifest = e2e.manifest();
  for (const char* stage : {"stage1", "nsys", "select", "ncu", "analyze", "report"}) {
    INFO(stage << ": " << stage_of(manifest, stage).reason);
    CHECK(stage_of(manifest, stage).status == StageStatus::ok);
  }
  const StageRecord& nsys = stage_of(manifest, "nsys");
  REQUIRE(nsys.ranks.size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    CHECK(nsys.ranks[rank].rank == rank);
    CHECK(nsys.ranks[rank].role == "nsys");
    CHECK(nsys.ranks[rank].status == StageStatus::ok);
    const fs::path directory = e2e.main() / "ranks" / ("r" + std::to_string(rank));
    CHECK(fs::exists(directory / "stage1/metrics.json"));
    CHECK(fs::exists(directory / "nsys/profile.nsys-rep"));
    CHECK(fs::exists(directory / "nsys/summary_cuda_gpu_kern_sum.csv"));
    CHECK(read_file(directory / "stage1/output.log").find("rank " + std::to_string(rank)) != std::string::npos);
  }
  // ncu on rank 0 only; rank 1 ran the workload bare in that stage.
  const StageRecord& ncu = stage_of(manifest, "ncu");
  REQUIRE(ncu.ranks.size() == 2);
  CHECK(ncu.ranks[0].role == "ncu");
  CHECK(ncu.ranks[1].role == "bare");
  CHECK(fs::exists(e2e.main() / "ranks/r0/ncu/raw.csv"));
  CHECK_FALSE(fs::exists(e2e.main() / "ranks/r1/ncu/profile.ncu-rep"));
  CHECK(read_file(e2e.main() / "nsys/cmd.txt").find("rank-exec --run-directory") != std::string::npos);
  CHECK(fs::exists(e2e.main() / "analysis/report.json"));
  // The cross-rank view: one row per rank; the fake nsys has no trace tables, so the straggler and
  // skew are named as not computed rather than guessed.
  const std::string ranks_csv = read_file(e2e.main() / "analysis/ranks.csv");
  CHECK(std::count(ranks_csv.begin(), ranks_csv.end(), '\n') == 3);
  CHECK(ranks_csv.find("\n0,") != std::string::npos);
  CHECK(ranks_csv.find("\n1,") != std::string::npos);
  const std::string report = read_file(e2e.main() / "report.md");
  CHECK_THAT(report, Catch::Contains("## Across ranks"));
  CHECK_THAT(report, Catch::Contains("Not computed: straggler and skew: rank 0 has no NVTX range trace"));
  CHECK_THAT(read_file(e2e.main() / "report.html"), Catch::Contains("<section id=\"ranks\"><h2>Across ranks</h2>"));
  check_nothing_shared(e2e.main(), 2);
}

TEST_CASE("a hanging rank is killed at the stage timeout and the stage names it") {
  if (!have("mpirun", "openmpi-bin")) return;
  EndToEnd e2e;
  const Finished finished = e2e.run({launched(mpirun, {"--set", "workload.timeout_s=3"}), {{"E2E_HANG_RANK", "1"}}});
  CHECK(finished.exit_code == 124);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& stage1 = stage_of(manifest, "stage1");
  CHECK(stage1.status == StageStatus::failed);
  CHECK(stage1.reason ==
        "rank 1 ran past workload.timeout_s=3s; its process tree was killed (see ranks/r1/stage1/output.log)");
  REQUIRE(stage1.ranks.size() == 2);
  CHECK(stage1.ranks[0].status == StageStatus::ok);
  CHECK(stage1.ranks[1].status == StageStatus::failed);
  CHECK(stage1.ranks[1].exit_code == std::nullopt);
  CHECK(fs::exists(e2e.main() / "ranks/r1/stage1/output.log"));  // nothing lost
}

// Issue 33: a rank's survivors are its own rank-exec's to end (the launcher never sees them): each stage that ran
// rank 1 names its daemon with the rank, and ends it.
TEST_CASE("a daemon one rank leaves is named with its rank and ended after every stage") {
  if (!have("mpirun", "openmpi-bin")) return;
  EndToEnd e2e;
  const fs::path pids = e2e.temp() / "daemons";
  fs::create_directories(pids);
  const Finished finished =
      e2e.run({launched(mpirun, {"--set", "run.survivor_grace_s=0.2"}),
               {{"E2E_DAEMON_RANK", "1"}, {"E2E_DAEMON_DIR", pids.string()}}});
  INFO(finished.out);
  const RunManifest manifest = e2e.manifest();
  std::size_t named = 0;
  for (const auto& stage : manifest.stages) {
    for (const auto& warning : stage.warnings) {
      if (warning.find("process(es) running after exiting") == std::string::npos) continue;
      ++named;
      CHECK_THAT(warning, Catch::StartsWith("rank 1's workload"));
      CHECK_THAT(warning, Catch::Contains("ended them with SIGTERM, and with SIGKILL after"));
    }
  }
  const DaemonCount counted = count_and_kill_daemons(pids);
  const std::size_t daemons = counted.started, alive = counted.alive;
  CHECK(daemons >= 3);  // stage 1, nsys, at least one ncu pass
  CHECK(named == daemons);
  CHECK(alive == 0);
}

TEST_CASE("a failing rank fails the stage with that rank named") {
  if (!have("mpirun", "openmpi-bin")) return;
  EndToEnd e2e;
  const Finished finished = e2e.run({launched(mpirun), {{"E2E_FAIL_RANK", "1"}}});
  CHECK(finished.exit_code == 1);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& stage1 = stage_of(manifest, "stage1");
  CHECK(stage1.status == StageStatus::failed);
  CHECK_THAT(stage1.reason, Catch::StartsWith("rank 1 workload exit code 3"));
}

TEST_CASE("bad launcher input is refused before a run directory exists") {
  EndToEnd e2e;
  const Finished unknown = e2e.run({{"--launcher", "flux run -n 2", "--", "true"}});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("unknown launcher 'flux'"));
  const Finished outside = e2e.run({{"--launcher", "mpirun -np 2", "--ranks", "0,3", "--", "true"}});
  CHECK(outside.exit_code == 2);
  CHECK_THAT(outside.err, Catch::Contains("--ranks 0,3 names rank 3, outside the world size 2"));
  const Finished alone = e2e.run({{"--ranks", "0", "--", "true"}});
  CHECK(alone.exit_code == 2);
  CHECK_FALSE(fs::exists(e2e.main()));
}

TEST_CASE("a rank list outside a world size only the ranks know is refused by every rank") {
  if (!have("mpirun", "openmpi-bin")) return;
  EndToEnd e2e;
  // --host localhost:2 starts two ranks without saying so in a way deep-profile reads.
  const Finished finished = e2e.run({launched("mpirun --allow-run-as-root --host localhost:2", {"--ranks", "0,5"})});
  CHECK(finished.exit_code == 1);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::failed);
  CHECK(nsys.reason == "--ranks 0,5 names rank 5, outside the world size 2 (ranks 0-1); nothing was run");
}

TEST_CASE("a launcher that dies before any rank starts fails the stage with its own words") {
  if (!have("mpirun", "openmpi-bin")) return;
  EndToEnd e2e;
  const Finished finished = e2e.run({launched("mpirun --allow-run-as-root -np 64")});
  CHECK(finished.exit_code == 1);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& stage1 = stage_of(manifest, "stage1");
  CHECK_THAT(
      stage1.reason,
      Catch::StartsWith("the launcher (mpirun) ended with exit code 1 before any rank started; its last lines:"));
  CHECK(fs::exists(e2e.main() / "stage1/launcher.log"));
}

// Issue 33: a task that refuses before it knows its rank writes no status (srun with a stale RANK/WORLD_SIZE
// beside SLURM_PROCID): the rank that reported finished, the launcher exits 2, and the stage's reason carries
// the refusing task's own words instead of "although every rank finished". The launcher is a stand-in for
// mpirun on PATH: it runs the rank command once as rank 0 of 1, then reports the other task's refusal.
TEST_CASE("a launcher failing after the ranks that reported finished: the reason quotes its log") {
  EndToEnd e2e;
  const fs::path bin = e2e.temp() / "bin";
  fs::create_directories(bin);
  write_file(bin / "mpirun",
             "#!/bin/sh\n"
             "while [ $# -gt 0 ]; do case \"$1\" in -*|[0-9]*) shift;; *) break;; esac; done\n"
             "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK=0 \"$@\"\n"
             "echo 'deep-profile rank-exec: the launcher rank variables disagree: SLURM_PROCID=1 of 2 beside RANK=0 "
             "WORLD_SIZE=1' >&2\n"
             "exit 2\n");
  fs::permissions(bin / "mpirun", fs::perms::owner_all);
  const Finished finished =
      e2e.run({launched("mpirun -np 2"), {{"PATH", bin.string() + ":" + path_with_fake_tools()}}});
  INFO(finished.out << finished.err);
  const StageRecord& stage1 = stage_of(e2e.manifest(), "stage1");
  CHECK(stage1.status == StageStatus::failed);
  CHECK_THAT(stage1.reason, Catch::Contains("the launcher ended with exit code 2 after the 1 rank(s) that reported "
                                            "finished; its log says: deep-profile rank-exec: the launcher rank "
                                            "variables disagree"));
  CHECK_THAT(stage1.reason, !Catch::Contains("although every rank finished"));
}

// Only one nsys may sample a GPU, so under a launcher each rank samples the GPU its local rank names, and
// a rank without one (two ranks, one GPU listed) takes the samples of the rank that samples its GPU, moved onto its
// own clock. The fake nsys fails a second sampling session as 2025.3.1 does, and exports the real H200 captures of
// tests/data/gpu-metrics/ranks/ (the sampler's, with samples; the other's, without), so ranks.csv holds the figures
// tests/tools/rank_sampling_expected.py computes.
TEST_CASE("mpirun -np 2 on one GPU: one rank samples GPU metrics and both ranks get sampled figures",
          "[gpu-metrics]") {
  if (!have("mpirun", "openmpi-bin")) return;
  EndToEnd e2e;
  const fs::path data = fs::path(LLMPROF_SOURCE_DIR) / "tests/data/gpu-metrics";
  const fs::path locks = e2e.temp() / "gpu-locks";
  fs::create_directories(locks);
  const Finished finished = e2e.run({launched(mpirun, {"--set", "run.enable_ncu=false"}),
                                     {{"FAKE_NSYS_GPU_METRICS_DEVICES_FILE", (data / "devices_help_h200_2025.3.txt").string()},
                                      {"FAKE_NSYS_GPU_METRICS_SETS_FILE", (data / "set_help_h200_2025.3.txt").string()},
                                      {"FAKE_NSYS_GPU_LOCK_DIR", locks.string()},
                                      {"FAKE_NSYS_SAMPLED_SQLITE", (data / "ranks/r0_samples.sqlite").string()},
                                      {"FAKE_NSYS_SQLITE", (data / "ranks/r1_shares_gpu.sqlite").string()}}});
  INFO(finished.out);
  REQUIRE(finished.exit_code == 0);
  CHECK(stage_of(e2e.manifest(), "nsys").status == StageStatus::ok);
  const std::string sampler = read_file(e2e.main() / "ranks/r0/nsys/status.json");
  CHECK_THAT(sampler, Catch::Contains("\"gpu_metrics\":\"0\",\"gpu_metrics_bus\":\"0000:00:06.0\""));
  CHECK_THAT(read_file(e2e.main() / "ranks/r0/nsys/cmd.txt"),
             Catch::Contains("--gpu-metrics-devices=0 --gpu-metrics-frequency=20000 --gpu-metrics-set=gh100"));
  const std::string other = read_file(e2e.main() / "ranks/r1/nsys/status.json");
  CHECK_THAT(other, Catch::Contains("\"gpu_metrics\":\"\"") &&
                        Catch::Contains("not sampling: nsys lists no GPU 1 for local rank 1 (1 listed)"));
  CHECK_THAT(read_file(e2e.main() / "ranks/r1/nsys/cmd.txt"), !Catch::Contains("--gpu-metrics"));
  CHECK_THAT(read_file(e2e.main() / "deep-profile.log"),
             Catch::Contains("rank 1 (") && Catch::Contains("): not sampling: nsys lists no GPU 1"));
  // rank, ..., sampled_source_rank, sampled_clock_shift_ms, sampled_steps, sampled_samples, ...
  const std::string ranks_csv = read_file(e2e.main() / "analysis/ranks.csv");
  // Rank 0's own samples cover 13 of its 14 steps (tests/data/oracles/rank_sampling.txt: its last step's GPU work
  // ends after the trimmed export's last sample).
  CHECK_THAT(ranks_csv, Catch::Contains("\n0,") && Catch::Contains(",GPU,0,0,13,3786,"));
  CHECK_THAT(ranks_csv, Catch::Contains("\n1,") && Catch::Contains(",GPU,0,433.423098,8,2196,"));
  CHECK_THAT(read_file(e2e.main() / "report.md"), Catch::Contains("**Sampled by the GPU's counters** (each rank's decode_step"));
  // The single-rank figures (rank 0's) say that the GPU they sampled ran rank 1 too.
  CHECK_THAT(read_file(e2e.main() / "analysis/report.json"),
             Catch::Contains("from its own capture (the GPU's counters count every process on it: rank 1 ran on it too)"));
  // In HTML the sampled figures are a table of their own under their caption, not rows of the first one.
  const std::string html = read_file(e2e.main() / "report.html");
  const std::string section = html.substr(html.find("<section id=\"ranks\">"));
  CHECK_THAT(section, Catch::Contains("</table>\n<p><strong>Sampled by the GPU&#39;s counters</strong>") &&
                          Catch::Contains("<th>samples from</th>"));
}
