// Tool probe: version/listing parsers on the recorded 2025.3.1 outputs and older formats, the search order,
// importer health, the readiness verdict, and the probe run through the real ProcessRunner on the fake tools.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <filesystem>

#include "llmprof/tool_probe.hpp"
#include "nsight/tool_listings.hpp"
#include "nsight/ncu_section_files.hpp"
#include "probe_scripted_runner.hpp"
#include "rendezvous.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
// These tests weigh the tools; the machine has an NVIDIA driver unless a test says otherwise.
const llmprof::NvidiaDriver kDriver{true, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05"};

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::fake_tool_path;
using llmprof::testing::read_file;
using llmprof::testing::ScriptedReply;
using llmprof::testing::ScriptedRunner;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

std::string cli_fixture(const std::string& name) { return read_file(data_path("h100-nsight-2025.3/cli/" + name)); }

void make_executable(const fs::path& path, const std::string& content = "#!/bin/sh\nexit 0\n") {
  write_file(path, content);
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

const std::string libdw_error =
    "/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter: error while loading "
    "shared libraries: libdw.so.1: cannot open shared object file: No such file or directory\n";

// Fake Nsight Compute tree: <root>/ncu, <root>/host/target-linux-x64/nsys and the importer, as sh wrappers
// around the fake tools (the importer fails to load libdw.so.1 like on the recorded H100 machine).
fs::path make_fake_nsight_compute_tree(const fs::path& root, bool importer_loads) {
  const fs::path install = root / "nsight-compute" / "2025.3.1";
  const auto wrapper = [](const std::string& environment, const std::string& tool) {
    return "#!/bin/sh\n" + environment + "exec '" + fake_tool_path(tool).string() + "' \"$@\"\n";
  };
  make_executable(install / "ncu", wrapper("", "ncu"));
  make_executable(install / "host" / "target-linux-x64" / "nsys", wrapper("", "nsys"));
  make_executable(
      install / "host" / "linux-desktop-glibc_2_11_3-x64" / "QdstrmImporter",
      wrapper(importer_loads ? "" : "FAKE_IMPORTER_MODE=missing_libdw; export FAKE_IMPORTER_MODE\n", "QdstrmImporter"));
  return install;
}

}  // namespace

TEST_CASE("nsys and ncu versions are read from the recorded 2025.3.1 output") {
  auto nsys = parse_nsys_version(cli_fixture("nsys_version.txt"));
  REQUIRE(nsys);
  CHECK(nsys->to_string() == "2025.3.1.0");
  CHECK(nsys->text == "2025.3.1.0");
  auto ncu = parse_ncu_version(cli_fixture("ncu_version.txt"));
  REQUIRE(ncu);
  CHECK(ncu->year == 2025);
  CHECK(ncu->major == 3);
  CHECK(ncu->minor == 1);
  CHECK(ncu->patch == 0);
  CHECK(ncu->text == "2025.3.1.0 (build 36398880) (public-release)");
}

TEST_CASE("older version formats are read and compare numerically") {
  auto nsys2021 = parse_nsys_version("NVIDIA Nsight Systems version 2021.3.1.57-ee59a63\n");
  REQUIRE(nsys2021);
  CHECK(nsys2021->to_string() == "2021.3.1.57");
  CHECK(nsys2021->text == "2021.3.1.57-ee59a63");
  auto nsys2020 = parse_nsys_version("NVIDIA Nsight Systems version 2020.3.1.72-5fcd5a1\n");
  REQUIRE(nsys2020);
  CHECK(nsys2020->to_string() == "2020.3.1.72");
  auto ncu2022 = parse_ncu_version(
      "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2022 NVIDIA "
      "Corporation\nVersion 2022.1.1.0 (build 30914944) (public-release)\n");
  REQUIRE(ncu2022);
  CHECK(ncu2022->to_string() == "2022.1.1.0");
  auto ncu2019 = parse_ncu_version(
      "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2012-2019 NVIDIA "
      "Corporation\nVersion 2019.5.0 (Build 27346997)\n");
  REQUIRE(ncu2019);
  CHECK(ncu2019->to_string() == "2019.5.0.0");
  CHECK(ncu2019->text == "2019.5.0 (Build 27346997)");
  CHECK(*nsys2020 < *nsys2021);
  CHECK(*ncu2019 < *ncu2022);
  CHECK(ToolVersion{2021, 10, 0, 0, ""} > ToolVersion{2021, 9, 9, 9, ""});  // numeric, not text order
}

TEST_CASE("unparsable version output is a parse_error that shows the text") {
  auto version = parse_nsys_version("Nsight Systems command line tool (build unknown)\n");
  REQUIRE_FALSE(version);
  CHECK(version.error().code == ErrorCode::parse_error);
  CHECK(version.error().subject.find("build unknown") != std::string::npos);
  CHECK(version.error().message.find("nsys --version") != std::string::npos);
  auto empty = parse_ncu_version("");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().subject == "(no output)");
}

TEST_CASE("the report extension changes at Nsight Systems 2021.4") {
  CHECK(report_extension_for(*parse_nsys_version("NVIDIA Nsight Systems version 2020.3.1.72-5fcd5a1")) == ".qdrep");
  CHECK(report_extension_for(*parse_nsys_version("NVIDIA Nsight Systems version 2021.3.1.57-ee59a63")) == ".qdrep");
  CHECK(report_extension_for(ToolVersion{2021, 4, 0, 0, ""}) == ".nsys-rep");
  CHECK(report_extension_for(*parse_nsys_version(cli_fixture("nsys_version.txt"))) == ".nsys-rep");
}

TEST_CASE("nsys status --environment becomes named checks") {
  const auto checks = parse_nsys_status_environment(cli_fixture("nsys_status_environment.txt"));
  REQUIRE(checks.size() == 10);
  CHECK(checks[0].name == "Timestamp counter supported");
  CHECK(checks[0].value == "Yes");
  const auto find = [&](const std::string& name) {
    return *std::find_if(checks.begin(), checks.end(),
                         [&](const EnvironmentCheck& check) { return check.name == name; });
  };
  CHECK(find("Linux Kernel Paranoid Level").value == "2");
  CHECK(find("Linux Kernel Version").value == "6.18.44-fc-v657-gpu: OK");
  CHECK(find("Root privilege").ok);
  CHECK_FALSE(find("Intel(c) Last Branch Record support").ok);
  CHECK(find("CPU Profiling Environment (system-wide)").ok);
  CHECK(std::count_if(checks.begin(), checks.end(), [](const EnvironmentCheck& check) { return !check.ok; }) == 1);
}

TEST_CASE("ncu --list-sections fixed-width table gives 24 identifiers") {
  const auto sections = parse_ncu_section_list(cli_fixture("ncu_sections.txt"));
  REQUIRE(sections.size() == 24);
  CHECK(sections.front().identifier == "C2CLink");
  CHECK(sections.back().identifier == "WorkloadDistribution");
  CHECK(sections.back().enabled_by_default);
  const auto sol = std::find_if(sections.begin(), sections.end(),
                                [](const NcuSection& s) { return s.identifier == "SpeedOfLight"; });
  REQUIRE(sol != sections.end());
  CHECK(sol->display_name == "GPU Speed Of Light Throughput");
  CHECK(sol->enabled_by_default);
  // The widest identifier fills its column exactly.
  CHECK(sections[17].identifier == "SpeedOfLight_HierarchicalDoubleRooflineChart");
  CHECK(sections[17].display_name == "GPU Speed Of Light Hierarchical Roofline Chart (Double Precision)");
  CHECK(std::count_if(sections.begin(), sections.end(), [](const NcuSection& s) { return s.enabled_by_default; }) == 4);
}

TEST_CASE("ncu --list-sets joins sections that wrap mid-word") {
  const auto sets = parse_ncu_set_list(cli_fixture("ncu_sets.txt"));
  REQUIRE(sets.size() == 6);
  CHECK(sets[0].identifier == "basic");
  CHECK(sets[0].enabled_by_default);
  CHECK(sets[0].sections ==
        std::vector<std::string>{"LaunchStats", "Occupancy", "SpeedOfLight", "WorkloadDistribution"});
  CHECK(sets[1].identifier == "detailed");
  CHECK(sets[1].sections == std::vector<std::string>{"ComputeWorkloadAnalysis", "LaunchStats", "MemoryWorkloadAnalysis",
                                                     "MemoryWorkloadAnalysis_Chart", "Occupancy", "SourceCounters",
                                                     "SpeedOfLight", "SpeedOfLight_RooflineChart",
                                                     "WorkloadDistribution"});
  CHECK(sets[2].identifier == "full");
  CHECK(sets[2].sections.size() == 21);
  CHECK(sets[5].identifier == "roofline");
  CHECK(sets[5].sections.size() == 7);
  CHECK(sets[5].sections.back() == "WorkloadDistribution");
  // Every section a set names is a listed section: the wrapped pieces were joined correctly.
  NcuInfo ncu;
  ncu.sections = parse_ncu_section_list(cli_fixture("ncu_sections.txt"));
  for (const auto& set : sets) {
    for (const auto& section : set.sections) {
      INFO(set.identifier << ": " << section);
      CHECK(ncu.has_section(section));
    }
  }
  ncu.sets = sets;
  CHECK(ncu.has_set("roofline"));
  CHECK_FALSE(ncu.has_set("Roofline"));
}

TEST_CASE("listings without a table parse to nothing") {
  CHECK(parse_ncu_section_list("==ERROR== something went wrong\n").empty());
  CHECK(parse_ncu_set_list("").empty());
}

TEST_CASE("loader errors name the missing libraries") {
  CHECK(parse_missing_libraries(libdw_error) == std::vector<std::string>{"libdw.so.1"});
  CHECK(parse_missing_libraries(libdw_error + libdw_error).size() == 1);
  CHECK(parse_missing_libraries("QdstrmImporter allowed options:").empty());
}

TEST_CASE("importer candidates cover the bundled and standalone layouts") {
  const auto candidates = importer_candidates("/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys");
  REQUIRE(candidates.size() >= 3);
  CHECK(candidates[0] ==
        fs::path("/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter"));
  const auto standalone = importer_candidates("/opt/nvidia/nsight-systems/2025.3.1/target-linux-x64/nsys");
  CHECK(std::find(standalone.begin(), standalone.end(),
                  fs::path("/opt/nvidia/nsight-systems/2025.3.1/host-linux-x64/QdstrmImporter")) != standalone.end());
}

TEST_CASE("a missing tool is a result that lists where the probe looked") {
  TempDir temp;
  fs::create_directories(temp / "empty-bin");
  ScriptedRunner runner;
  ProbeOptions options;
  options.path_variable = (temp / "empty-bin").string() + ":" + (temp / "other").string();
  options.use_default_locations = false;
  options.extra_search_roots = {temp / "root"};
  const NsysInfo nsys = probe_nsys(runner, options);
  const NcuInfo ncu = probe_ncu(runner, options);
  CHECK_FALSE(nsys.found);
  CHECK_FALSE(ncu.found);
  CHECK(runner.calls.empty());
  REQUIRE(nsys.searched.size() == 6);
  CHECK(nsys.searched[0] == temp / "empty-bin" / "nsys");
  CHECK(nsys.searched[3] == temp / "root" / "bin" / "nsys");
  CHECK(nsys.searched[5] == temp / "root" / "host" / "target-linux-x64" / "nsys");
  CHECK(ncu.searched == std::vector<fs::path>{temp / "empty-bin" / "ncu", temp / "other" / "ncu", temp / "root" / "ncu",
                                              temp / "root" / "bin" / "ncu"});
  const ProbeVerdict verdict = assess_readiness(nsys, ncu, kDriver);
  CHECK(verdict.readiness == Readiness::not_ready);
  REQUIRE(verdict.reasons.size() == 2);
  CHECK(verdict.reasons[0].find((temp / "empty-bin" / "nsys").string()) != std::string::npos);
  CHECK(verdict.skipped.size() == 2);
}

TEST_CASE("an explicit path that does not exist is reported, not replaced by another install") {
  TempDir temp;
  make_executable(temp / "bin" / "nsys");
  ScriptedRunner runner;
  ProbeOptions options;
  options.nsys_path = temp / "missing" / "nsys";
  options.path_variable = (temp / "bin").string();
  options.use_default_locations = false;
  const NsysInfo nsys = probe_nsys(runner, options);
  CHECK_FALSE(nsys.found);
  CHECK(nsys.searched == std::vector<fs::path>{temp / "missing" / "nsys"});
  REQUIRE(nsys.problems.size() == 1);
  CHECK(nsys.problems[0].find("does not exist") != std::string::npos);
  CHECK(assess_readiness(nsys, NcuInfo{}, kDriver).reasons[0] == nsys.problems[0]);
}

TEST_CASE("the nsys bundled with Nsight Compute is found next to ncu, with a broken importer diagnosed") {
  TempDir temp;
  const fs::path install = temp / "nsight-compute" / "2025.3.1";
  make_executable(install / "ncu");
  make_executable(install / "host" / "target-linux-x64" / "nsys");
  const fs::path importer = install / "host" / "linux-desktop-glibc_2_11_3-x64" / "QdstrmImporter";
  make_executable(importer);
  const fs::path nsys_path = install / "host" / "target-linux-x64" / "nsys";
  ScriptedRunner runner;
  runner.on(nsys_path.string() + " --version", {0, cli_fixture("nsys_version.txt"), ""});
  runner.on(nsys_path.string() + " status --environment", {0, cli_fixture("nsys_status_environment.txt"), ""});
  runner.on(importer.string() + " --version", {127, "", libdw_error});
  ProbeOptions options;
  options.path_variable = install.string();  // ncu on PATH, nsys not
  options.use_default_locations = false;
  const NsysInfo nsys = probe_nsys(runner, options);
  REQUIRE(nsys.found);
  CHECK(nsys.path == nsys_path);
  CHECK(nsys.searched.front() == install / "nsys");
  REQUIRE(nsys.version);
  CHECK(nsys.version->to_string() == "2025.3.1.0");
  CHECK(nsys.report_extension == ".nsys-rep");
  CHECK(nsys.export_sqlite_arguments == std::vector<std::string>{"--type", "sqlite"});
  CHECK(nsys.environment.size() == 10);
  CHECK(nsys.importer.path == importer);
  CHECK_FALSE(nsys.importer.loads);
  CHECK(nsys.importer.missing_libraries == std::vector<std::string>{"libdw.so.1"});
  CHECK(nsys.importer.fix.find("apt-get install libdw1 libelf1") != std::string::npos);
  CHECK(nsys.importer.fix.find("LD_LIBRARY_PATH") != std::string::npos);

  runner.on((install / "ncu").string() + " --version", {0, cli_fixture("ncu_version.txt"), ""});
  runner.on((install / "ncu").string() + " --list-sections", {0, cli_fixture("ncu_sections.txt"), ""});
  runner.on((install / "ncu").string() + " --list-sets", {0, cli_fixture("ncu_sets.txt"), ""});
  const NcuInfo ncu = probe_ncu(runner, options);
  REQUIRE(ncu.found);
  CHECK(ncu.sections.size() == 24);
  CHECK(ncu.sets.size() == 6);
  CHECK(ncu.sections_listing == cli_fixture("ncu_sections.txt"));
  CHECK(ncu.problems.empty());

  const ProbeVerdict verdict = assess_readiness(nsys, ncu, kDriver);
  CHECK(verdict.readiness == Readiness::degraded);
  const bool names_library = std::any_of(verdict.reasons.begin(), verdict.reasons.end(), [](const std::string& reason) {
    return reason.find("cannot load libdw.so.1") != std::string::npos;
  });
  CHECK(names_library);

  const auto tools = boost::json::parse(probe_to_json(nsys, ncu, kDriver)).as_object();
  CHECK(tools.at("nsys").at("version").at("number").as_string() == "2025.3.1.0");
  CHECK(tools.at("nsys").at("importer").at("missing_libraries").as_array().at(0).as_string() == "libdw.so.1");
  CHECK(tools.at("ncu").at("sections").as_array().size() == 24);
  CHECK(tools.at("ncu").at("sets").as_array().at(5).at("identifier").as_string() == "roofline");
  CHECK(tools.at("verdict").at("readiness").as_string() == "degraded");
}

// The listings after each --version are separate tool start-ups (2.3-4.4 s for all of them one after another on the
// H100 machine): probe_tools runs the seven of them side by side, and what they found is the same as one by one.
TEST_CASE("probe_tools runs both tools' listings side by side") {
  TempDir temp;
  const fs::path install = temp / "nsight-compute" / "2025.3.1";
  const fs::path ncu_path = install / "ncu";
  const fs::path nsys_path = install / "host" / "target-linux-x64" / "nsys";
  const fs::path importer = install / "host" / "linux-desktop-glibc_2_11_3-x64" / "QdstrmImporter";
  for (const auto& tool : {ncu_path, nsys_path, importer}) make_executable(tool);
  llmprof::testing::Rendezvous rendezvous(7);
  std::atomic<int> met{0};
  const auto meeting = [&](const ProcessSpec&) { met += rendezvous.arrive_and_wait() ? 1 : 0; };
  ScriptedRunner runner;
  runner.on(nsys_path.string() + " --version", {0, cli_fixture("nsys_version.txt"), ""});
  runner.on(ncu_path.string() + " --version", {0, cli_fixture("ncu_version.txt"), ""});
  runner.on(nsys_path.string() + " status --environment",
            {0, cli_fixture("nsys_status_environment.txt"), "", meeting});
  runner.on(importer.string() + " --version", {0, "QdstrmImporter 2025.3.1", "", meeting});
  runner.on(nsys_path.string() + " stats --help-reports", {0, cli_fixture("nsys_reports.txt"), "", meeting});
  runner.on(nsys_path.string() + " profile --gpu-metrics-devices=help", {0, "", "", meeting});
  runner.on(ncu_path.string() + " --list-sections", {0, cli_fixture("ncu_sections.txt"), "", meeting});
  runner.on(ncu_path.string() + " --list-sets", {0, cli_fixture("ncu_sets.txt"), "", meeting});
  runner.on(ncu_path.string() + " --help", {0, cli_fixture("ncu_help.txt"), "", meeting});
  ProbeOptions options;
  options.path_variable = install.string();
  options.use_default_locations = false;
  const ProbedTools tools = probe_tools(runner, options);
  CHECK(met == 7);
  REQUIRE(tools.nsys.found);
  REQUIRE(tools.ncu.found);
  CHECK(tools.nsys.environment.size() == 10);
  CHECK(tools.nsys.importer.loads);
  CHECK_FALSE(tools.nsys.stats_reports.empty());
  CHECK_FALSE(tools.nsys.gpu_metrics.available);
  CHECK(tools.ncu.sections.size() == 24);
  CHECK(tools.ncu.sets.size() == 6);
  CHECK_FALSE(tools.ncu.filter_modes.empty());
  CHECK(tools.ncu.problems.empty());
  CHECK(tools.nsys.problems.empty());
}

TEST_CASE("GPU-metrics sampling: the probe tries this version's spelling of the option first, then the other") {
  TempDir temp;
  const fs::path nsys_path = temp / "nsys";
  make_executable(nsys_path);
  ProbeOptions options;
  options.nsys_path = nsys_path;
  options.use_default_locations = false;
  const std::string listing = read_file(data_path("gpu-metrics/devices_help_h200_2025.3.txt"));
  SECTION("2025.3.1: --gpu-metrics-devices, listed, then the set named after the chip") {
    ScriptedRunner runner;
    runner.on(nsys_path.string() + " --version", {0, cli_fixture("nsys_version.txt"), ""});
    runner.on(nsys_path.string() + " profile --gpu-metrics-devices=help", {0, listing, ""});
    runner.on(nsys_path.string() + " profile --gpu-metrics-set=help",
              {0, read_file(data_path("gpu-metrics/set_help_h200_2025.3.txt")), ""});
    const NsysInfo nsys = probe_nsys(runner, options);
    CHECK(nsys.gpu_metrics.available);
    CHECK(nsys.gpu_metrics.devices_option == "--gpu-metrics-devices");
    CHECK(nsys.gpu_metrics.devices == "all");
    CHECK(nsys.gpu_metrics.metric_set == "gh100");
    CHECK(std::find(runner.calls.begin(), runner.calls.end(), nsys_path.string() + " profile --gpu-metrics-device=help") ==
          runner.calls.end());
  }
  SECTION("2022.4: --gpu-metrics-device first; no GPU, nsys's own reason") {
    ScriptedRunner runner;
    runner.on(nsys_path.string() + " --version", {0, "NVIDIA Nsight Systems version 2022.4.2.1-df9881f\n", ""});
    runner.on(nsys_path.string() + " profile --gpu-metrics-device=help",
              {0, read_file(data_path("gpu-metrics/device_help_cpu_2022.4.txt")), ""});
    const NsysInfo nsys = probe_nsys(runner, options);
    CHECK_FALSE(nsys.gpu_metrics.available);
    CHECK(nsys.gpu_metrics.devices_option == "--gpu-metrics-device");
    CHECK(nsys.gpu_metrics.reason == "nsys says: NVIDIA GPUs not found, feature is not available");
  }
  SECTION("a spelling nsys rejects (it prints its usage) leads to the other") {
    ScriptedRunner runner;
    runner.on(nsys_path.string() + " --version", {0, cli_fixture("nsys_version.txt"), ""});
    runner.on(nsys_path.string() + " profile --gpu-metrics-devices=help",
              {1, "", "unrecognised option '--gpu-metrics-devices=help'\n\nusage: nsys profile [<args>]\n"});
    runner.on(nsys_path.string() + " profile --gpu-metrics-device=help", {0, listing, ""});
    const NsysInfo nsys = probe_nsys(runner, options);
    CHECK(nsys.gpu_metrics.available);
    CHECK(nsys.gpu_metrics.devices_option == "--gpu-metrics-device");
    CHECK(nsys.gpu_metrics.metric_set.empty());  // the set listing had no reply
  }
  SECTION("no listing at all: not available, and why") {
    ScriptedRunner runner;
    runner.on(nsys_path.string() + " --version", {0, cli_fixture("nsys_version.txt"), ""});
    const NsysInfo nsys = probe_nsys(runner, options);
    CHECK_FALSE(nsys.gpu_metrics.available);
    CHECK(nsys.gpu_metrics.reason == "nsys did not list its GPU-metrics devices");
  }
}

TEST_CASE("a tool whose --version fails is found but has no version, and the verdict says so") {
  TempDir temp;
  make_executable(temp / "bin" / "ncu");
  ScriptedRunner runner;
  const std::string ncu = (temp / "bin" / "ncu").string();
  runner.on(ncu + " --version", {0, "Nsight Compute (fake, no version)\n", ""});
  runner.on(ncu + " --list-sections", {1, "", "==ERROR== failed\n"});
  runner.on(ncu + " --list-sets", {0, cli_fixture("ncu_sets.txt"), ""});
  ProbeOptions options;
  options.path_variable = (temp / "bin").string();
  options.use_default_locations = false;
  const NcuInfo info = probe_ncu(runner, options);
  REQUIRE(info.found);
  CHECK_FALSE(info.version);
  REQUIRE(info.problems.size() == 2);
  CHECK(info.problems[0].find("could not read a version") != std::string::npos);
  CHECK(info.problems[1].find("`ncu --list-sections` failed (exit code 1)") != std::string::npos);
  CHECK(info.sets.size() == 6);
}

TEST_CASE("everything found and healthy is ready") {
  NsysInfo nsys;
  nsys.found = true;
  nsys.path = "/x/nsys";
  nsys.version = ToolVersion{2025, 3, 1, 0, "2025.3.1.0"};
  nsys.importer.loads = true;
  nsys.importer.found_by_nsys = true;
  nsys.stats_reports =
      parse_nsys_report_list(llmprof::testing::read_file(data_path("h100-nsight-2025.3/cli/nsys_reports.txt")));
  NcuInfo ncu;
  ncu.found = true;
  ncu.version = ToolVersion{2025, 3, 1, 0, "2025.3.1.0"};
  ncu.sections = {NcuSection{"SpeedOfLight", "GPU Speed Of Light Throughput", true}};
  const auto verdict = assess_readiness(nsys, ncu, kDriver);
  CHECK(verdict.readiness == Readiness::ready);
  CHECK(verdict.reasons.empty());
  CHECK(verdict.skipped.empty());
  ncu.found = false;
  CHECK(assess_readiness(nsys, ncu, kDriver).readiness == Readiness::degraded);

  SECTION("the same tools on a machine without an NVIDIA driver are degraded, never ready") {
    ncu.found = true;
    const llmprof::NvidiaDriver absent{false, "no NVIDIA kernel driver is loaded (/proc/driver/nvidia/version is absent)"};
    const auto without = assess_readiness(nsys, ncu, absent);
    CHECK(without.readiness == Readiness::degraded);
    REQUIRE(without.reasons.size() == 1);
    CHECK(without.reasons[0].starts_with("no NVIDIA GPU driver: no NVIDIA kernel driver is loaded"));
    CHECK(without.fixes == std::vector<std::string>{"run on a machine with an NVIDIA GPU and its driver loaded "
                                                    "(`nvidia-smi` must work)"});
    CHECK(without.skipped == std::vector<std::string>{"kernel selection (no kernels in a GPU-less timeline)",
                                                      "ncu kernel metrics (stage 3): no GPU to profile"});
    const auto json = boost::json::parse(probe_to_json(nsys, ncu, absent)).as_object();
    CHECK(json.at("verdict").at("readiness").as_string() == "degraded");
    CHECK_FALSE(json.at("nvidia_driver").at("present").as_bool());
  }
}

// --- through the real ProcessRunner, on the fake tools -------------------------------------------------

TEST_CASE("probe runs the fake tools on PATH through the system runner") {
  auto runner = make_system_process_runner();
  ProbeOptions options;
  options.path_variable = fake_tool_path("").string();
  options.use_default_locations = false;
  const NsysInfo nsys = probe_nsys(*runner, options);
  const NcuInfo ncu = probe_ncu(*runner, options);
  REQUIRE(nsys.found);
  CHECK(nsys.path == fake_tool_path("") / "nsys");
  REQUIRE(nsys.version);
  CHECK(nsys.version->to_string() == "2025.3.1.0");
  CHECK(nsys.environment.size() == 10);
  CHECK(nsys.importer.loads);
  REQUIRE(ncu.found);
  REQUIRE(ncu.version);
  CHECK(ncu.version->text == "2025.3.1.0 (build 36398880) (public-release)");
  CHECK(ncu.sections.size() == 24);
  CHECK(ncu.sets.size() == 6);
  CHECK(nsys.problems.empty());
  CHECK(ncu.problems.empty());
  const ProbeVerdict verdict = assess_readiness(nsys, ncu, kDriver);
  CHECK(verdict.readiness == Readiness::ready);
  // The recorded machine has no LBR: a note, not a reason to call the machine degraded.
  REQUIRE(verdict.notes.size() == 1);
  CHECK(verdict.notes[0] == "nsys status --environment: Intel(c) Last Branch Record support: Not Available");
}

TEST_CASE("probe of a fake Nsight Compute tree finds the bundled nsys and the importer missing libdw.so.1") {
  TempDir temp;
  const fs::path install = make_fake_nsight_compute_tree(temp.path(), false);
  auto runner = make_system_process_runner();
  ProbeOptions options;
  options.path_variable = (temp / "empty").string();
  options.extra_search_roots = {install};
  options.use_default_locations = false;
  const NsysInfo nsys = probe_nsys(*runner, options);
  REQUIRE(nsys.found);
  CHECK(nsys.path == install / "host" / "target-linux-x64" / "nsys");
  REQUIRE(nsys.version);
  CHECK(nsys.importer.path == install / "host" / "linux-desktop-glibc_2_11_3-x64" / "QdstrmImporter");
  CHECK_FALSE(nsys.importer.loads);
  CHECK(nsys.importer.missing_libraries == std::vector<std::string>{"libdw.so.1"});
  CHECK(nsys.importer.detail.find("cannot open shared object file") != std::string::npos);
  const NcuInfo ncu = probe_ncu(*runner, options);
  REQUIRE(ncu.found);
  CHECK(ncu.path == install / "ncu");
  CHECK(assess_readiness(nsys, ncu, kDriver).readiness == Readiness::degraded);
}

TEST_CASE("old tool versions from the fakes give the .qdrep extension") {
  TempDir temp;
  make_executable(temp / "bin" / "nsys",
                  "#!/bin/sh\nFAKE_NSYS_MODE=old_version exec '" + fake_tool_path("nsys").string() + "' \"$@\"\n");
  make_executable(temp / "bin" / "ncu",
                  "#!/bin/sh\nFAKE_NCU_MODE=old_version exec '" + fake_tool_path("ncu").string() + "' \"$@\"\n");
  auto runner = make_system_process_runner();
  ProbeOptions options;
  options.path_variable = (temp / "bin").string();
  options.use_default_locations = false;
  const NsysInfo nsys = probe_nsys(*runner, options);
  REQUIRE(nsys.version);
  CHECK(nsys.version->text == "2021.3.1.57-ee59a63");
  CHECK(nsys.report_extension == ".qdrep");
  const NcuInfo ncu = probe_ncu(*runner, options);
  REQUIRE(ncu.version);
  CHECK(ncu.version->to_string() == "2019.5.0.0");
}

TEST_CASE("a version number too large for an int is a parse error, not a crash (fuzz finding)") {
  const auto output = llmprof::testing::read_file(
      llmprof::testing::data_path("fuzz-regressions/tool_listing_version_number_overflow.txt"));
  const auto version = llmprof::parse_nsys_version(output);
  REQUIRE_FALSE(version.has_value());
  CHECK(version.error().code == llmprof::ErrorCode::parse_error);
  CHECK_THAT(version.error().message, Catch::Contains("out-of-range"));
}

namespace {

// NVIDIA's standalone layout under a fake root: <root>/opt/nvidia/nsight-compute/<v>/sections/Fake.section,
// each version's section naming a metric of its own, so the metrics read tell which folder was chosen.
fs::path make_versioned_installs(const fs::path& root, const std::vector<std::string>& versions) {
  const fs::path installs = root / "opt" / "nvidia" / "nsight-compute";
  for (const auto& version : versions) {
    write_file(installs / version / "sections" / "Fake.section",
               "Metrics {\n  Metrics {\n    Name: \"dram__bytes_v" + version + ".sum\"\n  }\n}\n");
  }
  return installs;
}

NcuInfo ncu_at(const fs::path& path) {
  NcuInfo info;
  info.found = true;
  info.path = path;
  info.version = parse_ncu_version(cli_fixture("ncu_version.txt")).value();  // 2025.3.1.0, as on the H100
  return info;
}

}  // namespace

TEST_CASE("the sections of the ncu a CUDA wrapper script execs are read, not another version's") {
  TempDir temp;
  const fs::path installs = make_versioned_installs(temp.path(), {"2024.1.0", "2025.3.1", "2026.1.0"});
  // /usr/local/cuda/bin/ncu on the H100 machine: a script, not a symlink, so its realpath is itself.
  make_executable(temp / "cuda" / "bin" / "ncu",
                  "#!/bin/sh\nexec \"" + (installs / "2025.3.1" / "ncu").string() + "\" \"$@\"\n");
  NcuInfo info = ncu_at(temp / "cuda" / "bin" / "ncu");
  detail::read_section_metrics(info, detail::SectionSearch{{}});
  CHECK(info.sections_directory == fs::canonical(installs / "2025.3.1" / "sections"));
  CHECK(info.section_metrics == std::vector<std::string>{"dram__bytes_v2025.3.1.sum"});
  CHECK(info.sections_note.empty());
}

TEST_CASE("a wrapper that names ncu relative to its own folder leads to that install") {
  TempDir temp;
  // Not a versioned folder, so no glob finds it: only the script's text leads there.
  write_file(temp / "tools" / "nsight" / "sections" / "Fake.section", "Name: \"sm__ops_path_tensor_x.sum\"\n");
  make_executable(temp / "cuda" / "bin" / "ncu",
                  "#!/bin/bash\n\"$(dirname \"$(readlink -f \"$0\")\")/../../tools/nsight/ncu\" \"$@\"\n");
  NcuInfo info = ncu_at(temp / "cuda" / "bin" / "ncu");
  detail::read_section_metrics(info, detail::SectionSearch{{}});
  CHECK(info.sections_directory == fs::canonical(temp / "tools" / "nsight" / "sections"));
  CHECK(info.section_metrics == std::vector<std::string>{"sm__ops_path_tensor_x.sum"});
}

TEST_CASE("NVIDIA's install root gives the sections of the probed version, not the newest") {
  TempDir temp;
  const fs::path installs = make_versioned_installs(temp.path(), {"2024.1.0", "2025.3.1", "2026.1.0"});
  // A wrapper that names no path (it finds ncu some other way): only the install root can tell.
  make_executable(temp / "cuda" / "bin" / "ncu", "#!/bin/sh\nexec ncu-real \"$@\"\n");
  NcuInfo info = ncu_at(temp / "cuda" / "bin" / "ncu");
  detail::read_section_metrics(info, detail::SectionSearch{{installs}});
  CHECK(info.sections_directory == installs / "2025.3.1" / "sections");
  CHECK(info.section_metrics == std::vector<std::string>{"dram__bytes_v2025.3.1.sum"});
}

TEST_CASE("only other versions' sections: none is read, and the probe says which were found") {
  TempDir temp;
  const fs::path installs = make_versioned_installs(temp.path(), {"2024.1.0", "2026.1.0"});
  make_executable(temp / "cuda" / "bin" / "ncu", "#!/bin/sh\nexec ncu-real \"$@\"\n");
  NcuInfo info = ncu_at(temp / "cuda" / "bin" / "ncu");
  detail::read_section_metrics(info, detail::SectionSearch{{installs}});
  CHECK(info.sections_directory.empty());
  CHECK(info.section_metrics.empty());
  CHECK(info.sections_note.find("no sections folder of ncu 2025.3.1.0") != std::string::npos);
  CHECK(info.sections_note.find((installs / "2024.1.0" / "sections").string()) != std::string::npos);
  CHECK(info.sections_note.find((installs / "2026.1.0" / "sections").string()) != std::string::npos);
  const NsysInfo nsys;
  const auto abilities = describe_abilities(nsys, info);
  const auto sections = std::find_if(abilities.begin(), abilities.end(), [](const ToolAbility& ability) {
    return ability.what == "roofline metrics in the sections";
  });
  REQUIRE(sections != abilities.end());
  CHECK_FALSE(sections->able);
  CHECK(sections->detail.find("2026.1.0") != std::string::npos);
}
