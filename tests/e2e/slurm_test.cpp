// End to end on a real single-node Slurm (scripts/cluster.sh, one cluster per test): a sweep as a job
// array with its merge job, and `deep-profile run --launcher 'srun -n 2'`, with the fake nsys/ncu.
// Where the cluster cannot start the tests skip with the reason, unless LLMPROF_REQUIRE_CLUSTER=1
// (scripts/test.sh, i.e. CI) turns the skip into a failure.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <thread>

#include "deep_profile_cli.hpp"
#include "llmprof/run_directory.hpp"
#include "test_cluster.hpp"
#include "process_handshake.hpp"
#include "test_support.hpp"
#include "rundir/run_records.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

const fs::path workload = fs::path(LLMPROF_SOURCE_DIR) / "tests/e2e/workload.sh";
const fs::path rank_workload = fs::path(LLMPROF_SOURCE_DIR) / "tests/e2e/rank_workload.sh";

CliOptions on_cluster(const TestCluster& cluster) {
  CliOptions options;
  options.environment = cluster.environment();
  options.environment["PATH"] = path_with_fake_tools();  // sbatch passes it on to every task
  return options;
}

// The jobcomp lines of one job: "JobState=FAILED ... ArrayTaskId=1 ... ExitCode=3:0".
std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) found.push_back(line);
  }
  return found;
}

}  // namespace

TEST_CASE("a 3-point sweep through the Slurm job array: the merge job indexes 2 ok points and 1 failed one") {
  auto cluster = TestCluster::start_or_skip();
  if (!cluster) return;
  TempDir temp;
  const fs::path plan = temp / "plan.toml", sweep = temp / "sweep";
  // The middle point's workload crashes (exit 3): its task fails, and the merge must still run.
  write_file(plan,
             "[[point]]\nname = \"first\"\nrun.top_n_kernels = 3\n"
             "[[point]]\nname = \"broken\"\nworkload.env = { E2E_WORKLOAD_MODE = \"crash\" }\n"
             "[[point]]\nname = \"third\"\nrun.top_n_kernels = 5\n");
  const CliResult submitted =
      run_deep_profile({"sweep", "--plan", plan.string(), "--sweep-dir", sweep.string(), "--executor", "slurm",
                        "--submit", "--concurrency", "2", "--set", "run.min_free_space_gb=0", "--", workload.string()},
                       on_cluster(*cluster));
  REQUIRE(submitted.exit_code == 0);
  CHECK_THAT(submitted.out, Catch::Contains("submitted job array ") && Catch::Contains("follow with:  squeue -j "));
  CHECK_THAT(read_file(sweep / "sweep.sbatch"), Catch::Contains("#SBATCH --array=0-2%2\n#SBATCH --gpus=1\n"));

  // Written by the merge job once every array task has ended (afterany): index.json, then its "sweep index:" line in
  // merge.out, which Slurm flushes a moment later (under ASan the gap was long enough to read merge.out empty).
  const fs::path merge_log = sweep / "logs/merge.out";
  const bool indexed = await_condition(
      [&] {
        return fs::exists(sweep / "index.json") && fs::exists(merge_log) &&
               read_file(merge_log).find("sweep index: ") != std::string::npos;
      },
      std::chrono::seconds(150));
  INFO("slurmctld log:\n" << read_file(cluster->state() / "log/slurmctld.log"));
  for (int point = 0; point < 3; ++point) {
    const fs::path log = sweep / "logs" / ("point-" + std::to_string(point) + ".out");
    UNSCOPED_INFO(log.string() << ":\n" << (fs::exists(log) ? read_file(log) : "(absent)"));
  }
  REQUIRE(indexed);
  const auto index = boost::json::parse(read_file(sweep / "index.json")).as_object();
  std::map<std::string, std::string> statuses;
  for (const auto& row : index.at("points").as_array()) {
    statuses[std::string(row.at("label").as_string())] = std::string(row.at("status").as_string());
  }
  CHECK(statuses == std::map<std::string, std::string>{{"first", "ok"}, {"broken", "failed"}, {"third", "ok"}});
  CHECK_THAT(read_file(merge_log), Catch::Contains("sweep index: " + (sweep / "index.md").string()));
  for (int point = 0; point < 3; ++point) {
    const fs::path main = sweep / ("point-" + std::to_string(point));
    CHECK(manifest_from_json(read_file(main / "run.json"))->run_id == "point-" + std::to_string(point));
  }
  CHECK_THAT(read_file(sweep / "logs/point-1.out"), Catch::Contains("point 1 (broken): failed"));

  // Slurm's own record: task 1 failed with deep-profile's exit 1, tasks 0 and 2 completed, and the
  // merge job ran (it exits 1 because a point failed).
  const bool recorded =
      await_condition([&] { return lines_with(cluster->job_completions(), "Name=deep-profile-sweep-merge").size() == 1; },
               std::chrono::seconds(20));
  const std::string completions = cluster->job_completions();
  INFO("jobcomp.log:\n" << completions);
  REQUIRE(recorded);
  const auto failed = lines_with(completions, "JobState=FAILED");
  CHECK(lines_with(completions, "ArrayTaskId=").size() == 3);
  CHECK(lines_with(completions, "JobState=COMPLETED").size() == 2);
  CHECK(std::count_if(failed.begin(), failed.end(), [](const std::string& line) {
          return line.find("ArrayTaskId=1 ") != std::string::npos && line.find("ExitCode=1:0") != std::string::npos;
        }) == 1);
  CHECK(lines_with(completions, "Name=deep-profile-sweep-merge")[0].find("ExitCode=1:0") != std::string::npos);
}

TEST_CASE("sbatch refusing the array is exit 3 with Slurm's words and the scripts are kept") {
  auto cluster = TestCluster::start_or_skip();
  if (!cluster) return;
  TempDir temp;
  write_file(temp / "plan.toml", "[[point]]\nname = \"only\"\nrun.top_n_kernels = 3\n");
  CliOptions options = on_cluster(*cluster);
  options.environment["SBATCH_PARTITION"] = "no-such-partition";  // sbatch reads it like --partition
  const CliResult submitted = run_deep_profile({"sweep", "--plan", (temp / "plan.toml").string(), "--sweep-dir",
                                                (temp / "sweep").string(), "--executor", "slurm", "--submit"},
                                               options);
  CHECK(submitted.exit_code == 3);
  CHECK_THAT(submitted.err, Catch::Contains("sbatch refused the job") && Catch::Contains("invalid partition"));
  CHECK(fs::exists(temp / "sweep/sweep.sbatch"));  // written, to submit by hand once fixed
}

TEST_CASE("srun -n 2 on the test cluster: two rank directories from Slurm's variables and the cross-rank section") {
  auto cluster = TestCluster::start_or_skip();
  if (!cluster) return;
  TempDir temp;
  const fs::path main = temp / "runs/e2e";
  const CliResult finished =
      run_deep_profile({"run", "--set", "run.runs_root=" + (temp / "runs").string(), "--set", "run.run_id=e2e", "--set",
                        "run.min_free_space_gb=0", "--launcher", "srun -n 2", "--", rank_workload.string()},
                       on_cluster(*cluster));
  REQUIRE(finished.exit_code == 0);
  auto manifest = manifest_from_json(read_file(main / "run.json"));
  REQUIRE(manifest);
  const auto nsys = std::find_if(manifest->stages.begin(), manifest->stages.end(),
                                 [](const auto& stage) { return stage.name == "nsys"; });
  REQUIRE(nsys != manifest->stages.end());
  REQUIRE(nsys->ranks.size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    const fs::path directory = main / "ranks" / ("r" + std::to_string(rank));
    CHECK(nsys->ranks[rank].rank == rank);
    CHECK(nsys->ranks[rank].status == StageStatus::ok);
    CHECK(fs::exists(directory / "nsys/profile.nsys-rep"));
    // The rank came from srun's SLURM_PROCID (the workload prints the one it saw).
    CHECK_THAT(read_file(directory / "stage1/output.log"), Catch::Contains("rank " + std::to_string(rank) + " on "));
  }
  CHECK_THAT(read_file(main / "report.md"), Catch::Contains("## Across ranks"));
}
