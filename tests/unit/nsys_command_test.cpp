// NsysCommand: exact argv for nsys profile/stats/export as recorded on the H100 (transcripts.md),
// validation errors, and shell quoting that round-trips through /bin/sh.
#include <catch2/catch.hpp>

#include <cctype>
#include <string>
#include <vector>

#include "llmprof/nsys_command.hpp"
#include "llmprof/shell_quote.hpp"
#include "shell_roundtrip.hpp"
#include "test_support.hpp"

using llmprof::ErrorCode;
using llmprof::NsysCaptureRange;
using llmprof::NsysCaptureRangeEnd;
using llmprof::NsysCommand;
using llmprof::NsysInfo;
using llmprof::NsysProfileOptions;
using Args = std::vector<std::string>;

namespace {

// The nsys of the H100 fixtures; the version comes from the recorded `nsys --version`.
NsysInfo recorded_nsys() {
  const auto text = llmprof::testing::read_file(llmprof::testing::data_path("h100-nsight-2025.3/cli/nsys_version.txt"));
  REQUIRE(text.find("2025.3.1.0") != std::string::npos);
  NsysInfo info;
  info.found = true;
  info.path = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys";
  info.version = llmprof::ToolVersion{2025, 3, 1, 0, "2025.3.1.0"};
  info.report_extension = ".nsys-rep";
  info.export_sqlite_arguments = {"--type", "sqlite"};
  return info;
}

NsysProfileOptions decode_gate_options() {
  NsysProfileOptions options;
  options.capture_range = NsysCaptureRange::nvtx;
  options.nvtx_capture = "decode";
  options.capture_range_end = NsysCaptureRangeEnd::stop;
  options.output_base = "/tmp/ns2";
  options.application = {"python3", "workload_torch_decode.py", "8"};
  return options;
}

bool contains_text(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& line : lines) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("nsys profile with an NVTX gate reproduces the recorded working command") {
  const auto command = NsysCommand::profile(decode_gate_options());
  // transcripts.md section 3, in the `=` spelling nsys 2025.3 documents for every flag.
  CHECK(command.argv() == Args{"nsys", "profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none",
                               "--capture-range=nvtx", "--nvtx-capture=decode", "--capture-range-end=stop",
                               "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0", "--force-overwrite=true",
                               "--output=/tmp/ns2", "python3", "workload_torch_decode.py", "8"});
  std::vector<std::string> warnings;
  CHECK(command.validate(recorded_nsys(), &warnings).has_value());
  CHECK(warnings.empty());
}

TEST_CASE("nsys profile flags exist in the recorded nsys profile --help") {
  const auto help =
      llmprof::testing::read_file(llmprof::testing::data_path("h100-nsight-2025.3/cli/nsys_profile_help.txt"));
  auto options = decode_gate_options();
  options.nvtx_domain_include = {"llm"};
  options.stats = true;
  options.wait = llmprof::NsysWait::primary;
  CHECK(NsysCommand::profile(options).to_shell_string().find(" --wait=primary ") != std::string::npos);
  for (const auto& argument : NsysCommand::profile(options).argv()) {
    if (argument.rfind("--", 0) != 0) continue;
    // "--trace=cuda,nvtx" is looked up as "--trace="; a flag without a value ("--stats") as itself, not
    // followed by more of a flag's name ("--stats" must not pass on "--statsfoo").
    const auto equals = argument.find('=');
    const std::string flag = equals == std::string::npos ? argument : argument.substr(0, equals + 1);
    INFO(flag);
    REQUIRE(flag.size() > 2);
    bool documented =
        flag.rfind("--nvtx-domain-", 0) == 0 && help.find("--nvtx-domain-[include|exclude]=") != std::string::npos;
    for (auto at = help.find(flag); !documented && at != std::string::npos; at = help.find(flag, at + 1)) {
      const auto after = at + flag.size();
      documented = flag.back() == '=' || after == help.size() ||
                   !(std::isalnum(static_cast<unsigned char>(help[after])) || help[after] == '-');
    }
    CHECK(documented);
  }
}

TEST_CASE("nsys profile without a gate has no capture flags and keeps user env vars sorted") {
  NsysProfileOptions options;
  options.trace = {"cuda", "nvtx", "osrt"};
  options.env_vars = {{"TOKENIZERS_PARALLELISM", "false"}, {"CUDA_LAUNCH_BLOCKING", "0"}};
  options.output_base = "/tmp/ns1";
  options.stats = true;
  options.extra_args = {"--cuda-memory-usage=true"};
  options.application = {"python3", "workload_torch_decode.py", "8"};
  CHECK(NsysCommand::profile(options).argv() ==
        Args{"nsys", "profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none",
             "--env-var=CUDA_LAUNCH_BLOCKING=0,TOKENIZERS_PARALLELISM=false", "--stats=true", "--force-overwrite=true",
             "--output=/tmp/ns1", "--cuda-memory-usage=true", "python3", "workload_torch_decode.py", "8"});
}

TEST_CASE("nsys NVTX domain lists escape commas as nsys requires") {
  auto options = decode_gate_options();
  options.nvtx_domain_exclude = {"a,b", "c"};
  const auto argv = NsysCommand::profile(options).argv();
  CHECK(std::find(argv.begin(), argv.end(), "--nvtx-domain-exclude=a\\,b,c") != argv.end());
}

TEST_CASE("nsys stats and export argv") {
  const auto stats = NsysCommand::stats("nsys", "/tmp/ns2.nsys-rep", {"cuda_gpu_kern_sum", "nvtx_sum"}, "/tmp/ns2_st");
  CHECK(stats.argv() == Args{"nsys", "stats", "--report", "cuda_gpu_kern_sum,nvtx_sum", "--format", "csv", "--output",
                             "/tmp/ns2_st", "--force-export=true", "--force-overwrite=true", "/tmp/ns2.nsys-rep"});
  CHECK(stats.validate(recorded_nsys()).has_value());
  // nsys.stats_extra_args go after the fixed options, before the report.
  const auto filtered =
      NsysCommand::stats("nsys", "/tmp/ns2.nsys-rep", {"nvtx_sum"}, "/tmp/ns2_st", {"--timeunit=usec"});
  CHECK(filtered.argv() == Args{"nsys", "stats", "--report", "nvtx_sum", "--format", "csv", "--output", "/tmp/ns2_st",
                                "--force-export=true", "--force-overwrite=true", "--timeunit=usec",
                                "/tmp/ns2.nsys-rep"});

  const auto exported = NsysCommand::export_sqlite("nsys", "/tmp/ns1.nsys-rep", "/tmp/ns1.sqlite");
  // transcripts.md section 5: `--sqlite` is rejected by 2025.3, `--type sqlite` works.
  const auto argv = exported.argv();
  CHECK(argv == Args{"nsys", "export", "--type", "sqlite", "--output", "/tmp/ns1.sqlite", "--force-overwrite=true",
                     "/tmp/ns1.nsys-rep"});
  CHECK(std::find(argv.begin(), argv.end(), "--sqlite") == argv.end());
  CHECK(exported.validate(recorded_nsys()).has_value());
}

TEST_CASE("nsys export is refused when the probe says the tool takes another form") {
  auto tool = recorded_nsys();
  tool.export_sqlite_arguments = {"--sqlite"};
  const auto result = NsysCommand::export_sqlite("nsys", "/tmp/a.nsys-rep", "/tmp/a.sqlite").validate(tool);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == ErrorCode::unsupported);
}

TEST_CASE("nsys validation rejects what would fail or silently profile nothing") {
  const auto tool = recorded_nsys();
  auto expect_error = [&](NsysProfileOptions options, const std::string& fragment) {
    const auto result = NsysCommand::profile(std::move(options)).validate(tool);
    REQUIRE_FALSE(result.has_value());
    INFO(result.error().describe());
    CHECK(result.error().code == ErrorCode::invalid_argument);
    CHECK(result.error().message.find(fragment) != std::string::npos);
    CHECK_FALSE(result.error().hint.empty());
  };
  auto options = decode_gate_options();

  SECTION("empty NVTX capture expression") {
    options.nvtx_capture = "";
    expect_error(options, "empty --nvtx-capture");
  }
  SECTION("blank NVTX capture expression") {
    options.nvtx_capture = "  ";
    expect_error(options, "empty --nvtx-capture");
  }
  SECTION("NVTX gate without NVTX tracing") {
    options.trace = {"cuda"};
    expect_error(options, "lacks nvtx");
  }
  SECTION("capture range end without a capture range") {
    options.capture_range = NsysCaptureRange::none;
    options.nvtx_capture.clear();
    expect_error(options, "without a capture range");
  }
  SECTION("nvtx-capture without the nvtx capture range") {
    options.capture_range = NsysCaptureRange::none;
    options.capture_range_end.reset();
    expect_error(options, "not nvtx");
  }
  SECTION("domain both included and excluded") {
    options.nvtx_domain_include = {"llm"};
    options.nvtx_domain_exclude = {"llm"};
    expect_error(options, "both included and excluded");
  }
  SECTION("include and exclude lists together") {
    options.nvtx_domain_include = {"a"};
    options.nvtx_domain_exclude = {"b"};
    expect_error(options, "mutually exclusive");
  }
  SECTION("no application") {
    options.application.clear();
    expect_error(options, "no application");
  }
  SECTION("no output base") {
    options.output_base.clear();
    expect_error(options, "no output base");
  }
  SECTION("output base nsys would expand") {
    options.output_base = "/tmp/run%p";
    expect_error(options, "'%'");
  }
  SECTION("env value with a comma") {
    options.env_vars["X"] = "a,b";
    expect_error(options, "comma");
  }
  SECTION("trace none with others") {
    options.trace = {"none", "cuda"};
    options.capture_range = NsysCaptureRange::none;
    options.nvtx_capture.clear();
    options.capture_range_end.reset();
    expect_error(options, "--trace=none");
  }
}

TEST_CASE("nsys validation warns instead of rejecting what it cannot check") {
  auto tool = recorded_nsys();
  tool.version.reset();
  auto options = decode_gate_options();
  options.trace = {"cuda", "nvtx", "brand-new-api"};
  options.env_vars["NSYS_NVTX_PROFILER_REGISTER_ONLY"] = "1";
  std::vector<std::string> warnings;
  const auto command = NsysCommand::profile(options);
  REQUIRE(command.validate(tool, &warnings).has_value());
  CHECK(warnings.size() == 3);
  CHECK(contains_text(warnings, "version is unknown"));
  CHECK(contains_text(warnings, "brand-new-api"));
  CHECK(contains_text(warnings, "may never open"));
  // The user's explicit value is kept, not replaced by the automatic "0".
  const auto argv = command.argv();
  CHECK(std::find(argv.begin(), argv.end(), "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=1") != argv.end());
}

TEST_CASE("shell quoting leaves plain words alone and quotes the rest") {
  using llmprof::quote_shell_argument;
  CHECK(quote_shell_argument("--trace=cuda,nvtx") == "--trace=cuda,nvtx");
  CHECK(quote_shell_argument("/tmp/ns1") == "/tmp/ns1");
  CHECK(quote_shell_argument("") == "''");
  CHECK(quote_shell_argument("a b") == "'a b'");
  CHECK(quote_shell_argument("it's") == "'it'\"'\"'s'");
  CHECK(quote_shell_argument("$HOME") == "'$HOME'");
  CHECK(llmprof::join_shell_command({"A=b", "c=d"}) == "'A=b' c=d");
}

TEST_CASE("to_shell_string round-trips tricky arguments through /bin/sh") {
  NsysProfileOptions options = decode_gate_options();
  options.nvtx_capture = "decode step@my domain";
  options.output_base = "/tmp/with space/it's \"here\"";
  options.env_vars["PROMPT"] = "say $HOME `id` \\n ok";
  options.application = {"python3", "-c", "print('a\nb')\n", "", "*", "~", "{a,b}", "x;y|z&", "!bang", "tab\there"};
  const auto command = NsysCommand::profile(options);
  CHECK(llmprof::testing::words_seen_by_shell(command.to_shell_string()) == command.argv());
}

TEST_CASE("requested_graph_trace reads --cuda-graph-trace from arguments given verbatim") {
  using llmprof::requested_graph_trace;
  CHECK_FALSE(requested_graph_trace({}).has_value());
  CHECK_FALSE(requested_graph_trace({"--delay=2", "--cuda-memory-usage=true"}).has_value());
  CHECK(requested_graph_trace({"--cuda-graph-trace=node"}) == "node");
  CHECK(requested_graph_trace({"--cuda-graph-trace", "node"}) == "node");
  CHECK(requested_graph_trace({"--cuda-graph-trace=node:host-and-device"}) == "node");  // 2025.3.1 launch origin
  CHECK(requested_graph_trace({"--cuda-graph-trace=node", "--cuda-graph-trace=graph"}) == "graph");  // last wins
  CHECK_FALSE(requested_graph_trace({"--cuda-graph-trace"}).has_value());  // no value: nsys itself refuses it
}

TEST_CASE("nsys profile: the workload's own window, repeated up to N times") {
  NsysProfileOptions options = decode_gate_options();
  options.capture_range = NsysCaptureRange::cuda_profiler_api;
  options.nvtx_capture.clear();
  options.capture_range_end = NsysCaptureRangeEnd::repeat;
  options.capture_range_end_count = 2;
  const auto command = NsysCommand::profile(options);
  CHECK(command.argv() == Args{"nsys", "profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none",
                               "--capture-range=cudaProfilerApi", "--capture-range-end=repeat:2",
                               "--force-overwrite=true", "--output=/tmp/ns2", "python3", "workload_torch_decode.py",
                               "8"});
  CHECK(command.validate(recorded_nsys()).has_value());
  SECTION("without a count nsys takes every window") {
    options.capture_range_end_count = 0;
    CHECK(contains_text(NsysCommand::profile(options).argv(), "--capture-range-end=repeat"));
    CHECK_FALSE(contains_text(NsysCommand::profile(options).argv(), "repeat:"));
  }
  SECTION("a count without repeat is refused") {
    options.capture_range_end = NsysCaptureRangeEnd::stop;
    const auto valid = NsysCommand::profile(options).validate(recorded_nsys());
    REQUIRE_FALSE(valid.has_value());
    CHECK(valid.error().message.find("not repeat") != std::string::npos);
  }
}

TEST_CASE("nsys commands built from the probe run the probed nsys", "[probe]") {
  const NsysInfo tool = recorded_nsys();
  const std::string probed = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys";
  CHECK(NsysCommand::profile(tool, decode_gate_options()).argv().front() == probed);
  CHECK(NsysCommand::stats(tool, "/tmp/r.nsys-rep", {"nvtx_sum"}, "/tmp/r").argv().front() == probed);
  CHECK(NsysCommand::export_sqlite(tool, "/tmp/r.nsys-rep", "/tmp/r.sqlite").argv().front() == probed);
  std::vector<std::string> warnings;
  CHECK(NsysCommand::profile(tool, decode_gate_options()).validate(tool, &warnings).has_value());
  CHECK(warnings.empty());
  auto options = decode_gate_options();
  options.nsys = "/usr/bin/nsys";  // an explicit other nsys is kept, and said
  CHECK(NsysCommand::profile(tool, options).validate(tool, &warnings).has_value());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("runs /usr/bin/nsys, not the probed " + probed) != std::string::npos);
}
