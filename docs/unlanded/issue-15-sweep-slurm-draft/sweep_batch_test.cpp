// sweep.sbatch / merge.sbatch text (golden), the point directories, and sbatch --parsable output.
#include <catch2/catch.hpp>

#include "llmprof/sweep_batch.hpp"
#include "report_golden.hpp"

namespace {

llmprof::SweepBatchRequest request() {
  llmprof::SweepBatchRequest request;
  request.deep_profile = "/opt/llmprof/bin/deep-profile";
  request.plan_file = "/home/user/plans/batch sweep.toml";
  request.sweep_directory = "/scratch/runs/sweep-batch";
  request.points = 3;
  request.concurrency = 2;
  request.shared_arguments = {"--preset", "quick", "--set", "nsys.nvtx_capture=decode"};
  request.workload = {"/opt/llmprof/bin/llmprof-decode", "--preset", "1b"};
  return request;
}

}  // namespace

TEST_CASE("sweep.sbatch is a job array over the points with one GPU each and logs per task") {
  llmprof::testing::check_golden("sweep.sbatch", llmprof::render_sweep_array_script(request()));
}

TEST_CASE("merge.sbatch builds the index from the sweep directory") {
  llmprof::testing::check_golden("sweep-merge.sbatch", llmprof::render_sweep_merge_script(request()));
}

TEST_CASE("without a concurrency limit the array line has no percent part") {
  auto unlimited = request();
  unlimited.concurrency.reset();
  CHECK_THAT(llmprof::render_sweep_array_script(unlimited), Catch::Contains("#SBATCH --array=0-2\n"));
}

TEST_CASE("point directories are SWEEP/point-<I> as the array task id spells I") {
  CHECK(llmprof::sweep_point_directory("/s", 0) == std::filesystem::path("/s/point-0"));
  CHECK(llmprof::sweep_point_directory("/s", 12) == std::filesystem::path("/s/point-12"));
}

TEST_CASE("sbatch --parsable output gives the job id with or without a cluster name") {
  CHECK(*llmprof::parse_sbatch_job_id("1234\n") == "1234");
  CHECK(*llmprof::parse_sbatch_job_id("77;cluster-a\n") == "77");
  auto garbage = llmprof::parse_sbatch_job_id("sbatch: error: invalid partition\n");
  REQUIRE_FALSE(garbage);
  CHECK_THAT(garbage.error().hint, Catch::Contains("sinfo"));
}
