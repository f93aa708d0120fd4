// Report resolver: the recorded nsys outcomes (transcripts.md 1, 2, 4, 7, 8) with a scripted runner, and
// the fake nsys run for real through the system runner.
#include <catch2/catch.hpp>

#include "llmprof/nsys_report_file.hpp"
#include "probe_scripted_runner.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace llmprof;
using llmprof::testing::fake_tool_path;
using llmprof::testing::read_file;
using llmprof::testing::ScriptedReply;
using llmprof::testing::ScriptedRunner;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

const std::string importer_path =
    "/opt/nvidia/nsight-compute/2025.3.1/host/linux-desktop-glibc_2_11_3-x64/QdstrmImporter";

NsysInfo recorded_nsys(bool importer_loads) {
  NsysInfo nsys;
  nsys.found = true;
  nsys.path = "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys";
  nsys.version = ToolVersion{2025, 3, 1, 0, "2025.3.1.0"};
  nsys.report_extension = ".nsys-rep";
  nsys.importer.path = importer_path;
  nsys.importer.loads = importer_loads;
  if (!importer_loads) {
    nsys.importer.missing_libraries = {"libdw.so.1"};
    nsys.importer.fix =
        "apt-get install libdw1 libelf1, or unpack them with dpkg -x and put their "
        "usr/lib/x86_64-linux-gnu on LD_LIBRARY_PATH";
  }
  return nsys;
}

ProcessOutcome exited(int code) {
  ProcessOutcome outcome;
  outcome.exited = true;
  outcome.exit_code = code;
  return outcome;
}

std::string transcript_importer_broken(const fs::path& base) {
  return "done torch.Size([4, 1])\nImporter error status: An unknown error occurred.\n"
         "Unable to retrieve the importer version: skipping importation of the QDSTRM file.\nCollecting data...\n"
         "Generating '/tmp/nsys-report-cef9.qdstrm'\nGenerated:\n\t" +
         base.string() + ".qdstrm\n";
}

const std::string transcript_gate_closed =
    "done torch.Size([4, 1])\nProcessing events...\nGenerated:\n\tNo reports were generated\n";

const std::vector<std::string> gated_argv = {"nsys",
                                             "profile",
                                             "--trace=cuda,nvtx",
                                             "--sample=none",
                                             "--capture-range=nvtx",
                                             "--nvtx-capture=range",
                                             "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0",
                                             "-o",
                                             "/tmp/ns3",
                                             "--force-overwrite",
                                             "true",
                                             "python3",
                                             "w.py"};

}  // namespace

TEST_CASE("the Generated: block lists the files nsys wrote") {
  const auto files = parse_generated_files("Collecting data...\nGenerated:\n\t/tmp/ns1.nsys-rep\n");
  CHECK(files == std::vector<fs::path>{"/tmp/ns1.nsys-rep"});
  CHECK(parse_generated_files(transcript_gate_closed).empty());
  CHECK(parse_generated_files(transcript_importer_broken("/tmp/ns1")) == std::vector<fs::path>{"/tmp/ns1.qdstrm"});
}

TEST_CASE("the NVTX capture expression is read from the argv in all spellings") {
  CHECK(nvtx_capture_expression(gated_argv) == "range");
  CHECK(nvtx_capture_expression({"nsys", "profile", "--nvtx-capture", "decode@llm"}) == "decode@llm");
  CHECK(nvtx_capture_expression({"nsys", "profile", "-p", "decode"}) == "decode");
  CHECK(nvtx_capture_expression({"nsys", "profile", "-o", "x"}).empty());
}

TEST_CASE("a written .nsys-rep is the report, also when given with its extension") {
  TempDir temp;
  write_file(temp / "ns1.nsys-rep", "report");
  ScriptedRunner runner;
  ReportResolveRequest request;
  request.output_base = temp / "ns1";
  request.profiler_output = "Generated:\n\t" + (temp / "ns1.nsys-rep").string() + "\n";
  request.profile_outcome = exited(0);
  auto resolved = resolve_report(runner, recorded_nsys(true), request);
  REQUIRE(resolved);
  CHECK(resolved->report == temp / "ns1.nsys-rep");
  CHECK_FALSE(resolved->imported_from_qdstrm);
  CHECK(resolved->notes.empty());
  request.output_base = temp / "ns1.nsys-rep";
  CHECK(resolve_report(runner, recorded_nsys(true), request)->report == temp / "ns1.nsys-rep");
  CHECK(runner.calls.empty());
}

TEST_CASE("an older nsys's .qdrep is found") {
  TempDir temp;
  write_file(temp / "old.qdrep", "report");
  ScriptedRunner runner;
  NsysInfo nsys = recorded_nsys(true);
  nsys.report_extension = ".qdrep";
  ReportResolveRequest request;
  request.output_base = temp / "old";
  auto resolved = resolve_report(runner, nsys, request);
  REQUIRE(resolved);
  CHECK(resolved->report == temp / "old.qdrep");
}

TEST_CASE("an application exiting non-zero still has its report, with a note") {
  TempDir temp;
  write_file(temp / "x.nsys-rep", "report");
  ScriptedRunner runner;
  ReportResolveRequest request;
  request.output_base = temp / "x";
  request.profile_outcome = exited(1);
  auto resolved = resolve_report(runner, recorded_nsys(true), request);
  REQUIRE(resolved);
  REQUIRE(resolved->notes.size() == 1);
  CHECK(resolved->notes[0].find("exit code 1") != std::string::npos);
}

TEST_CASE("only a .qdstrm and an importer that cannot load libdw.so.1: no_report with the fix") {
  TempDir temp;
  write_file(temp / "ns1.qdstrm", "raw");
  ScriptedRunner runner;
  ReportResolveRequest request;
  request.output_base = temp / "ns1";
  request.profiler_output = transcript_importer_broken(temp / "ns1");
  request.profile_outcome = exited(0);
  auto resolved = resolve_report(runner, recorded_nsys(false), request);
  REQUIRE_FALSE(resolved);
  const Error& error = resolved.error();
  CHECK(error.code == ErrorCode::no_report);
  CHECK(error.message.find("left only " + (temp / "ns1.qdstrm").string()) != std::string::npos);
  CHECK(error.message.find("cannot load libdw.so.1") != std::string::npos);
  CHECK(error.message.find("Importer error status") != std::string::npos);
  CHECK(error.hint.find("apt-get install libdw1 libelf1") != std::string::npos);
  CHECK(error.hint.find(importer_path + " -i " + (temp / "ns1.qdstrm").string()) != std::string::npos);
  CHECK(error.subject == (temp / "ns1").string());
  CHECK(runner.calls.empty());
}

TEST_CASE("only a .qdstrm and a healthy importer: it is imported") {
  TempDir temp;
  write_file(temp / "ns1.qdstrm", "raw");
  const fs::path report = temp / "ns1.nsys-rep";
  ScriptedRunner runner;
  ScriptedReply reply;
  reply.effect = [&](const ProcessSpec&) { write_file(report, "imported"); };
  runner.on(importer_path + " -i " + (temp / "ns1.qdstrm").string() + " -o " + report.string(), reply);
  ReportResolveRequest request;
  request.output_base = temp / "ns1";
  auto resolved = resolve_report(runner, recorded_nsys(true), request);
  REQUIRE(resolved);
  CHECK(resolved->report == report);
  CHECK(resolved->imported_from_qdstrm);
  CHECK(runner.calls.size() == 1);
}

TEST_CASE("an import that fails is a no_report error quoting the importer") {
  TempDir temp;
  write_file(temp / "ns1.qdstrm", "raw");
  ScriptedRunner runner;
  runner.on(importer_path + " -i " + (temp / "ns1.qdstrm").string() + " -o " + (temp / "ns1.nsys-rep").string(),
            {1, "", "Importer error status: An unknown error occurred.\n"});
  ReportResolveRequest request;
  request.output_base = temp / "ns1";
  auto resolved = resolve_report(runner, recorded_nsys(true), request);
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().code == ErrorCode::no_report);
  CHECK(resolved.error().message.find("importing it failed (exit code 1): Importer error status") != std::string::npos);
}

TEST_CASE("No reports were generated: the NVTX gate never opened, named from the argv") {
  TempDir temp;
  ScriptedRunner runner;
  ReportResolveRequest request;
  request.output_base = temp / "ns3";
  request.profiler_output = transcript_gate_closed;
  request.profile_outcome = exited(0);
  request.profile_argv = gated_argv;
  auto resolved = resolve_report(runner, recorded_nsys(true), request);
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().code == ErrorCode::no_report);
  CHECK(resolved.error().message.find("NVTX capture range 'range' never opened") != std::string::npos);
  CHECK(resolved.error().hint.find("capture_range = \"none\"") != std::string::npos);
  CHECK(resolved.error().hint.find("NSYS_NVTX_PROFILER_REGISTER_ONLY=0") != std::string::npos);
}

TEST_CASE("a missing application: the failure and nsys's words, not a missing file") {
  TempDir temp;
  ScriptedRunner runner;
  ReportResolveRequest request;
  request.output_base = temp / "y";
  request.profiler_output =
      "Executable '/nonexistent/binary' not found in current directory or standard search paths\n";
  request.profile_outcome = exited(1);
  auto resolved = resolve_report(runner, recorded_nsys(true), request);
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().code == ErrorCode::no_report);
  CHECK(resolved.error().message.find("failed with exit code 1") != std::string::npos);
  CHECK(resolved.error().message.find("Executable '/nonexistent/binary' not found") != std::string::npos);
}

TEST_CASE("nothing written and nothing said: where it looked") {
  TempDir temp;
  ScriptedRunner runner;
  ReportResolveRequest request;
  request.output_base = temp / "z";
  request.profile_outcome = exited(0);
  auto resolved = resolve_report(runner, recorded_nsys(true), request);
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().message.find("z.nsys-rep, z.qdrep or z.qdstrm in " + temp.path().string()) !=
        std::string::npos);
  ProcessOutcome timed_out;
  timed_out.timed_out = true;
  timed_out.signal = 9;
  request.profile_outcome = timed_out;
  CHECK(resolve_report(runner, recorded_nsys(true), request).error().message.find("time limit") != std::string::npos);
}

// --- the fake nsys through the system runner --------------------------------------------------------

namespace {

struct ProfileRun {
  ProcessOutcome outcome;
  std::string output;
  std::vector<std::string> argv;
};

ProfileRun run_fake_nsys_profile(const std::string& mode, const fs::path& base, std::vector<std::string> extra,
                                 std::vector<std::string> application) {
  auto runner = make_system_process_runner();
  ProfileRun run;
  run.argv = {fake_tool_path("nsys").string(), "profile", "--trace=cuda,nvtx", "--sample=none"};
  run.argv.insert(run.argv.end(), extra.begin(), extra.end());
  run.argv.insert(run.argv.end(), {"--force-overwrite=true", "--output=" + base.string()});
  run.argv.insert(run.argv.end(), application.begin(), application.end());
  ProcessSpec spec;
  spec.argv = run.argv;
  spec.environment["FAKE_NSYS_MODE"] = mode;
  spec.on_stdout_line = [&](const std::string& line) { run.output += line + "\n"; };
  spec.on_stderr_line = [&](const std::string& line) { run.output += line + "\n"; };
  spec.timeout = std::chrono::seconds(60);
  auto outcome = runner->run(spec);
  REQUIRE(outcome);
  run.outcome = *outcome;
  return run;
}

Result<ResolvedReport> resolve(const ProfileRun& run, const fs::path& base, const NsysInfo& nsys) {
  auto runner = make_system_process_runner();
  ReportResolveRequest request;
  request.output_base = base;
  request.profiler_output = run.output;
  request.profile_outcome = run.outcome;
  request.profile_argv = run.argv;
  return resolve_report(*runner, nsys, request);
}

NsysInfo fake_nsys(bool importer_loads) {
  NsysInfo nsys = recorded_nsys(importer_loads);
  nsys.path = fake_tool_path("nsys");
  nsys.importer.path = fake_tool_path("QdstrmImporter");
  return nsys;
}

}  // namespace

TEST_CASE("fake nsys: the report it writes is resolved, and the application really ran") {
  TempDir temp;
  const auto run = run_fake_nsys_profile("ok", temp / "ns1", {},
                                         {"/bin/sh", "-c", "echo ran > '" + (temp / "marker").string() + "'"});
  CHECK(run.outcome.succeeded());
  CHECK(read_file(temp / "marker") == "ran\n");
  auto resolved = resolve(run, temp / "ns1", fake_nsys(true));
  REQUIRE(resolved);
  CHECK(resolved->report == temp / "ns1.nsys-rep");
}

TEST_CASE("fake nsys: a gate on a range the workload never emits gives the gate error") {
  TempDir temp;
  const auto run =
      run_fake_nsys_profile("ok", temp / "ns3", {"--capture-range=nvtx", "--nvtx-capture=range"}, {"/bin/true"});
  CHECK(run.outcome.succeeded());
  auto resolved = resolve(run, temp / "ns3", fake_nsys(true));
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().message.find("'range' never opened") != std::string::npos);
  const auto opened =
      run_fake_nsys_profile("ok", temp / "ns2", {"--capture-range=nvtx", "--nvtx-capture=decode"}, {"/bin/true"});
  CHECK(resolve(opened, temp / "ns2", fake_nsys(true)));
}

TEST_CASE("fake nsys: importer_broken leaves a .qdstrm, a healthy fake importer turns it into a report") {
  TempDir temp;
  const auto run = run_fake_nsys_profile("importer_broken", temp / "ns1", {}, {"/bin/true"});
  CHECK(run.outcome.succeeded());
  CHECK(fs::exists(temp / "ns1.qdstrm"));
  auto broken = resolve(run, temp / "ns1", fake_nsys(false));
  REQUIRE_FALSE(broken);
  CHECK(broken.error().message.find("cannot load libdw.so.1") != std::string::npos);
  auto imported = resolve(run, temp / "ns1", fake_nsys(true));
  REQUIRE(imported);
  CHECK(imported->imported_from_qdstrm);
  CHECK(read_file(temp / "ns1.nsys-rep") == "fake nsys report imported from qdstrm\n");
}

TEST_CASE("fake nsys: a missing application is reported with nsys's message") {
  TempDir temp;
  const auto run = run_fake_nsys_profile("ok", temp / "y", {}, {"/nonexistent/binary"});
  CHECK(run.outcome.exit_code == 1);
  auto resolved = resolve(run, temp / "y", fake_nsys(true));
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().message.find("Executable '/nonexistent/binary' not found") != std::string::npos);
}
