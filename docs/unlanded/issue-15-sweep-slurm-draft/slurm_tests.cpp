
namespace {

// The test cluster of scripts/cluster.sh: srun on PATH and SLURM_CONF naming a running controller.
bool have_cluster() {
  if (!have("srun", "slurm-client")) return false;
  const char* conf = std::getenv("SLURM_CONF");
  if (conf != nullptr && fs::exists(conf)) return true;
  const std::string why = "no test cluster (SLURM_CONF is unset): start one with `eval \"$(scripts/cluster.sh start)\"`";
  if (cluster_required()) FAIL(why + "; LLMPROF_REQUIRE_CLUSTER=1 forbids skipping");
  WARN("skipped: " + why);
  return false;
}

}  // namespace

TEST_CASE("srun -n 2 on the test cluster: two rank directories from Slurm's variables and the cross-rank section") {
  if (!have_cluster()) return;
  EndToEnd e2e;
  const Finished finished = e2e.run({launched("srun -n 2")});
  REQUIRE(finished.exit_code == 0);
  const RunManifest manifest = e2e.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  REQUIRE(nsys.ranks.size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    const fs::path directory = e2e.main() / "ranks" / ("r" + std::to_string(rank));
    CHECK(nsys.ranks[rank].status == StageStatus::ok);
    CHECK(fs::exists(directory / "nsys/profile.nsys-rep"));
    CHECK_THAT(read_file(directory / "stage1/status.json"), Catch::Contains("\"source\":\"srun\""));
  }
  CHECK_THAT(read_file(e2e.main() / "report.md"), Catch::Contains("## Across ranks"));
  check_nothing_shared(e2e.main(), 2);
}

TEST_CASE("a 3-point sweep through the Slurm job array: the merge job indexes 2 ok points and 1 failed one") {
  if (!have_cluster()) return;
  TempDir temp;
  const fs::path workload = fs::path(LLMPROF_SOURCE_DIR) / "tests/end_to_end/workload.sh";
  write_file(temp.path() / "plan.toml",
             "[[point]]\nname = \"first\"\nworkload.argv = [\"" + workload.string() + "\"]\n"
             "[[point]]\nname = \"broken\"\nworkload.argv = [\"/bin/false\"]\n"
             "[[point]]\nname = \"third\"\nworkload.argv = [\"" + workload.string() + "\"]\n");
  const fs::path sweep = temp.path() / "sweep";
  EndToEnd e2e;
  const Finished submitted = e2e.run({{"--plan", (temp.path() / "plan.toml").string(), "--sweep-dir", sweep.string(), "--executor", "slurm",
                                       "--submit", "--concurrency", "2"},
                                      {},
                                      {},
                                      "sweep"});
  REQUIRE(submitted.exit_code == 0);
  CHECK_THAT(submitted.out, Catch::Contains("follow with: squeue -j "));
  CHECK_THAT(read_file(sweep / "sweep.sbatch"), Catch::Contains("#SBATCH --array=0-2%2\n"));
  // The merge job writes the index after every array task has ended (afterany).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (!fs::exists(sweep / "index.json") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  REQUIRE(fs::exists(sweep / "index.json"));
  const auto index = boost::json::parse(read_file(sweep / "index.json")).as_object();
  std::map<std::string, std::string> statuses;
  for (const auto& row : index.at("rows").as_array()) {
    statuses[std::string(row.at("label").as_string())] = std::string(row.at("status").as_string());
  }
  CHECK(statuses == std::map<std::string, std::string>{{"first", "ok"}, {"broken", "failed"}, {"third", "ok"}});
  CHECK(fs::exists(sweep / "logs/merge.out"));
  CHECK(fs::exists(sweep / "point-1/run.json"));
}
