// End to end: `deep-profile sweep --plan F --point-index I` and `--merge` without a scheduler, as each
// Slurm array task and the merge job run them: the real binary, fake nsys/ncu, tests/e2e/workload.sh.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "deep_profile_cli.hpp"
#include "llmprof/run_directory.hpp"
#include "test_support.hpp"
#include "rundir/run_records.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

const fs::path workload = fs::path(LLMPROF_SOURCE_DIR) / "tests/e2e/workload.sh";

struct PointSweep {
  TempDir temp;
  fs::path plan = temp / "plan.toml";
  fs::path sweep = temp / "sweep";
  PointSweep() {
    write_file(plan,
               "[[point]]\nname = \"never-run\"\nrun.top_n_kernels = 3\n[[point]]\nname = "
               "\"second\"\nrun.top_n_kernels = 5\n");
  }
  CliResult run(std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "sweep", "--plan", plan.string(), "--sweep-dir", sweep.string(), "--set", "run.min_free_space_gb=0"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", workload.string()});
    CliOptions options;
    options.environment["PATH"] = path_with_fake_tools();
    return run_deep_profile(args, options);
  }
};

}  // namespace

TEST_CASE(
    "sweep --point-index runs one point into SWEEP/point-<I> once and --merge lists the point that never ran as failed",
    "[e2e][slow]") {
  PointSweep sweep;
  const CliResult first = sweep.run({"--point-index", "1"});
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.out, Catch::Contains("point 1 (second): ok in " + (sweep.sweep / "point-1").string()));
  const std::string manifest = read_file(sweep.sweep / "point-1/run.json");
  CHECK(manifest_from_json(manifest)->status == RunStatus::ok);
  CHECK_THAT(read_file(sweep.sweep / "point-1/config.toml"), Catch::Contains("top_n_kernels = 5"));
  CHECK_FALSE(fs::exists(sweep.sweep / "point-0"));

  // A task run again (a requeue, the array submitted again) finds the finished point and leaves it.
  const CliResult again = sweep.run({"--point-index", "1"});
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains("already finished with status ok") && Catch::Contains("not run again"));
  CHECK(read_file(sweep.sweep / "point-1/run.json") == manifest);

  const CliResult merged = sweep.run({"--merge"});
  CHECK(merged.exit_code == 1);
  CHECK_THAT(merged.out, Catch::Contains("sweep index: " + (sweep.sweep / "index.md").string()));
  const auto index = boost::json::parse(read_file(sweep.sweep / "index.json")).as_object();
  const auto& points = index.at("points").as_array();
  REQUIRE(points.size() == 2);
  CHECK(points[0].at("label").as_string() == "never-run");
  CHECK(points[0].at("status").as_string() == "failed");
  CHECK_THAT(std::string(points[0].at("error").as_string()),
             Catch::Contains("left no run.json") && Catch::Contains("logs/point-0.out"));
  CHECK(points[1].at("status").as_string() == "ok");
  CHECK(points[1].at("tokens_per_s").is_double());
}
