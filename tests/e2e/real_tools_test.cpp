// End to end with the REAL Nsight tools on a machine without a GPU: Debian 12's nsys 2022.4.2.1 and ncu
// 2022.3.0, unpacked by scripts/install-nsight.sh (Debian's split layout: nsys does not find its importer).
// The workload is the bundled example (CPU LibTorch build, tiny preset); PATH holds no tool, so the probe
// must find them in the install-nsight.sh cache by itself.
//
// Where the tools are absent the tests skip (tests/support/real_tools.hpp), unless CI requires them.
#include <sys/wait.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "llmprof/run_directory.hpp"
#include "llmprof/shell_quote.hpp"
#include "llmprof/tool_probe.hpp"
#include "real_tools.hpp"
#include "run_manifest_reading.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

// Only the tests that run the bundled example use these (a build without LibTorch, e.g. the werror preset,
// compiles them out).
#ifdef LLMPROF_EXAMPLE_EXE
std::vector<std::string> run_args(const TempDir& temp, std::vector<std::string> extra) {
  std::vector<std::string> args = {"run",
                                   "--set",
                                   "run.runs_root=" + (temp / "runs").string(),
                                   "--set",
                                   "run.run_id=real",
                                   "--set",
                                   "run.min_free_space_gb=0",
                                   "--set",
                                   "workload.example_args=[\"--preset\",\"tiny\"]"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// cmd.txt lines that are commands: a "# ..." line says why the next command reads as it does.
std::size_t count_command_lines(const std::string& text) {
  std::size_t count = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.front() != '#') ++count;
  }
  return count;
}
#endif

}  // namespace

TEST_CASE("real tools: probe finds nsys 2022.4 and ncu 2022.3 in the cache with no PATH and says what they can do") {
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished probe = deep_profile(temp, {"probe"});
  CHECK(probe.exit_code == 0);
  CHECK(probe.out.find("version: 2022.4.2.1-df9881f") != std::string::npos);
  CHECK(probe.out.find("version: 2022.3.0.0 (build 31729285) (public-release)") != std::string::npos);
  CHECK(probe.out.find(" nvtxsum ") != std::string::npos);
  CHECK(probe.out.find("not where nsys looks: deep-profile imports .qdstrm files itself") != std::string::npos);
  CHECK(probe.out.find(
            "[yes] nsys stats tables: gpukernsum, nvtxsum, nvtxkernsum, nvtxgpuproj, cudaapisum, gpumemtimesum") !=
        std::string::npos);
  CHECK(probe.out.find("[no ] tensor-core FLOP per kernel") != std::string::npos);
  // The tools are ready; the verdict weighs the driver too: on a machine without one (CI) it is degraded and says so.
  if (detect_nvidia_driver().present) {
    CHECK(probe.out.find("verdict: ready") != std::string::npos);
  } else {
    CHECK(probe.out.find("verdict: degraded") != std::string::npos);
    CHECK(probe.out.find("no NVIDIA GPU driver: ") != std::string::npos);
  }
}

TEST_CASE("real tools: nsys.stats_reports asks nsys 2022.4 for its CSVs, and the tables are read from them") {
#ifndef LLMPROF_EXAMPLE_EXE
  skip_test("the bundled example is not built (LibTorch missing)");
  return;
#else
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(temp, run_args(temp, {"--set", "nsys.stats_reports=[\"nvtxsum\"]"}));
  const fs::path main = temp / "runs" / "real";
  CHECK(run.exit_code == 0);
  CHECK(stage_of(manifest_of(main), "nsys").status == StageStatus::ok);
  CHECK(read_file(main / "nsys/cmd.txt").find(" stats --report nvtxsum ") != std::string::npos);
  // Real stats under the 2022.4 name, gated on decode: decode once, one decode_step per new token.
  const std::string nvtx = read_file(main / "nsys/summary_nvtxsum.csv");
  CHECK(nvtx.find(",PushPop,decode\n") != std::string::npos);
  CHECK(nvtx.find(",PushPop,decode_step") != std::string::npos);
  CHECK(nvtx.find("prefill") == std::string::npos);  // outside the gate
  CHECK(read_file(main / "analysis/report.json").find("summary_<report>.csv") != std::string::npos);
#endif
}

TEST_CASE("real tools: a gated run of the CPU example gives a real timeline, stats, SQLite and a diagnosed ncu") {
#ifndef LLMPROF_EXAMPLE_EXE
  skip_test("the bundled example is not built (LibTorch missing)");
  return;
#else
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run = deep_profile(temp, run_args(temp, {}));
  const fs::path main = temp / "runs" / "real";
  CHECK(run.exit_code == 0);
  const RunManifest manifest = manifest_of(main);
  for (const char* stage : {"probe", "stage1", "nsys", "analyze", "report"}) {
    INFO(stage << ": " << stage_of(manifest, stage).reason);
    CHECK(stage_of(manifest, stage).status == StageStatus::ok);
    CHECK(stage_of(manifest, stage).duration_s > 0);
  }
  // No GPU: nothing to select, and ncu's real "failed to connect to the CUDA driver" is the reason, once.
  CHECK(stage_of(manifest, "select").status == StageStatus::skipped);
  CHECK(stage_of(manifest, "select").reason.find("kernel-level stages need an NVIDIA GPU") != std::string::npos);
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(ncu.status == StageStatus::skipped);
  CHECK(ncu.reason.find("ncu could not connect to the CUDA driver") != std::string::npos);
  const std::string ncu_log = read_file(main / "ncu/profile.log");
  CHECK(ncu_log.find("==WARNING== No kernels were profiled.") != std::string::npos);
  // Exit 0 as documented, but not "ok": the run says which stages the machine could not run.
  CHECK(manifest.status == RunStatus::hardware_limited);
  CHECK(run.out.find("outcome: hardware_limited") != std::string::npos);
  CHECK(run.out.find("skipped for lack of hardware: select, ncu") != std::string::npos);
  const std::string ncu_commands = read_file(main / "ncu/cmd.txt");
  CHECK(count_command_lines(ncu_commands) == 1);  // not retried
  CHECK(ncu_commands.rfind("# recorded without the overwrite flag", 0) == 0);
  // Debian's split install: nsys left a .qdstrm and deep-profile imported it, recording the command.
  const std::string nsys_commands = read_file(main / "nsys/cmd.txt");
  CHECK(nsys_commands.find("--capture-range=nvtx") != std::string::npos);
  CHECK(nsys_commands.find("QdstrmImporter -i ") != std::string::npos);
  CHECK(fs::file_size(main / "nsys/profile.nsys-rep") > 0);
  CHECK(read_file(main / "nsys/profile.log")
            .find("Importer error status: The importer binary and its dependencies were not found") !=
        std::string::npos);
  // The tables from the real export through our reader (nsys.stats_reports is empty: no `nsys stats` ran, no
  // summary CSV), gated on decode: decode once, one decode_step per new token, no prefill (outside the gate).
  CHECK(nsys_commands.find(" stats ") == std::string::npos);
  CHECK_FALSE(fs::exists(main / "nsys/summary_nvtxsum.csv"));
  std::map<std::string, std::int64_t> instances;
  const boost::json::value tables = boost::json::parse(read_file(main / "analysis/report.json"));
  for (const auto& range : tables.at("nvtx_ranges").as_array())
    instances[std::string(range.at("name").as_string())] += range.at("instances").to_number<std::int64_t>();
  CHECK(instances["decode"] == 1);
  CHECK(instances["decode_step"] == 32);
  CHECK(instances.count("prefill") == 0);
  const std::string sqlite = read_file(main / "nsys/profile.sqlite");
  CHECK(sqlite.rfind("SQLite format 3", 0) == 0);
  CHECK(sqlite.find("NVTX_EVENTS") != std::string::npos);
  CHECK(read_file(main / "report.md").find("decode_step") != std::string::npos);
  // nsys 2022.4 without a GPU cannot sample GPU metrics: the probe and the run say why, the capture carries no
  // sampling flag, and the report is the same minus the panel, saying so.
  CHECK(nsys_commands.find("--gpu-metrics") == std::string::npos);
  CHECK(run.out.find("GPU-metrics sampling not available, so the report has no sampled utilisation: nsys says: "
                     "NVIDIA GPUs not found, feature is not available") != std::string::npos);
  CHECK(read_file(main / "report.md")
            .find("No sampled utilisation: no GPU-metrics samples in the capture") != std::string::npos);
  // nvtx_sum has no p99; the SQLite timeline saw the same 32 decode_step instances and supplies it.
  const boost::json::object report = boost::json::parse(read_file(main / "analysis/report.json")).as_object();
  std::optional<double> range_p99, range_p50, range_max, timeline_p99;
  for (const auto& range : report.at("nvtx_ranges").as_array()) {
    if (range.at("name").as_string() != "decode_step") continue;
    REQUIRE(range.at("p99_ns").is_number());
    range_p99 = range.at("p99_ns").to_number<double>();
    range_p50 = range.at("p50_ns").to_number<double>();
    range_max = range.at("max_ns").to_number<double>();
  }
  for (const auto& stage : report.at("timeline").at("stages").as_array()) {
    if (stage.at("name").as_string() == "decode_step")
      timeline_p99 = stage.at("cpu_duration").at("p99_ns").to_number<double>();
  }
  REQUIRE(range_p99);
  REQUIRE(timeline_p99);
  CHECK(*range_p99 == *timeline_p99);
  CHECK(*range_p99 >= *range_p50 - 1);  // nvtx_sum's median is rounded to 0.1 ns
  CHECK(*range_p99 <= *range_max);
  CHECK(read_file(main / "report.md").find("p99 from every instance's duration in the SQLite export") !=
        std::string::npos);
  CHECK(read_file(main / "report.html").find("id=\"timeline\"") == std::string::npos);  // no GPU work: no stage chart
#endif
}

TEST_CASE("real tools: a gate that never opens ends with the diagnosis naming the emitted ranges, exit 1") {
#ifndef LLMPROF_EXAMPLE_EXE
  skip_test("the bundled example is not built (LibTorch missing)");
  return;
#else
  if (!have_real_tools()) return;
  TempDir temp;
  const Finished run =
      deep_profile(temp, run_args(temp, {"--set", "nsys.nvtx_capture=decod", "--set", "run.enable_ncu=false"}));
  CHECK(run.exit_code == 1);
  const RunManifest manifest = manifest_of(temp / "runs" / "real");
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO("nsys stage: " << nsys.reason);
  CHECK(nsys.status == StageStatus::failed);
  CHECK(nsys.reason.find("never opened") != std::string::npos);
  // The example's ranges, from its stage-1 metrics: generate, prefill, attention, mlp, lm_head, sample, decode,
  // decode_step.
  CHECK(nsys.reason.find("\"generate\", \"prefill\", \"attention\", \"mlp\", \"lm_head\", \"sample\", \"decode\", "
                         "\"decode_step\" in the default domain") != std::string::npos);
  CHECK(nsys.reason.find("Fix: --set nsys.nvtx_capture=decode") != std::string::npos);
#endif
}
