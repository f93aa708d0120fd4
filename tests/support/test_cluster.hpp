// A real single-node Slurm (munge, slurmctld, slurmd) for one test: scripts/cluster.sh started in a
// private state directory (its own ports, so tests and worktrees on one host do not collide) and
// stopped by its PID files when the test ends, also when it fails.
//
//   auto cluster = TestCluster::start_or_skip();
//   if (!cluster) return;                  // skipped, with the reason; a failure under LLMPROF_REQUIRE_CLUSTER=1
//   run_deep_profile(args, {cluster->environment()});
//
// Where the cluster cannot start (not root, Slurm or munge not installed, a daemon that fails) the test
// is skipped with the script's words, unless LLMPROF_REQUIRE_CLUSTER=1 (scripts/test.sh, i.e. CI),
// which makes it a failure: there the packages are installed, so a skip would hide a broken setup.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "llmprof/process.hpp"
#include "skip.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

// Skips the test with `why` (skip.hpp), or fails it where LLMPROF_REQUIRE_CLUSTER=1 forbids skipping.
inline void skip_or_fail(const std::string& why) { skip_test(why, "LLMPROF_REQUIRE_CLUSTER"); }

class TestCluster {
 public:
  static std::unique_ptr<TestCluster> start_or_skip() {
    auto cluster = std::unique_ptr<TestCluster>(new TestCluster());
    std::string words;
    auto outcome = cluster->script("start", &words);
    if (!outcome || !outcome->succeeded()) {
      (void)cluster->script("stop", nullptr);  // whatever half of it started
      skip_or_fail("no test cluster: scripts/cluster.sh start failed (" +
                   (outcome ? outcome->describe() : outcome.error().describe()) + "): " + words);
      return nullptr;
    }
    return cluster;
  }
  ~TestCluster() { (void)script("stop", nullptr); }
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  std::filesystem::path state() const { return state_.path(); }
  std::filesystem::path config() const { return state_ / "slurm.conf"; }
  // What a process that uses this cluster (sbatch, srun, sinfo) needs in its environment.
  std::map<std::string, std::string> environment() const { return {{"SLURM_CONF", config().string()}}; }
  // jobcomp/filetxt's record of every job that ended: state and exit code per array task.
  std::string job_completions() const {
    const auto log = state_ / "log/jobcomp.log";
    return std::filesystem::exists(log) ? read_file(log) : std::string();
  }

 private:
  TestCluster() = default;

  Result<ProcessOutcome> script(const std::string& action, std::string* words) {
    ProcessSpec spec;
    spec.argv = {(std::filesystem::path(LLMPROF_SOURCE_DIR) / "scripts/cluster.sh").string(), action};
    spec.environment["LLMPROF_CLUSTER_DIR"] = state_.path().string();
    const auto keep = [words](const std::string& line) {
      if (words != nullptr) *words += line + "\n";
    };
    spec.on_stdout_line = keep;
    spec.on_stderr_line = keep;
    spec.timeout = std::chrono::seconds(60);
    return runner_->run(spec);
  }

  TempDir state_;
  std::unique_ptr<ProcessRunner> runner_ = make_system_process_runner();
};

}  // namespace llmprof::testing
