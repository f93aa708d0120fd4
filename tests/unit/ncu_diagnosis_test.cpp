// ncu console output diagnosis on the recorded 2025.3.1 outputs and on the fake ncu run for real.
#include <catch2/catch.hpp>

#include "llmprof/ncu_diagnosis.hpp"
#include "llmprof/process.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::fake_tool_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;

namespace {

std::string cli_fixture(const std::string& name) { return read_file(data_path("h100-nsight-2025.3/cli/" + name)); }

// The ncu lines of transcripts.md section 11 (40 decode kernels under --set roofline), abridged as recorded.
const std::string full_run =
    "==PROF== Connected to process 1224 (/usr/bin/python3.12)\n"
    "==PROF== Profiling \"reduce_kernel\" - 0 (1/40): 0%....50%....100% - 17 passes\n"
    "==PROF== Profiling \"indexSelectSmallIndex\" - 1 (2/40): 0%....50%....100% - 17 passes\n"
    "==PROF== Profiling \"nvjet_sm90_hsh_64x8_64x16_4x1...\" - 2 (3/40): 0%....50%....100% - 17 passes\n"
    "==PROF== Profiling \"splitKreduce_kernel\" - 39 (40/40): 0%....50%....100% - 17 passes\n"
    "done torch.Size([4, 1])\n"
    "==PROF== Disconnected from process 1224\n"
    "==PROF== Report: /tmp/nc1.ncu-rep\n";

struct Captured {
  ProcessOutcome outcome;
  std::string output;
};

Captured run_fake_ncu(const std::vector<std::string>& arguments, const std::string& mode = "ok") {
  auto runner = make_system_process_runner();
  Captured captured;
  ProcessSpec spec;
  spec.argv = {fake_tool_path("ncu").string()};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.environment["FAKE_NCU_MODE"] = mode;
  spec.on_stdout_line = [&](const std::string& line) { captured.output += line + "\n"; };
  spec.on_stderr_line = [&](const std::string& line) { captured.output += line + "\n"; };
  spec.timeout = std::chrono::seconds(60);
  auto outcome = runner->run(spec);
  REQUIRE(outcome);
  captured.outcome = *outcome;
  return captured;
}

}  // namespace

TEST_CASE("a profiled run: kernels, planned count and report path") {
  const auto diagnosis = diagnose_ncu_output(full_run);
  CHECK_FALSE(diagnosis.no_kernels_profiled);
  CHECK_FALSE(diagnosis.has_errors());
  CHECK(diagnosis.profiled_kernels == 4);
  REQUIRE(diagnosis.planned_kernels);
  CHECK(*diagnosis.planned_kernels == 40);
  CHECK(diagnosis.kernel_names[2] == "nvjet_sm90_hsh_64x8_64x16_4x1...");
  REQUIRE(diagnosis.report_path);
  CHECK(*diagnosis.report_path == "/tmp/nc1.ncu-rep");
  CHECK(diagnosis.connected_processes == 1);
  CHECK_FALSE(ncu_output_error(diagnosis));
}

TEST_CASE("a kernel filter that matched nothing: no_report with the available kernels") {
  const auto diagnosis = diagnose_ncu_output(cli_fixture("ncu_nokernels.txt"));
  CHECK(diagnosis.no_kernels_profiled);
  CHECK(diagnosis.available_kernels == std::vector<std::string>{"distribution_elementwise_grid_stride_kernel",
                                                                "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"});
  CHECK(diagnosis.profiled_kernels == 0);
  CHECK_FALSE(diagnosis.report_path);
  const auto error = ncu_output_error(diagnosis, "--kernel-name regex:does_not_exist");
  REQUIRE(error);
  CHECK(error->code == ErrorCode::no_report);
  CHECK(error->message.find("--kernel-name regex:does_not_exist") != std::string::npos);
  CHECK(error->hint.find("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT") != std::string::npos);
}

TEST_CASE("an NVTX filter that matched nothing: the push/pop note becomes the hint") {
  const auto diagnosis = diagnose_ncu_output(cli_fixture("ncu_nvtx_nomatch.txt"));
  CHECK(diagnosis.no_kernels_profiled);
  CHECK(diagnosis.nvtx_filter_note);
  CHECK(diagnosis.available_kernels.empty());
  CHECK(diagnosis.warnings.size() == 3);
  const auto error = ncu_output_error(diagnosis, "--nvtx-include nosuchrange/");
  REQUIRE(error);
  CHECK(error->code == ErrorCode::no_report);
  CHECK(error->hint.find("push/pop") != std::string::npos);
}

TEST_CASE("a --section regular expression is an invalid_argument error") {
  const std::string output =
      "==ERROR== Option '--section .*SpeedOfLight.*' did not match any section.\n"
      "==ERROR== Use --list-sections to see the list of available sections.\n";
  const auto diagnosis = diagnose_ncu_output(output);
  REQUIRE(diagnosis.errors.size() == 2);
  CHECK(diagnosis.errors[0] == "Option '--section .*SpeedOfLight.*' did not match any section.");
  const auto error = ncu_output_error(diagnosis);
  REQUIRE(error);
  CHECK(error->code == ErrorCode::invalid_argument);
  CHECK(error->hint.find("--list-sections") != std::string::npos);
}

TEST_CASE("a missing executable is a process_failed error quoting ncu") {
  const auto diagnosis = diagnose_ncu_output(
      "==ERROR== '/nonexistent/binary' does not exist or is not an executable. Please make sure to specify the "
      "absolute "
      "path to '/nonexistent/binary' if the executable is not in the local directory.\n");
  const auto error = ncu_output_error(diagnosis);
  REQUIRE(error);
  CHECK(error->code == ErrorCode::process_failed);
  CHECK(error->message.find("'/nonexistent/binary' does not exist") != std::string::npos);
}

TEST_CASE("the fake ncu's outputs diagnose like the recorded ones") {
  TempDir temp;
  const auto ok = run_fake_ncu({"--target-processes", "all", "--set", "roofline", "--launch-count", "5", "-o",
                                (temp / "nc1").string(), "-f", "/bin/echo", "done"});
  CHECK(ok.outcome.succeeded());
  const auto profiled = diagnose_ncu_output(ok.output);
  CHECK(profiled.profiled_kernels == 5);
  REQUIRE(profiled.report_path);
  CHECK(*profiled.report_path == (temp / "nc1.ncu-rep").string());
  CHECK(std::filesystem::exists(temp / "nc1.ncu-rep"));

  const auto regex = run_fake_ncu({"--section", ".*SpeedOfLight.*", "--csv", "/bin/echo", "1"});
  CHECK(regex.outcome.exit_code == 1);
  const auto regex_error = ncu_output_error(diagnose_ncu_output(regex.output));
  REQUIRE(regex_error);
  CHECK(regex_error->code == ErrorCode::invalid_argument);

  const auto none = run_fake_ncu({"--kernel-name", "regex:does_not_exist", "/bin/echo", "ok"}, "no_kernels");
  CHECK(none.outcome.succeeded());  // as recorded: exit 0 although nothing was profiled
  const auto no_kernels = diagnose_ncu_output(none.output);
  CHECK(no_kernels.no_kernels_profiled);
  CHECK(no_kernels.available_kernels.size() == 2);
}

TEST_CASE("a planned-kernel count too large for int is ignored, not a crash (fuzz regression)") {
  // Found by fuzz/ncu_diagnosis_fuzzer.cpp: std::stoi threw std::out_of_range on "(1/99999999999)".
  const auto output = read_file(data_path("fuzz-regressions/ncu_diagnosis_planned_count_overflow.txt"));
  const auto diagnosis = diagnose_ncu_output(output);
  CHECK(diagnosis.profiled_kernels == 1);
  REQUIRE(diagnosis.kernel_names.size() == 1);
  CHECK(diagnosis.kernel_names[0] == "reduce_kernel");
  CHECK_FALSE(diagnosis.planned_kernels.has_value());
  CHECK(diagnosis.connected_processes == 1);
}
