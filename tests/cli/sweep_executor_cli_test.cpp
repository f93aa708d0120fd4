// `deep-profile sweep` with --point-index, --merge and --executor slurm on the command line: bad
// input is a usage error before anything is written, the scripts are written where asked, and
// --submit talks to sbatch (a scripted one here; the real Slurm is in tests/e2e/slurm_test.cpp).
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "deep_profile_cli.hpp"
#include "test_support.hpp"

using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

struct Sweep {
  TempDir temp;
  fs::path plan = temp / "plan.toml";
  fs::path sweep = temp / "sweep";
  Sweep() {
    write_file(plan,
               "[[point]]\nname = \"a\"\nrun.top_n_kernels = 3\n[[point]]\nname = \"b\"\nrun.top_n_kernels = "
               "4\n[[point]]\nname = \"c\"\nrun.top_n_kernels = 5\n");
  }
  CliResult run(std::vector<std::string> extra, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> args = {"sweep", "--plan", plan.string(), "--sweep-dir", sweep.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    CliOptions options;
    options.environment = std::move(env);
    return run_deep_profile(args, options);
  }
  // An sbatch that records its arguments and answers like `sbatch --parsable` (exit `code`).
  fs::path fake_sbatch(int code = 0) {
    const fs::path bin = temp / "bin";
    write_file(bin / "sbatch",
               "#!/bin/sh\necho \"$*\" >> \"" + (temp / "sbatch.args").string() + "\"\n" +
                   (code == 0 ? "case \"$*\" in *merge.sbatch) echo 12;; *) echo '11;llmprof';; esac\n"
                              : "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2\nexit " +
                                    std::to_string(code) + "\n"));
    ::chmod((bin / "sbatch").c_str(), 0755);
    return bin;
  }
};

}  // namespace

TEST_CASE("sweep executors: bad combinations and values are usage errors (2) and write nothing", "[cli]") {
  Sweep sweep;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--executor", "pbs"}, "--executor must be local or slurm, not 'pbs'"},
      {{"--point-index", "3"},
       "--point-index 3 is outside the plan " + sweep.plan.string() + ", which has 3 points (0-2)"},
      {{"--point-index", "-1"}, "--point-index takes a point number (0, 1, ...), not '-1'"},
      {{"--executor", "slurm", "--concurrency", "0"},
       "--concurrency takes a number of array tasks of at least 1, not '0'"},
      {{"--submit"}, "--submit and --concurrency go with --executor slurm"},
      {{"--point-index", "0", "--merge"}, "separate steps: give one of them"},
      {{"--executor", "slurm", "--set", "run.top_n_kernel=3"}, "run.top_n_kernel"},
  };
  for (const auto& [args, says] : cases) {
    const CliResult result = sweep.run(args);
    INFO(result.err);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Catch::Contains(says));
  }
  const CliResult no_plan = run_deep_profile({"sweep", "--point", "run.top_n_kernels=3", "--point-index", "0"});
  CHECK(no_plan.exit_code == 2);
  CHECK_THAT(no_plan.err, Catch::Contains("need --plan FILE"));
  const CliResult missing = run_deep_profile({"sweep", "--plan", (sweep.temp / "absent.toml").string(), "--merge"});
  CHECK(missing.exit_code == 2);
  CHECK_FALSE(fs::exists(sweep.sweep));
}

TEST_CASE("sweep --executor slurm writes the job array and merge scripts and says how to submit them", "[cli]") {
  Sweep sweep;
  const CliResult result =
      sweep.run({"--executor", "slurm", "--concurrency", "2", "--preset", "quick", "--", "/bin/true", "--flag"});
  REQUIRE(result.exit_code == 0);
  const std::string array = read_file(sweep.sweep / "sweep.sbatch");
  CHECK_THAT(array, Catch::Contains("#SBATCH --array=0-2%2\n#SBATCH --gpus=1\n"));
  CHECK_THAT(array, Catch::Contains("#SBATCH --output=" + (sweep.sweep / "logs/point-%a.out").string() + "\n"));
  CHECK_THAT(array, Catch::Contains("exec " + std::string(LLMPROF_DEEP_PROFILE_EXE) + " sweep --plan " +
                                    sweep.plan.string() + " --sweep-dir " + sweep.sweep.string() +
                                    " --preset quick --point-index \"$SLURM_ARRAY_TASK_ID\" -- /bin/true --flag\n"));
  CHECK_THAT(read_file(sweep.sweep / "merge.sbatch"), Catch::Contains(" --merge\n"));
  CHECK(fs::is_directory(sweep.sweep / "logs"));
  CHECK_THAT(result.out,
             Catch::Contains("sbatch --dependency=afterany:$array " + (sweep.sweep / "merge.sbatch").string()));
}

TEST_CASE("sweep --submit submits the array, then the merge job after any end of it, and says how to follow", "[cli]") {
  Sweep sweep;
  const fs::path bin = sweep.fake_sbatch();
  const CliResult result = sweep.run({"--executor", "slurm", "--submit"}, {{"PATH", bin.string() + ":/usr/bin:/bin"}});
  REQUIRE(result.exit_code == 0);
  CHECK(read_file(sweep.temp / "sbatch.args") == "--parsable " + (sweep.sweep / "sweep.sbatch").string() +
                                                     "\n--parsable --dependency=afterany:11 " +
                                                     (sweep.sweep / "merge.sbatch").string() + "\n");
  CHECK_THAT(result.out, Catch::Contains("submitted job array 11 (3 points) and merge job 12"));
  CHECK_THAT(result.out, Catch::Contains("follow with:  squeue -j 11,12"));
  CHECK_THAT(result.out, Catch::Contains((sweep.sweep / "index.md").string()));
}

TEST_CASE("sweep --submit without a working sbatch is 'not ready' (3) and keeps the scripts", "[cli]") {
  Sweep sweep;
  SECTION("sbatch refuses") {
    const fs::path bin = sweep.fake_sbatch(1);
    const CliResult result =
        sweep.run({"--executor", "slurm", "--submit"}, {{"PATH", bin.string() + ":/usr/bin:/bin"}});
    CHECK(result.exit_code == 3);
    CHECK_THAT(
        result.err,
        Catch::Contains(
            "sbatch refused the job (exit code 1): sbatch: error: Batch job submission failed: Invalid account"));
  }
  SECTION("no sbatch on PATH") {
    const CliResult result =
        sweep.run({"--executor", "slurm", "--submit"}, {{"PATH", (sweep.temp / "empty").string()}});
    CHECK(result.exit_code == 3);
    CHECK_THAT(result.err, Catch::Contains("sbatch (Slurm's submit command) is not on PATH"));
    CHECK_THAT(result.err, Catch::Contains("--executor local"));
  }
  CHECK(fs::exists(sweep.sweep / "sweep.sbatch"));
}
