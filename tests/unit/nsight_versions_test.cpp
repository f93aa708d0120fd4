// Nsight versions side by side: Debian 12's nsys 2022.4.2.1 / ncu 2022.3.0 (recorded on the GPU-less
// development machine, tests/data/debian-nsight-2022/) and the H100's 2025.3.1 (tests/data/h100-nsight-2025.3/).
// Expected merge figures: tests/tools/legacy_nsys_expected.py.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/nsys_report_file.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/tool_probe.hpp"
#include "nsight/tool_listings.hpp"
#include "oracle.hpp"
#include "probe_scripted_runner.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
// These tests weigh the tools; the machine has an NVIDIA driver unless a test says otherwise.
const llmprof::NvidiaDriver kDriver{true, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05"};

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::read_file;
using llmprof::testing::ScriptedReply;
using llmprof::testing::ScriptedRunner;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

std::vector<std::string> listed_reports(const std::string& fixture) {
  return parse_nsys_report_list(read_file(data_path(fixture)));
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

NsysInfo healthy_nsys(ToolVersion version, std::vector<std::string> reports) {
  NsysInfo nsys;
  nsys.found = true;
  nsys.path = "/x/nsys";
  nsys.version = version;
  nsys.importer.path = "/x/QdstrmImporter";
  nsys.importer.loads = true;
  nsys.importer.found_by_nsys = true;
  nsys.stats_reports = std::move(reports);
  return nsys;
}

NcuInfo healthy_ncu() {
  NcuInfo ncu;
  ncu.found = true;
  ncu.path = "/x/ncu";
  ncu.version = ToolVersion{2022, 3, 0, 0, "2022.3.0.0"};
  ncu.sections = {NcuSection{"SpeedOfLight", "GPU Speed Of Light Throughput", true}};
  return ncu;
}

}  // namespace

TEST_CASE("nsys stats --help-reports lists the 2022.4 and the 2025.3 report names") {
  const auto old_names = listed_reports("debian-nsight-2022/cli/nsys_reports.txt");
  const auto new_names = listed_reports("h100-nsight-2025.3/cli/nsys_reports.txt");
  CHECK(old_names.size() == 32);
  CHECK(new_names.size() == 40);
  for (const char* name :
       {"nvtxsum", "gpukernsum", "nvtxkernsum", "nvtxgpuproj", "cudaapisum", "gpumemtimesum", "apigpusum"}) {
    CHECK(contains(old_names, name));
  }
  for (const char* name : {"nvtx_sum", "cuda_gpu_kern_sum", "nvtx_kern_sum", "nvtx_gpu_proj_sum", "cuda_api_sum",
                           "cuda_gpu_mem_time_sum", "um_sum"}) {
    CHECK(contains(new_names, name));
  }
  CHECK_FALSE(contains(new_names, "nvtxsum"));
}

TEST_CASE("the stats stage asks each nsys for the names it has") {
  const auto old_choice = choose_nsys_stats_reports(listed_reports("debian-nsight-2022/cli/nsys_reports.txt"));
  CHECK(old_choice.names ==
        std::vector<std::string>{"gpukernsum", "nvtxsum", "nvtxkernsum", "nvtxgpuproj", "cudaapisum", "gpumemtimesum"});
  CHECK(old_choice.legacy);
  CHECK(old_choice.missing.empty());
  const auto new_choice = choose_nsys_stats_reports(listed_reports("h100-nsight-2025.3/cli/nsys_reports.txt"));
  CHECK(new_choice.names == nsys_stats_report_names());
  CHECK_FALSE(new_choice.legacy);
  const auto partial = choose_nsys_stats_reports({"nvtxsum", "gpukernsum"});
  CHECK(partial.missing ==
        std::vector<std::string>{"nvtx_kern_sum", "nvtx_gpu_proj_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum"});
}

TEST_CASE("readiness: an nsys without a needed report is not ready, and says which and what version is needed") {
  const NcuInfo ncu = healthy_ncu();
  const auto old_names = listed_reports("debian-nsight-2022/cli/nsys_reports.txt");
  CHECK(assess_readiness(healthy_nsys({2022, 4, 2, 1, "2022.4.2.1-df9881f"}, old_names), ncu, kDriver).readiness ==
        Readiness::ready);
  std::vector<std::string> without_projection = old_names;
  without_projection.erase(std::find(without_projection.begin(), without_projection.end(), "nvtxgpuproj"));
  const auto verdict = assess_readiness(healthy_nsys({2021, 1, 0, 0, "2021.1.0"}, without_projection), ncu, kDriver);
  CHECK(verdict.readiness == Readiness::degraded);
  REQUIRE(verdict.reasons.size() == 1);
  CHECK(verdict.reasons[0] ==
        "nsys 2021.1.0.0 has no report nvtx_gpu_proj_sum (nor its older name nvtxgpuproj); "
        "need Nsight Systems 2022.4 or newer");
  const auto unlisted = assess_readiness(healthy_nsys({2022, 4, 2, 1, "2022.4.2.1"}, {}), ncu, kDriver);
  CHECK(unlisted.readiness == Readiness::degraded);
  CHECK(unlisted.reasons[0].find("listed no stats reports") != std::string::npos);
}

TEST_CASE("Debian's split layout: the importer is found under /usr/lib/nsight-systems/host-linux-x64") {
  const auto candidates = importer_candidates("/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys");
  CHECK(contains(
      [&] {
        std::vector<std::string> text;
        for (const auto& candidate : candidates) text.push_back(candidate.string());
        return text;
      }(),
      "/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter"));
}

TEST_CASE("an unpacked Debian tree: the importer loads but nsys would not find it; a link makes nsys find it") {
  TempDir temp;
  const fs::path lib = temp / "usr/lib";
  const fs::path nsys = lib / "x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys";
  const fs::path importer = lib / "nsight-systems/host-linux-x64/QdstrmImporter";
  write_file(nsys, "#!/bin/sh\n");
  write_file(importer, "#!/bin/sh\n");
  fs::permissions(nsys, fs::perms::owner_all);
  fs::permissions(importer, fs::perms::owner_all);
  fs::create_directories(lib / "nsight-systems/bin");
  fs::create_symlink("../../x86_64-linux-gnu/nsight-systems/target-linux-x64", lib / "nsight-systems/target-linux-x64");
  ScriptedRunner runner;
  runner.on(fs::canonical(importer).string() + " --version", {0, "NVIDIA Nsight Systems 2022.4.2.1-df9881f\n", "", {}});
  runner.on(importer.string() + " --version", {0, "NVIDIA Nsight Systems 2022.4.2.1-df9881f\n", "", {}});
  auto health = check_importer(runner, nsys);
  CHECK(health.loads);
  CHECK(fs::equivalent(health.path, importer));
  CHECK_FALSE(health.found_by_nsys);
  // The symlink the machine notes mention: x86_64-linux-gnu/nsight-systems/host-linux-x64 ->
  // ../../nsight-systems/host-linux-x64.
  fs::create_directory_symlink("../../nsight-systems/host-linux-x64",
                               lib / "x86_64-linux-gnu/nsight-systems/host-linux-x64");
  runner.on((lib / "x86_64-linux-gnu/nsight-systems/host-linux-x64/QdstrmImporter").string() + " --version",
            {0, "NVIDIA Nsight Systems 2022.4.2.1-df9881f\n", "", {}});
  health = check_importer(runner, nsys);
  CHECK(health.loads);
  CHECK(health.found_by_nsys);
}

TEST_CASE("the importer's missing libssh.so gets the Debian fix") {
  ScriptedRunner runner;
  TempDir temp;
  const fs::path nsys = temp / "target-linux-x64/nsys";
  const fs::path importer = temp / "host-linux-x64/QdstrmImporter";
  write_file(nsys, "");
  write_file(importer, "");
  fs::permissions(importer, fs::perms::owner_all);
  runner.on(importer.string() + " --version",
            {127,
             "",
             importer.string() + ": error while loading shared libraries: libssh.so: cannot open shared object file: "
                                 "No such file or directory\n",
             {}});
  const auto health = check_importer(runner, nsys);
  CHECK_FALSE(health.loads);
  CHECK(health.missing_libraries == std::vector<std::string>{"libssh.so"});
  CHECK(health.fix.find("apt-get install libssh-4") != std::string::npos);
}

TEST_CASE("the real 2022.4 nvtxsum of a gated CPU capture loads into the typed tables") {
  // nsys 2022.4.2.1 on tests/data/debian-nsight-2022/nvtx_cpu_workload.c, gated on decode: the reports with
  // no CUDA data are zero-byte files ("SKIPPED: ... does not contain CUDA kernel data").
  const auto stats = load_nsys_stats(data_path("debian-nsight-2022/nsys/cpu_gated"));
  REQUIRE(stats);
  REQUIRE(stats->ranges);
  REQUIRE(stats->ranges->size() == 2);
  const auto& decode = stats->ranges->at(0);
  CHECK(decode.range == NvtxRangeName{"", "decode"});  // 2022.4 prints "decode", 2025.3 ":decode"
  CHECK(decode.time.count == 1);
  CHECK(decode.time.total_time_ns == 55163115);
  const auto& step = stats->ranges->at(1);
  CHECK(step.range.name == "decode_step");
  CHECK(step.time.count == 5);
  CHECK(step.time.total_time_ns == 46930369);
  CHECK(step.time.median_ns == Approx(9914777.0));
  REQUIRE(stats->kernels);
  CHECK(stats->kernels->empty());
  REQUIRE(stats->range_projections);
  CHECK(stats->range_projections->empty());
  CHECK(find_nsys_stats_report(data_path("debian-nsight-2022/nsys/cpu_gated"), "nvtx_sum")->filename() ==
        "cpu_gated_nvtxsum.csv");
}

TEST_CASE("2022.4 gpukernsum rows of one kernel with different grid/block shapes merge into one row") {
  const auto rows = parse_nsys_kernel_summary(data_path("debian-nsight-2022/nsys/synthetic_gpukernsum.csv"));
  REQUIRE(rows);
  REQUIRE(rows->size() == 2);
  const auto& gemm = rows->at(0);
  // tests/tools/legacy_nsys_expected.py, from the per-instance durations the rows summarise.
  const auto expected = [](const std::string& line, const std::string& key) {
    return oracle_figure("legacy_nsys", line, key);
  };
  CHECK(gemm.name == "gemm_kernel");
  CHECK(gemm.time.total_time_ns == expected("gemm_kernel ", "total"));
  CHECK(gemm.time.count == expected("gemm_kernel ", "count"));
  CHECK(gemm.time.average_ns == Approx(expected("gemm_kernel ", "avg")));
  CHECK(gemm.time.min_ns == expected("gemm_kernel ", "min"));
  CHECK(gemm.time.max_ns == expected("gemm_kernel ", "max"));
  CHECK(gemm.time.stddev_ns == Approx(expected("gemm_kernel ", "stddev")).epsilon(1e-6));
  CHECK(gemm.time.median_ns == Approx(2000.0));  // the median of the 3-instance shape, documented as approximate
  CHECK(gemm.time.time_percent == Approx(90.0));
  CHECK(rows->at(1).name == "softmax_kernel");
  CHECK(rows->at(1).time.stddev_ns == Approx(expected("softmax_kernel ", "stddev")).epsilon(1e-3));
}

TEST_CASE("2022.4 nvtxgpuproj is a per-instance trace summed per range") {
  const auto rows =
      parse_nsys_nvtx_gpu_projection_trace(data_path("debian-nsight-2022/nsys/synthetic_nvtxgpuproj.csv"));
  REQUIRE(rows);
  REQUIRE(rows->size() == 3);
  const auto& step = rows->at(1);
  CHECK(step.range.name == "decode_step");
  const auto expected = [](const std::string& key) { return oracle_figure("legacy_nsys", "decode_step ", key); };
  CHECK(step.total_projection_ns == expected("proj"));
  CHECK(step.total_range_ns == expected("range"));
  CHECK(step.range_instances == expected("instances"));
  CHECK(step.total_gpu_operations == expected("ops"));
  CHECK(step.average_range_level == Approx(1.0));
  CHECK(rows->at(0).average_children == Approx(2.0));
  CHECK(rows->at(2).total_gpu_operations == 10);
  // Under a prefix, the legacy file name selects the trace parser.
  TempDir temp;
  fs::copy_file(data_path("debian-nsight-2022/nsys/synthetic_nvtxgpuproj.csv"), temp / "summary_nvtxgpuproj.csv");
  const auto stats = load_nsys_stats(temp / "summary");
  REQUIRE(stats);
  REQUIRE(stats->range_projections);
  CHECK(stats->range_projections->at(1).total_projection_ns == 650);
}

TEST_CASE("ncu 2022.3 without a CUDA driver: diagnosed as 'needs an NVIDIA GPU', not as a filter problem") {
  const auto diagnosis = diagnose_ncu_output(read_file(data_path("debian-nsight-2022/cli/ncu_no_driver.txt")));
  CHECK(diagnosis.no_cuda_driver);
  CHECK(diagnosis.no_kernels_profiled);
  const auto error = ncu_output_error(diagnosis, "--nvtx-include decode/");
  REQUIRE(error);
  CHECK(error->code == ErrorCode::unsupported);
  CHECK(error->message.find("need an NVIDIA GPU and its driver") != std::string::npos);
}

TEST_CASE("probe abilities: ncu 2022.3's sections collect no tensor-core FLOP") {
  NsysInfo nsys;
  NcuInfo ncu = healthy_ncu();
  ncu.sets = parse_ncu_set_list(read_file(data_path("debian-nsight-2022/cli/ncu_sets.txt")));
  ncu.sections_directory = "/x/sections";
  ncu.section_metrics = {"dram__bytes.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                         "sm__inst_executed_pipe_tensor.sum"};
  const auto abilities = describe_abilities(nsys, ncu);
  const auto find = [&](const std::string& prefix) {
    return *std::find_if(abilities.begin(), abilities.end(),
                         [&](const ToolAbility& a) { return a.what.rfind(prefix, 0) == 0; });
  };
  CHECK(find("ncu set \"roofline\"").able);
  CHECK(find("roofline: DRAM bytes").able);
  CHECK_FALSE(find("tensor-core FLOP").able);
  ncu.section_metrics.push_back("sm__ops_path_tensor_src_fp16.sum");
  CHECK(describe_abilities(nsys, ncu).back().able);
}

TEST_CASE("2022.4: a gate that never opens prints an empty Generated: block, and that is diagnosed as the gate") {
  TempDir temp;
  ScriptedRunner runner;
  NsysInfo nsys = healthy_nsys({2022, 4, 2, 1, "2022.4.2.1"}, {});
  nsys.report_extension = ".nsys-rep";
  ReportResolveRequest request;
  request.output_base = temp / "profile";
  request.profiler_output = read_file(data_path("debian-nsight-2022/cli/nsys_profile_gate_never_opened.txt"));
  request.profile_outcome = ProcessOutcome{};
  request.profile_outcome->exited = true;
  request.profile_outcome->exit_code = 0;  // recorded: exit 0
  request.profile_argv = {"nsys", "profile", "--capture-range=nvtx", "--nvtx-capture=range", "./w"};
  const auto resolved = resolve_report(runner, nsys, request);
  REQUIRE_FALSE(resolved);
  INFO(resolved.error().describe());
  CHECK(resolved.error().code == ErrorCode::no_report);
  CHECK(resolved.error().message.find("the NVTX capture range 'range' never opened") != std::string::npos);
  CHECK(resolved.error().message.find("nsys printed \"Generated:\" with no file under it") != std::string::npos);
}

TEST_CASE("a lone .qdstrm is imported with the exact command reported; a truncated one is reported as such") {
  TempDir temp;
  ScriptedRunner runner;
  NsysInfo nsys = healthy_nsys({2022, 4, 2, 1, "2022.4.2.1"}, {});
  nsys.report_extension = ".nsys-rep";
  write_file(temp / "profile.qdstrm", std::string(4096, 'q'));
  const std::string import =
      "/x/QdstrmImporter -i " + (temp / "profile.qdstrm").string() + " -o " + (temp / "profile.nsys-rep").string();
  runner.on(import, {2, "", "File is corrupted.\n", {}});
  ReportResolveRequest request;
  request.output_base = temp / "profile";
  request.profiler_output = read_file(data_path("debian-nsight-2022/cli/nsys_profile_importer_not_found.txt"));
  std::vector<std::string> recorded;
  request.on_import = [&](const std::vector<std::string>& argv) {
    for (const auto& argument : argv) recorded.push_back(argument);
  };
  auto resolved = resolve_report(runner, nsys, request);
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().message.find("(4096 bytes) and it is truncated or corrupted") != std::string::npos);
  CHECK(recorded == std::vector<std::string>{"/x/QdstrmImporter", "-i", (temp / "profile.qdstrm").string(), "-o",
                                             (temp / "profile.nsys-rep").string()});
  runner.on(import, {0, "Saved report file\n", "",
                     [&](const ProcessSpec&) { write_file(temp / "profile.nsys-rep", "report"); }});
  resolved = resolve_report(runner, nsys, request);
  REQUIRE(resolved);
  CHECK(resolved->imported_from_qdstrm);
  CHECK(resolved->report == temp / "profile.nsys-rep");
}

TEST_CASE("merging 2022.4 rows whose sums overflow 64 bits is a parse error, not undefined behaviour") {
  std::istringstream csv(
      "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),GridXYZ,BlockXYZ,Name\n"
      "50.0,9223372036854775000,1,1.0,1.0,1,1,0.0,1,1,k\n50.0,9223372036854775000,1,1.0,1.0,1,1,0.0,2,1,k\n");
  const auto rows = parse_nsys_kernel_summary(csv, "damaged.csv");
  REQUIRE_FALSE(rows);
  CHECK(rows.error().code == ErrorCode::parse_error);
  CHECK(rows.error().message.find("does not fit in 64 bits") != std::string::npos);
}
