// NcuCommand: exact argv for the recorded ncu runs, section/set checks against the recorded
// `ncu --list-sections` / `--list-sets` tables, and quoting of kernel regexes.
#include <algorithm>
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "llmprof/config.hpp"
#include "llmprof/ncu_command.hpp"
#include "llmprof/shell_quote.hpp"
#include "shell_roundtrip.hpp"
#include "test_support.hpp"

using llmprof::ErrorCode;
using llmprof::NcuCacheControl;
using llmprof::NcuClockControl;
using llmprof::NcuCommand;
using llmprof::NcuInfo;
using llmprof::NcuKernelNameBase;
using llmprof::NcuPage;
using llmprof::NcuProfileOptions;
using llmprof::NcuReplayMode;
using Args = std::vector<std::string>;

namespace {

// First column of the rows below the second dashed rule of an ncu fixed-width listing. Set rows
// wrap their section list onto continuation lines whose first column is blank; those are skipped.
std::vector<std::string> identifiers_in_listing(const std::string& file) {
  std::istringstream lines(llmprof::testing::read_file(llmprof::testing::data_path("h100-nsight-2025.3/cli/" + file)));
  std::vector<std::string> identifiers;
  int rules = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("---", 0) == 0) {
      ++rules;
      continue;
    }
    if (rules < 2 || line.empty() || line[0] == ' ') continue;
    identifiers.push_back(line.substr(0, line.find(' ')));
  }
  return identifiers;
}

NcuInfo recorded_ncu() {
  NcuInfo info;
  info.found = true;
  info.path = "/usr/local/cuda/bin/ncu";
  info.version = llmprof::ToolVersion{2025, 3, 1, 0, "2025.3.1.0 (build 36398880) (public-release)"};
  for (const auto& id : identifiers_in_listing("ncu_sections.txt")) info.sections.push_back({id, id, false});
  for (const auto& id : identifiers_in_listing("ncu_sets.txt")) info.sets.push_back({id, {}, false});
  return info;
}

NcuProfileOptions decode_roofline_options() {
  NcuProfileOptions options;
  options.nvtx_include = {"decode/"};
  options.set = "roofline";
  options.launch_count = 40;
  options.output = "/tmp/nc1";
  options.application = {"python3", "workload_torch_decode.py", "2"};
  return options;
}

}  // namespace

TEST_CASE("the fixture listings give the identifiers the tests validate against") {
  const auto tool = recorded_ncu();
  CHECK(tool.sections.size() == 24);  // 24 rows in ncu_sections.txt
  CHECK(tool.sets.size() == 6);       // basic detailed full nvlink pmsampling roofline
  CHECK(tool.sets.back().identifier == "roofline");
}

TEST_CASE("ncu profile reproduces the recorded 40-kernel roofline run") {
  const auto command = NcuCommand::profile(decode_roofline_options());
  // transcripts.md section 11.
  CHECK(command.argv() == Args{"ncu", "--target-processes", "all", "--nvtx", "--nvtx-include", "decode/", "--set",
                               "roofline", "--launch-count", "40", "-o", "/tmp/nc1", "-f", "python3",
                               "workload_torch_decode.py", "2"});
  std::vector<std::string> warnings;
  CHECK(command.validate(recorded_ncu(), &warnings).has_value());
  CHECK(warnings.empty());
}

TEST_CASE("ncu profile with every option in a fixed order") {
  NcuProfileOptions options;
  options.ncu = "/usr/local/cuda/bin/ncu";
  options.target_all_processes = false;
  options.nvtx_include = {"decode/", "llm@step/"};
  options.nvtx_exclude = {"warmup/"};
  options.sections = {"SpeedOfLight", "MemoryWorkloadAnalysis"};
  options.metrics = {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "dram__bytes.sum"};
  options.kernel_name = "regex:^(nvjet|ampere)_.*gemm";
  options.kernel_name_base = NcuKernelNameBase::demangled;
  options.launch_skip = 3;
  options.launch_count = 1;
  options.replay_mode = NcuReplayMode::application;
  options.clock_control = NcuClockControl::none;
  options.cache_control = NcuCacheControl::none;
  options.log_file = "/tmp/nc2_log.csv";
  options.output = "/tmp/nc2";
  options.force_overwrite = false;
  options.application = {"./decode", "--steps", "8"};
  const auto command = NcuCommand::profile(options);
  CHECK(command.argv() == Args{"/usr/local/cuda/bin/ncu",
                               "--target-processes",
                               "application-only",
                               "--nvtx",
                               "--nvtx-include",
                               "decode/",
                               "--nvtx-include",
                               "llm@step/",
                               "--nvtx-exclude",
                               "warmup/",
                               "--section",
                               "SpeedOfLight",
                               "--section",
                               "MemoryWorkloadAnalysis",
                               "--metrics",
                               "sm__ops_path_tensor_src_bf16_dst_fp32.sum,dram__bytes.sum",
                               "--kernel-name-base",
                               "demangled",
                               "--kernel-name",
                               "regex:^(nvjet|ampere)_.*gemm",
                               "--launch-skip",
                               "3",
                               "--launch-count",
                               "1",
                               "--replay-mode",
                               "application",
                               "--clock-control",
                               "none",
                               "--cache-control",
                               "none",
                               "--log-file",
                               "/tmp/nc2_log.csv",
                               "-o",
                               "/tmp/nc2",
                               "./decode",
                               "--steps",
                               "8"});
  CHECK(command.validate(recorded_ncu()).has_value());
}

TEST_CASE("ncu flags exist in the recorded ncu --help") {
  const auto help = llmprof::testing::read_file(llmprof::testing::data_path("h100-nsight-2025.3/cli/ncu_help.txt"));
  auto options = decode_roofline_options();
  options.sections = {"SpeedOfLight"};
  options.metrics = {"dram__bytes.sum"};
  options.kernel_name = "regex:gemm";
  options.kernel_name_base = NcuKernelNameBase::function;
  options.launch_skip = 1;
  options.replay_mode = NcuReplayMode::kernel;
  options.clock_control = NcuClockControl::base;
  options.cache_control = NcuCacheControl::all;
  options.log_file = "/tmp/log";
  std::vector<NcuCommand> commands = {NcuCommand::profile(options),
                                      NcuCommand::import_csv("ncu", "/tmp/nc1.ncu-rep", NcuPage::raw, true),
                                      NcuCommand::list_sections("ncu"), NcuCommand::list_sets("ncu")};
  for (const auto& command : commands) {
    for (const auto& argument : command.argv()) {
      if (argument.rfind("-", 0) != 0) continue;
      INFO(argument);
      // "--set arg", "-o [ --export ] arg", "--nvtx    ": the flag followed by a space or ' ['.
      const bool documented = help.find("  " + argument + " ") != std::string::npos ||
                              help.find("[ " + argument + " ]") != std::string::npos;  // "-c [ --launch-count ]"
      CHECK(documented);
    }
  }
}

TEST_CASE("ncu import and listing argv") {
  CHECK(NcuCommand::import_csv("ncu", "/tmp/nc1.ncu-rep", NcuPage::raw, false).argv() ==
        Args{"ncu", "--import", "/tmp/nc1.ncu-rep", "--page", "raw", "--csv"});
  CHECK(NcuCommand::import_csv("ncu", "/tmp/nc1.ncu-rep", NcuPage::raw, true).argv() ==
        Args{"ncu", "--import", "/tmp/nc1.ncu-rep", "--page", "raw", "--csv", "--print-units", "base"});
  CHECK(NcuCommand::import_csv("ncu", "/tmp/nc1.ncu-rep", NcuPage::details, false).argv() ==
        Args{"ncu", "--import", "/tmp/nc1.ncu-rep", "--page", "details", "--csv"});
  CHECK(NcuCommand::list_sections("ncu").argv() == Args{"ncu", "--list-sections"});
  CHECK(NcuCommand::list_sets("/opt/ncu").argv() == Args{"/opt/ncu", "--list-sets"});
  CHECK_FALSE(NcuCommand::import_csv("ncu", "", NcuPage::raw, false).validate(recorded_ncu()).has_value());
}

TEST_CASE("ncu --section takes exact probed identifiers only") {
  const auto tool = recorded_ncu();
  auto options = decode_roofline_options();
  for (const std::string bad : {".*SpeedOfLight.*", "regex:SpeedOfLight", "SpeedOf(Light)", "Speed|Occupancy",
                                "Memory+", "^Occupancy$", "a\\b", "SpeedOfLightt", "speedoflight"}) {
    INFO(bad);
    options.sections = {"Occupancy", bad};
    const auto result = NcuCommand::profile(options).validate(tool);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == ErrorCode::invalid_argument);
    CHECK(result.error().subject == "--section " + bad);
    CHECK(result.error().hint.find("SpeedOfLight_RooflineChart") != std::string::npos);  // lists what exists
  }
}

TEST_CASE("drop_unknown_sections keeps valid identifiers and warns once per dropped value") {
  auto options = decode_roofline_options();
  options.sections = {".*SpeedOfLight.*", "Occupancy", "NoSuchSection", "WarpStateStats"};
  auto command = NcuCommand::profile(options);
  const auto warnings = command.drop_unknown_sections(recorded_ncu());
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0].find(".*SpeedOfLight.*") != std::string::npos);
  CHECK(warnings[1].find("NoSuchSection") != std::string::npos);
  const auto argv = command.argv();
  CHECK(std::count(argv.begin(), argv.end(), "--section") == 2);
  CHECK(std::find(argv.begin(), argv.end(), "WarpStateStats") != argv.end());
  CHECK(command.validate(recorded_ncu()).has_value());
}

TEST_CASE("ncu validation errors") {
  const auto tool = recorded_ncu();
  auto options = decode_roofline_options();
  auto expect_error = [&](const std::string& fragment) {
    const auto result = NcuCommand::profile(options).validate(tool);
    REQUIRE_FALSE(result.has_value());
    INFO(result.error().describe());
    CHECK(result.error().message.find(fragment) != std::string::npos);
    CHECK_FALSE(result.error().hint.empty());
  };
  SECTION("set not probed") {
    options.set = "rooflines";
    expect_error("section set 'rooflines'");
  }
  SECTION("empty NVTX include") {
    options.nvtx_include = {""};
    expect_error("NVTX include expression is empty");
  }
  SECTION("negative launch count") {
    options.launch_count = -1;
    expect_error("--launch-count");
  }
  SECTION("negative launch skip") {
    options.launch_skip = -5;
    expect_error("--launch-skip");
  }
  SECTION("kernel regex that does not compile") {
    options.kernel_name = "regex:(gemm";
    expect_error("does not compile");
  }
  SECTION("kernel regex with an unclosed bracket") {
    options.kernel_name = "regex:[ab";
    expect_error("does not compile");
  }
  SECTION("empty kernel regex") {
    options.kernel_name = "regex:";
    expect_error("empty expression");
  }
  SECTION("no application") {
    options.application.clear();
    expect_error("no application");
  }
  SECTION("no output") {
    options.output.clear();
    expect_error("no output");
  }
  SECTION("metric list in one entry") {
    options.metrics = {"a,b"};
    expect_error("not one metric");
  }
}

TEST_CASE("a kernel name without regex: is an exact name and is not compiled") {
  auto options = decode_roofline_options();
  options.kernel_name = "void at::native::(anonymous namespace)::reduce_kernel<512, 1>(";
  CHECK(NcuCommand::profile(options).validate(recorded_ncu()).has_value());
}

TEST_CASE("ncu validation warns when the probe could not list sections or read the version") {
  NcuInfo tool;
  tool.found = true;
  auto options = decode_roofline_options();
  options.sections = {"SpeedOfLight"};
  std::vector<std::string> warnings;
  REQUIRE(NcuCommand::profile(options).validate(tool, &warnings).has_value());
  CHECK(warnings.size() == 3);  // unknown version, sets unchecked, sections unchecked
  options.sections = {".*"};    // a regex is still refused without a listing
  CHECK_FALSE(NcuCommand::profile(options).validate(tool).has_value());
}

TEST_CASE("ncu command with a kernel regex round-trips through /bin/sh") {
  auto options = decode_roofline_options();
  options.kernel_name = "regex:^(void )?at::native::.*reduce_kernel<[0-9]+, 1>\\(.*\\)$";
  options.nvtx_include = {"llm domain@decode step/"};
  options.application = {"python3", "-c", "import sys; print(\"$x\", 'y')"};
  const auto command = NcuCommand::profile(options);
  CHECK(llmprof::testing::words_seen_by_shell(command.to_shell_string()) == command.argv());
}

TEST_CASE("ncu profile inside the workload's own window: --profile-from-start off, a flag the recorded help has") {
  auto options = decode_roofline_options();
  options.profile_from_start = false;
  const auto argv = NcuCommand::profile(options).argv();
  const auto flag = std::find(argv.begin(), argv.end(), "--profile-from-start");
  REQUIRE(flag != argv.end());
  REQUIRE(flag + 1 != argv.end());
  CHECK(*(flag + 1) == "off");
  const auto help = llmprof::testing::read_file(llmprof::testing::data_path("h100-nsight-2025.3/cli/ncu_help.txt"));
  CHECK(help.find("  --profile-from-start ") != std::string::npos);
  // The default leaves ncu's own default (profile from the start) and says nothing.
  const auto plain = NcuCommand::profile(decode_roofline_options()).argv();
  CHECK(std::find(plain.begin(), plain.end(), "--profile-from-start") == plain.end());
}

TEST_CASE("a command built from the probe runs the probed ncu; another explicit ncu is warned about",
          "[probe]") {
  const NcuInfo tool = recorded_ncu();  // found at /usr/local/cuda/bin/ncu
  const auto probed = NcuCommand::profile(tool, decode_roofline_options());
  CHECK(probed.argv().front() == "/usr/local/cuda/bin/ncu");
  std::vector<std::string> warnings;
  CHECK(probed.validate(tool, &warnings).has_value());
  CHECK(warnings.empty());
  CHECK(NcuCommand::import_csv(tool, "/tmp/nc1.ncu-rep", llmprof::NcuPage::raw, true).argv().front() ==
        "/usr/local/cuda/bin/ncu");

  auto options = decode_roofline_options();
  options.ncu = "/opt/wrappers/ncu";  // chosen on purpose: kept, and validate says it is not the probed one
  const auto wrapped = NcuCommand::profile(tool, options);
  CHECK(wrapped.argv().front() == "/opt/wrappers/ncu");
  CHECK(wrapped.validate(tool, &warnings).has_value());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("runs /opt/wrappers/ncu, not the probed /usr/local/cuda/bin/ncu") != std::string::npos);

  NcuInfo missing;  // the probe found none: the bare name, for PATH to decide
  CHECK(NcuCommand::profile(missing, decode_roofline_options()).argv().front() == "ncu");
}

TEST_CASE("libllmprof's own section: --section-folder and --section, and ncu's folder beside it for its sections",
          "[ncuset]") {
  NcuInfo tool = recorded_ncu();
  tool.sections_directory = "/opt/nvidia/nsight-compute/2025.3.1/sections";
  NcuProfileOptions options = decode_roofline_options();
  options.set.clear();
  options.own_sections = {std::string(llmprof::kLlmprofSectionIdentifier)};
  options.section_folders = {"/usr/share/llmprof/config/ncu-sections"};
  SECTION("alone: our folder only, so ncu reads no section of its own") {
    const auto command = NcuCommand::profile(tool, options);
    CHECK(command.argv() == Args{"/usr/local/cuda/bin/ncu", "--target-processes", "all", "--nvtx", "--nvtx-include",
                                 "decode/", "--section-folder", "/usr/share/llmprof/config/ncu-sections", "--section",
                                 "LlmprofRoofline", "--launch-count", "40", "-o", "/tmp/nc1", "-f", "python3",
                                 "workload_torch_decode.py", "2"});
    std::vector<std::string> warnings;
    CHECK(command.validate(tool, &warnings).has_value());
    CHECK(warnings.empty());
  }
  SECTION("with ncu.sections: the probed folder of ncu's own sections follows ours") {
    options.sections = {"Occupancy"};
    const auto command = NcuCommand::profile(tool, options);
    const auto argv = command.argv();
    const auto first = std::find(argv.begin(), argv.end(), "--section-folder");
    REQUIRE(std::distance(first, argv.end()) > 8);
    CHECK(Args(first, first + 8) == Args{"--section-folder", "/usr/share/llmprof/config/ncu-sections",
                                         "--section-folder", "/opt/nvidia/nsight-compute/2025.3.1/sections",
                                         "--section", "LlmprofRoofline", "--section", "Occupancy"});
    CHECK(command.validate(tool).has_value());
  }
  SECTION("with ncu.sections but no probed folder: a warning that ncu may not find them") {
    options.sections = {"Occupancy"};
    tool.sections_directory.clear();
    std::vector<std::string> warnings;
    CHECK(NcuCommand::profile(tool, options).validate(tool, &warnings).has_value());
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains("--section Occupancy may not be found"));
  }
  SECTION("an own section without a folder is refused, naming the way out") {
    options.section_folders.clear();
    const auto valid = NcuCommand::profile(tool, options).validate(tool);
    REQUIRE_FALSE(valid.has_value());
    CHECK(valid.error().code == ErrorCode::invalid_argument);
    CHECK_THAT(valid.error().describe(), Catch::Contains("no --section-folder holds it") &&
                                             Catch::Contains("ncu.set = \"roofline\""));
  }
}

TEST_CASE("ncu.set maps to the builder: llmprof to its own section, another name to --set", "[ncuset]") {
  llmprof::NcuConfig config;
  CHECK(config.set == "llmprof");
  auto options = llmprof::ncu_profile_options(config);
  CHECK(options.set.empty());
  CHECK(options.own_sections == std::vector<std::string>{"LlmprofRoofline"});
  config.set = "roofline";
  options = llmprof::ncu_profile_options(config);
  CHECK(options.set == "roofline");
  CHECK(options.own_sections.empty());
}
