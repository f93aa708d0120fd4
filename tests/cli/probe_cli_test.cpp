// `deep-profile probe` end to end: with the fake tools on PATH, with nothing on PATH, and its options.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <cstdlib>

#include "deep_profile_cli.hpp"
#include "llmprof/process.hpp"
#include "llmprof/tool_probe.hpp"
#include "test_support.hpp"

#ifdef LLMPROF_DEEP_PROFILE_EXE

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::fake_tool_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;

namespace {

// `deep-profile probe ARGS...` with PATH set to `path_variable`.
llmprof::testing::CliResult run_probe(const std::vector<std::string>& arguments, const std::string& path_variable) {
  std::vector<std::string> args = {"probe"};
  args.insert(args.end(), arguments.begin(), arguments.end());
  llmprof::testing::CliOptions options;
  options.environment["PATH"] = path_variable;
  return llmprof::testing::run_deep_profile(args, options);
}

std::string path_with_fakes() { return llmprof::testing::path_with_fake_tools(); }

}  // namespace

TEST_CASE("probe with the fake tools on PATH is ready and prints versions, capabilities and importer health", "[cli]") {
  TempDir temp;
  const auto run = run_probe({"--sections-out", (temp / "sections.txt").string()}, path_with_fakes());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("nsys (Nsight Systems): " + (fake_tool_path("") / "nsys").string()) != std::string::npos);
  CHECK(run.out.find("version: 2025.3.1.0 (build 36398880) (public-release)") != std::string::npos);
  CHECK(run.out.find("report extension: .nsys-rep") != std::string::npos);
  CHECK(run.out.find("sqlite export: nsys export --type sqlite") != std::string::npos);
  CHECK(run.out.find("QdstrmImporter (loads)") != std::string::npos);
  CHECK(run.out.find("sets (6): basic[4] detailed[9] full[21] nvlink[3] pmsampling[2] roofline[7]") !=
        std::string::npos);
  CHECK(run.out.find("[!!] Intel(c) Last Branch Record support: Not Available") != std::string::npos);
  // The tools are healthy; the verdict also weighs this machine's driver (CI has none: degraded).
  const bool driver = llmprof::detect_nvidia_driver().present;
  CHECK(run.out.find(driver ? "verdict: ready" : "verdict: degraded") != std::string::npos);
  CHECK(read_file(temp / "sections.txt") == read_file(data_path("h100-nsight-2025.3/cli/ncu_sections.txt")));
}

TEST_CASE("probe --json gives env.json's tools object", "[cli]") {
  const auto run = run_probe({"--json"}, path_with_fakes());
  CHECK(run.exit_code == 0);
  const auto tools = boost::json::parse(run.out).as_object();
  CHECK(tools.at("nsys").at("found").as_bool());
  CHECK(tools.at("ncu").at("version").at("number").as_string() == "2025.3.1.0");
  CHECK(tools.at("verdict").at("readiness").as_string() ==
        (llmprof::detect_nvidia_driver().present ? "ready" : "degraded"));
}

TEST_CASE("probe on a machine with no tools explains where it looked and exits 3", "[cli]") {
  TempDir temp;
  const auto run = run_probe({"--no-default-locations"}, (temp / "bin").string());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 3);
  CHECK(run.out.find("nsys (Nsight Systems): not found") != std::string::npos);
  CHECK(run.out.find("ncu (Nsight Compute): not found") != std::string::npos);
  CHECK(run.out.find((temp / "bin" / "nsys").string()) != std::string::npos);
  CHECK(run.out.find("skipped: version, capabilities, environment checks and importer check") != std::string::npos);
  CHECK(run.out.find("verdict: not ready") != std::string::npos);
  CHECK(run.out.find("will skip: ncu kernel metrics") != std::string::npos);
}

TEST_CASE("probe with an empty PATH still runs and lists the usual install locations", "[cli]") {
  const auto run = run_probe({}, "");
  INFO(run.out << run.err);
  // On a machine with Nsight installed under /opt/nvidia or /usr/local/cuda the probe may find it there.
  if (run.out.find("nsys (Nsight Systems): not found") != std::string::npos) {
    CHECK(run.out.find("/usr/local/cuda/bin/nsys") != std::string::npos);
    CHECK(run.out.find("host/target-linux-x64/nsys") != std::string::npos);
  }
  if (run.exit_code == 3) CHECK(run.out.find("verdict: not ready") != std::string::npos);
  CHECK((run.exit_code == 0 || run.exit_code == 3));
}

TEST_CASE("probe with an explicit nsys path that does not exist says so", "[cli]") {
  const auto run =
      run_probe({"--nsys", "/nonexistent/nsys", "--ncu", fake_tool_path("ncu").string()}, path_with_fakes());
  CHECK(run.exit_code == 0);  // ncu works: degraded, not "not ready"
  CHECK(run.out.find("the configured nsys path /nonexistent/nsys does not exist") != std::string::npos);
  CHECK(run.out.find("verdict: degraded") != std::string::npos);
}

TEST_CASE("probe --help documents the exit status, a bad option is a usage error", "[cli]") {
  const auto help = run_probe({"--help"}, path_with_fakes());
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("3 not ready") != std::string::npos);
  const auto bad = run_probe({"--bogus"}, path_with_fakes());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bogus") != std::string::npos);
}

#endif
