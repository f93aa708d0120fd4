// The fake nsys/ncu themselves: the stats, export and import paths the pipeline's end-to-end tests rely on.
#include <catch2/catch.hpp>

#include "llmprof/process.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::fake_tool_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

struct ToolRun {
  int exit_code = -1;
  std::string output;
};

ToolRun run_tool(const std::string& tool, const std::vector<std::string>& arguments,
                 const std::map<std::string, std::optional<std::string>>& environment = {}) {
  auto runner = make_system_process_runner();
  ToolRun run;
  ProcessSpec spec;
  spec.argv = {fake_tool_path(tool).string()};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.environment = environment;
  spec.on_stdout_line = [&](const std::string& line) { run.output += line + "\n"; };
  spec.on_stderr_line = [&](const std::string& line) { run.output += line + "\n"; };
  spec.timeout = std::chrono::seconds(60);
  auto outcome = runner->run(spec);
  REQUIRE(outcome);
  REQUIRE(outcome->exited);
  run.exit_code = outcome->exit_code;
  return run;
}

}  // namespace

TEST_CASE("fake nsys stats copies the fixture CSVs to PREFIX_<report>.csv") {
  TempDir temp;
  write_file(temp / "profile.nsys-rep", "report");
  const auto run = run_tool("nsys", {"stats", "--report", "cuda_gpu_kern_sum,nvtx_sum", "--format", "csv", "--output",
                                     (temp / "summary").string(), "--force-export=true", "--force-overwrite=true",
                                     (temp / "profile.nsys-rep").string()});
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(read_file(temp / "summary_cuda_gpu_kern_sum.csv") ==
        read_file(data_path("h100-nsight-2025.3/nsys/ns1_st_cuda_gpu_kern_sum.csv")));
  CHECK(read_file(temp / "summary_nvtx_sum.csv") ==
        read_file(data_path("h100-nsight-2025.3/nsys/ns1_st_nvtx_sum.csv")));
  CHECK(run.output.find("PROCESSED") != std::string::npos);
  // FAKE_NSYS_STATS_PREFIX picks the gated (ns2) tables.
  const auto gated = run_tool("nsys",
                              {"stats", "--report", "nvtx_sum", "--format", "csv", "-o", (temp / "gated").string(),
                               (temp / "profile.nsys-rep").string()},
                              {{"FAKE_NSYS_STATS_PREFIX", "ns2_st_"}});
  CHECK(gated.exit_code == 0);
  CHECK(read_file(temp / "gated_nvtx_sum.csv") == read_file(data_path("h100-nsight-2025.3/nsys/ns2_st_nvtx_sum.csv")));
}

TEST_CASE("fake nsys export takes --type sqlite and rejects --sqlite like 2025.3.1") {
  TempDir temp;
  write_file(temp / "ns1.nsys-rep", "report");
  const auto ok = run_tool("nsys", {"export", "--type", "sqlite", "--output", (temp / "ns1.sqlite").string(),
                                    "--force-overwrite=true", (temp / "ns1.nsys-rep").string()});
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(temp / "ns1.sqlite"));
  const auto old =
      run_tool("nsys", {"export", "--sqlite", (temp / "x.sqlite").string(), (temp / "ns1.nsys-rep").string()});
  CHECK(old.exit_code != 0);
  CHECK(old.output.find("unrecognised option '--sqlite'") != std::string::npos);
  CHECK(old.output.find("usage: nsys export [<args>] [nsys-rep-file]") != std::string::npos);
  CHECK_FALSE(fs::exists(temp / "x.sqlite"));
}

TEST_CASE("fake nsys profile passes --env-var to the application and refuses unknown options") {
  TempDir temp;
  const auto run =
      run_tool("nsys", {"profile", "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0", "--output", (temp / "p").string(),
                        "/bin/sh", "-c", "echo gate=$NSYS_NVTX_PROFILER_REGISTER_ONLY"});
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("gate=0") != std::string::npos);
  CHECK(fs::exists(temp / "p.nsys-rep"));
  const auto again = run_tool("nsys", {"profile", "--output", (temp / "p").string(), "/bin/true"});
  CHECK(again.exit_code == 1);  // the report exists and --force-overwrite was not given
  const auto bad = run_tool("nsys", {"profile", "--no-such-option=1", "/bin/true"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.output.find("unrecognised option '--no-such-option=1'") != std::string::npos);
}

TEST_CASE("fake ncu --import prints the raw CSV fixtures") {
  TempDir temp;
  write_file(temp / "profile.ncu-rep", "report");
  const auto raw = run_tool("ncu", {"--import", (temp / "profile.ncu-rep").string(), "--page", "raw", "--csv"});
  CHECK(raw.exit_code == 0);
  CHECK(raw.output == read_file(data_path("h100-nsight-2025.3/ncu/nc1_raw.csv")));
  const auto base = run_tool(
      "ncu", {"--import", (temp / "profile.ncu-rep").string(), "--page", "raw", "--csv", "--print-units", "base"});
  CHECK(base.output == read_file(data_path("h100-nsight-2025.3/ncu/nc1_raw_base.csv")));
  const auto missing = run_tool("ncu", {"--import", (temp / "none.ncu-rep").string(), "--page", "raw", "--csv"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("==ERROR==") != std::string::npos);
}

TEST_CASE("fake QdstrmImporter fails to load libdw.so.1 in its broken mode, as recorded") {
  const auto run = run_tool("QdstrmImporter", {"--version"}, {{"FAKE_IMPORTER_MODE", "missing_libdw"}});
  CHECK(run.exit_code == 127);
  CHECK(run.output.find("error while loading shared libraries: libdw.so.1: cannot open shared object file: No such "
                        "file or directory") != std::string::npos);
}
