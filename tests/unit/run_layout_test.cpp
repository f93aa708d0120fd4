// RunLayout names the files a real run left: the recorded H100 run directory (tests/data/h100-1b-decode,
// written by `deep-profile run` before RunLayout existed) has each of them where RunLayout says.
#include <catch2/catch.hpp>

#include <set>

#include "llmprof/nsys_stats.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/run_layout.hpp"
#include "test_support.hpp"
#include "rundir/run_records.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;

TEST_CASE("RunLayout names every file of the recorded H100 run where the pipeline wrote it") {
  const RunLayout recorded(data_path("h100-1b-decode"));
  for (const auto& relative :
       {RunLayout::manifest(), RunLayout::resolved_config(), RunLayout::environment(), RunLayout::inputs(),
        RunLayout::ncu_sections(), RunLayout::stage1_commands(), RunLayout::stage1_stdout(), RunLayout::stage1_stderr(),
        RunLayout::stage1_metrics(), RunLayout::nsys_commands(), RunLayout::nsys_log("profile.log"),
        RunLayout::nsys_metrics(), RunLayout::nsys_stats_log(), RunLayout::ncu_commands(),
        RunLayout::ncu_log("profile.log"), RunLayout::ncu_raw_csv()}) {
    INFO(relative.string());
    CHECK(std::filesystem::is_regular_file(recorded.resolve(relative)));
  }
  // nsys stats wrote <prefix>_<report>.csv for each report libllmprof parses.
  const auto prefix = recorded.resolve(RunLayout::nsys_stats_prefix());
  CHECK(std::filesystem::is_regular_file(nsys_stats_report_path(prefix, "cuda_gpu_kern_sum")));
  CHECK(nsys_stats_report_path(RunLayout::nsys_stats_prefix(), "nvtx_sum") == "nsys/summary_nvtx_sum.csv");

  // What run.json recorded (artifacts, commands, logs) are RunLayout names.
  auto manifest = manifest_from_json(read_file(recorded.resolve(RunLayout::manifest())));
  REQUIRE(manifest.has_value());
  const std::set<std::string> named = {RunLayout::environment(),
                                       RunLayout::ncu_sections(),
                                       RunLayout::stage1_commands(),
                                       RunLayout::stage1_stdout(),
                                       RunLayout::stage1_stderr(),
                                       RunLayout::stage1_metrics(),
                                       RunLayout::nsys_commands(),
                                       RunLayout::nsys_log("profile.log"),
                                       RunLayout::nsys_report_base().string() + ".nsys-rep",
                                       RunLayout::ncu_commands(),
                                       RunLayout::ncu_log("profile.log"),
                                       RunLayout::ncu_report(),
                                       RunLayout::ncu_raw_csv(),
                                       RunLayout::probe_log(),
                                       RunLayout::select_log(),
                                       RunLayout::kernel_selection(),
                                       RunLayout::analysis_kernels(),
                                       RunLayout::analysis_stages(),
                                       RunLayout::analysis_report(),
                                       RunLayout::report_markdown(),
                                       RunLayout::report_html()};
  std::size_t recorded_names = 0;
  for (const auto& stage : manifest->stages) {
    std::vector<std::string> files = stage.artifacts;
    if (stage.cmd_file) files.push_back(*stage.cmd_file);
    if (stage.log_file) files.push_back(*stage.log_file);
    for (const auto& file : files) {
      INFO(stage.name << ": " << file);
      ++recorded_names;
      const bool stats_table = file.rfind(RunLayout::nsys_stats_prefix().string() + "_", 0) == 0;
      CHECK((named.count(file) == 1 || stats_table));
    }
  }
  CHECK(recorded_names > 10);
}

TEST_CASE("RunLayout resolves against its MAIN and RunDirectory's folders agree with it") {
  const RunLayout layout("/runs/r1");
  CHECK(layout.resolve(RunLayout::ncu_raw_csv()) == "/runs/r1/ncu/raw.csv");
  CHECK(RunLayout::ncu_report("followup_2") == "ncu/followup_2.ncu-rep");
  CHECK(RunLayout::ncu_csv("followup_2") == "ncu/followup_2.csv");
  CHECK(RunLayout::ncu_output_base() == "ncu/profile");
  CHECK(RunLayout::stage1_metrics().parent_path() == RunLayout::stage1_directory());
  CHECK(RunLayout::analysis_report().parent_path() == RunLayout::analysis_directory());
  CHECK(RunLayout::nsys_sqlite().parent_path() == RunLayout::nsys_directory());
}
