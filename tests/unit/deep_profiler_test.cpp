// DeepProfiler logic on a scripted runner: stage order, skip/fail recording, the empty-gate diagnosis,
// the ncu fallback re-run, interruption and timeouts; plus the progress parser and signal watcher.
#include "llmprof/deep_profiler.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <csignal>
#include <functional>
#include <optional>
#include <thread>
#include <tuple>

#include "analysis/run_verdict.hpp"
#include "core/text.hpp"
#include "fake_process_runner.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/report.hpp"
#include "llmprof/ncu_progress.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/stop_signal_watcher.hpp"
#include "llmprof/tool_probe.hpp"
#include "pipeline/artifact_checks.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/ncu_launch_cost.hpp"
#include "pipeline/ncu_sets.hpp"
#include "pipeline_bench.hpp"
#include "process_handshake.hpp"
#include "run_manifest_reading.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

TEST_CASE("a full run records every stage in order and profiles the selected kernels") {
  Bench bench;
  bench.config.run.device_index = 1;
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();

  std::vector<std::string> names;
  for (const auto& stage : manifest.stages) names.push_back(stage.name);
  CHECK(names == deep_profile_stage_names());
  for (const char* stage : {"probe", "stage1", "nsys", "select", "ncu"}) {
    INFO(stage << ": " << stage_of(manifest, stage).reason);
    CHECK(stage_of(manifest, stage).status == StageStatus::ok);
  }
  CHECK(stage_of(manifest, "stage1").exit_code == 0);

  const auto workload_runs = bench.runner.runs();
  const auto workload =
      std::find_if(workload_runs.begin(), workload_runs.end(), [](const auto& s) { return s.argv[0] == "workload"; });
  REQUIRE(workload != workload_runs.end());
  CHECK(workload->environment.at("CUDA_VISIBLE_DEVICES") == std::optional<std::string>("1"));
  CHECK(fs::exists(bench.main() / "stage1/metrics.json"));

  const auto profiles = bench.runs_of(nsys_capture());
  REQUIRE(profiles.size() == 1);
  CHECK(has_argument(profiles[0], "--nvtx-capture=decode"));
  CHECK(has_argument(profiles[0], "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0"));
  CHECK(fs::exists(bench.main() / "nsys/summary_cuda_gpu_kern_sum.csv"));
  REQUIRE(manifest.capture.has_value());  // the gate opened: the timeline is decode's alone
  CHECK(manifest.capture->gate_opened);
  CHECK_FALSE(manifest.capture->ungated_rerun);
  CHECK(manifest.capture->gated_range() == std::optional<std::string>("decode"));

  const auto ncu_runs = bench.runs_of(ncu_profile(true));
  // The recorded ncu sample (nc1) has no launch of one selected decode kernel, nvjet_..._2x1_...:
  // after the bounded first pass, one follow-up pass profiles that kernel alone, one launch.
  REQUIRE(ncu_runs.size() == 2);
  const auto count = std::find(ncu_runs[1].begin(), ncu_runs[1].end(), "--launch-count");
  REQUIRE(count != ncu_runs[1].end());
  CHECK(*(count + 1) == "1");
  const auto pattern = std::find(ncu_runs[1].begin(), ncu_runs[1].end(), "--kernel-name");
  REQUIRE(pattern != ncu_runs[1].end());
  CHECK_THAT(*(pattern + 1), Catch::Contains("2x1"));
  CHECK(has_argument(ncu_runs[1], (bench.main() / "ncu/followup_1").string()));
  CHECK(std::any_of(summary.notes.begin(), summary.notes.end(),
                    [](const std::string& note) { return note.find("own bounded pass") != std::string::npos; }));
  // The first pass filtered on the selection, the kernel it then missed included.
  const auto first_filter = std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "--kernel-name");
  REQUIRE(first_filter != ncu_runs[0].end());
  REQUIRE(first_filter + 1 != ncu_runs[0].end());
  CHECK_THAT(*(first_filter + 1), Catch::StartsWith("regex:") && Catch::Contains("2x1"));
  CHECK(std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "--launch-count") != ncu_runs[0].end());
  CHECK(std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "decode/") != ncu_runs[0].end());
  CHECK(read_file(bench.main() / "ncu/raw.csv").substr(0, 200) ==
        read_file(data_path("h100-nsight-2025.3/ncu/nc1_raw_base.csv")).substr(0, 200));
  CHECK_FALSE(fs::exists(bench.main() / "ncu/raw.csv.partial"));
  CHECK(read_file(bench.main() / "ncu/cmd.txt").find("--import") != std::string::npos);
  // Each recorded command carries the workload's directory and environment, and a profile line lacks the
  // overwrite flag, so that pasting it cannot replace this run's report.
  const std::string cwd = fs::current_path().string();
  const auto nsys_lines = detail::split_lines(read_file(bench.main() / "nsys/cmd.txt"));
  REQUIRE(nsys_lines.size() >= 3);
  CHECK(nsys_lines[0] == detail::kRecordedWithoutOverwrite);
  const std::string& profile_line = nsys_lines[1];
  CHECK_THAT(profile_line, Catch::StartsWith("cd " + cwd + " && env CUDA_VISIBLE_DEVICES=1 "));
  CHECK_THAT(profile_line, Catch::Contains(" LLMPROF_PROFILER=nsys ") && Catch::Contains("/nsys profile "));
  CHECK_THAT(profile_line, !Catch::Contains("--force-overwrite"));
  CHECK(stage_of(manifest, "nsys").command == std::optional<std::string>(profile_line));
  for (const auto& line : detail::split_lines(read_file(bench.main() / "ncu/cmd.txt"))) {
    if (line.find("--target-processes") == std::string::npos) continue;
    CHECK_THAT(line, Catch::Contains(" LLMPROF_PROFILER=ncu ") && !Catch::Contains(" -f "));
  }
  CHECK_THAT(read_file(bench.main() / "stage1/cmd.txt"),
             Catch::StartsWith("cd " + cwd + " && env CUDA_VISIBLE_DEVICES=1 LLMPROF_METRICS_FILE="));
  CHECK(fs::exists(bench.main() / "nsys/selection.json"));
  CHECK(fs::exists(bench.main() / "env.json"));
  CHECK(fs::exists(bench.main() / "sections.txt"));

  // Stages start in order, and ncu's kernel lines become n/N progress events.
  std::vector<std::string> started;
  int kernel_events = 0;
  for (const auto& event : bench.events) {
    if (event.kind == ProgressEvent::Kind::stage_started) started.push_back(event.stage);
    if (event.kind == ProgressEvent::Kind::tool_progress && event.kernel_total == 2) {
      ++kernel_events;
      CHECK(event.passes == 17);
    }
  }
  CHECK(started == deep_profile_stage_names());
  CHECK(kernel_events == 4);  // 2 kernel lines from the first pass, 2 from the scripted follow-up pass
  CHECK(summary.total_bytes > 0);
  CHECK(summary.total_bytes == manifest.total_bytes);

  // The analyze stage stored the verdict in report.json last, once the files it reads were written: the one the
  // analysis computes from them, which the report renders.
  const auto model = load_run_report(bench.main());
  REQUIRE(model.has_value());
  REQUIRE(model->verdict);
  CHECK(model->verdict->headline == detail::summarize_run_verdict(*model).headline);
  CHECK_THAT(model->verdict->headline, Catch::StartsWith("decode: "));
  REQUIRE(model->verdict->stages.size() == 1);
  CHECK(model->verdict->stages.front().stage == "decode");
  CHECK(model->verdict->stages.front().main);
  CHECK(model->verdict->stages.front().levers.size() == 5);
}

TEST_CASE("nsys.stats_extra_args and nsys.extra_args reach the nsys command lines") {
  Bench bench;
  bench.config.nsys.stats_extra_args = {"--timeunit=usec"};
  bench.config.nsys.extra_args = {"--cuda-memory-usage=true"};
  bench.config.run.enable_ncu = false;
  bench.script_workload();
  bench.script_nsys_report();
  bench.run();
  const auto stats = bench.runs_of([](const ProcessSpec& spec) {  // not the probe's `nsys stats --help-reports`
    return command_is("nsys", {"stats"})(spec) && !argv_contains("--help-reports")(spec);
  });
  REQUIRE(stats.size() == 1);
  REQUIRE(stats[0].size() >= 2);
  CHECK(stats[0][stats[0].size() - 2] == "--timeunit=usec");  // before the report, which comes last
  CHECK(stats[0].back() == (bench.main() / "nsys/profile.nsys-rep").string());
  const auto profiles = bench.runs_of(nsys_capture());
  REQUIRE(profiles.size() == 1);
  CHECK(std::find(profiles[0].begin(), profiles[0].end(), "--cuda-memory-usage=true") != profiles[0].end());
  CHECK(read_file(bench.main() / "nsys/cmd.txt").find("--timeunit=usec") != std::string::npos);
}

TEST_CASE("ncu.kernel_name_base = mangled reaches ncu and is never taken for demangled") {
  Bench bench;
  bench.config.ncu.kernel_name_base = NcuKernelNameBase::mangled;
  bench.config.ncu.kernel_regex = "_Z.*gemm";  // the user's own filter, in ncu's mangled form
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  bench.run();
  const auto ncu_runs = bench.runs_of(ncu_profile(true));
  REQUIRE(ncu_runs.size() == 1);  // no follow-up passes: they would need a selection
  const auto base = std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "--kernel-name-base");
  REQUIRE(base != ncu_runs[0].end());
  CHECK(*(base + 1) == "mangled");
  CHECK(stage_of(bench.manifest(), "analyze").status == StageStatus::ok);
  // The analysis must not offer a demangled selection as if ncu matched demangled names.
  const auto report = boost::json::parse(read_file(bench.main() / "analysis/report.json")).as_object();
  CHECK(report.at("top_kernel_selection").is_null());
  bool explained = false;
  for (const auto& skipped : report.at("skipped").as_array()) {
    explained =
        explained || skipped.as_string().subview().find("ncu.kernel_name_base = mangled") != std::string_view::npos;
  }
  CHECK(explained);
}

namespace {

// The first ncu profile command of a bench run under `set` (and `sections`), its ncu.set as given.
std::vector<std::string> first_ncu_profile(const std::string& set, std::vector<std::string> sections = {},
                                           std::vector<fs::path> config_directories = {}) {
  Bench bench;
  bench.config.ncu.set = set;
  bench.config.ncu.sections = std::move(sections);
  bench.environment.config_directories = std::move(config_directories);
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  bench.run();
  // run.json says which set fed the figures, and so does the report (the Stages caption).
  CHECK(stage_of(bench.manifest(), "ncu").ncu_set == std::optional<std::string>(set));
  CHECK_THAT(read_file(bench.main() / "report.md"),
             Catch::Contains(set == "llmprof" ? std::string("come from ncu.set = \"llmprof\"")
                                              : "come from ncu's --set " + set + "."));
  const auto ncu_runs = bench.runs_of(ncu_profile(true));
  REQUIRE_FALSE(ncu_runs.empty());
  return ncu_runs.front();
}

std::vector<std::string> values_after(const std::vector<std::string>& argv, const std::string& option) {
  std::vector<std::string> values;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == option) values.push_back(argv[i + 1]);
  return values;
}

}  // namespace

TEST_CASE("ncu.set chooses ncu's command line: libllmprof's own section, or one of ncu's sets", "[ncuset]") {
  const fs::path source_sections = fs::path(LLMPROF_SOURCE_DIR) / "config" / "ncu-sections";
  SECTION("llmprof (the default): --section-folder with the shipped section file, no --set") {
    CHECK(NcuConfig{}.set == "llmprof");
    // As deep-profile passes them: $LLMPROF_CONFIG_DIR, <prefix>/share/llmprof/config, the source tree's config/.
    const auto argv = first_ncu_profile("llmprof", {}, {source_sections.parent_path()});
    CHECK(values_after(argv, "--set").empty());
    CHECK(values_after(argv, "--section") == std::vector<std::string>{"LlmprofRoofline"});
    const auto folders = values_after(argv, "--section-folder");
    REQUIRE(folders.size() == 1);
    CHECK(fs::equivalent(folders[0], source_sections));
    CHECK(fs::exists(fs::path(folders[0]) / "LlmprofRoofline.section"));
  }
  SECTION("llmprof: the configuration directory the caller found comes first") {
    TempDir installed;
    fs::create_directories(installed / "ncu-sections");
    fs::copy_file(source_sections / "LlmprofRoofline.section", installed / "ncu-sections/LlmprofRoofline.section");
    const auto argv = first_ncu_profile("llmprof", {}, {installed / "missing", installed.path()});
    CHECK(values_after(argv, "--section-folder") == std::vector<std::string>{(installed / "ncu-sections").string()});
  }
  SECTION("roofline and full: ncu's own set, no folder of ours") {
    for (const std::string set : {"roofline", "full"}) {
      const auto argv = first_ncu_profile(set);
      CHECK(values_after(argv, "--set") == std::vector<std::string>{set});
      CHECK(values_after(argv, "--section-folder").empty());
      CHECK(values_after(argv, "--section").empty());
    }
  }
}

TEST_CASE("the plan's cost per launch is the set's own until a run measures it", "[ncuset]") {
  NcuConfig config;
  auto cost = detail::planned_launch_cost(config);  // the default: llmprof, ncu.seconds_per_launch 0
  CHECK(cost.seconds_per_launch == 0.24);
  CHECK(detail::ncu_set_cost("llmprof")->replay_passes == 6);
  CHECK(detail::ncu_set_cost("llmprof")->measured);
  config.set = "roofline";
  cost = detail::planned_launch_cost(config);
  CHECK(cost.seconds_per_launch == 0.6);
  CHECK(cost.source == "ncu.set roofline: 17 replay passes and 0.6 s a launch, measured on the H100, ncu 2025.3.1, "
                       "the 1b example");
  config.set = "full";  // nothing measured it: roofline's, saying so
  cost = detail::planned_launch_cost(config);
  CHECK(cost.seconds_per_launch == 0.6);
  CHECK_THAT(cost.source, Catch::StartsWith("ncu.set full has no figure of its own; roofline's (17 replay passes"));
  config.seconds_per_launch = 1.5;  // the configuration's own figure wins
  cost = detail::planned_launch_cost(config);
  CHECK(cost.seconds_per_launch == 1.5);
  CHECK(cost.source == "ncu.seconds_per_launch");
}

TEST_CASE("libllmprof's ncu section is found in the first configuration directory that has it", "[ncuset]") {
  TempDir first, second;
  fs::create_directories(second / "ncu-sections");
  write_file(second / "ncu-sections/LlmprofRoofline.section", "Identifier: \"LlmprofRoofline\"\n");
  DeepProfilerEnvironment environment;
  environment.config_directories = {first.path(), second.path()};
  std::vector<fs::path> searched;
  CHECK(detail::find_llmprof_section_folder(environment, &searched) == second / "ncu-sections");
  CHECK(searched == std::vector<fs::path>{first / "ncu-sections"});
  environment.config_directories = {first.path()};
  environment.executable = first / "bin" / "deep-profile";  // <prefix>/share/llmprof/config comes next
  fs::create_directories(first / "share/llmprof/config/ncu-sections");
  write_file(first / "share/llmprof/config/ncu-sections/LlmprofRoofline.section", "Identifier: \"LlmprofRoofline\"\n");
  CHECK(detail::find_llmprof_section_folder(environment) == first / "share/llmprof/config/ncu-sections");
}

TEST_CASE("an NVTX gate that never opens is diagnosed against the ranges the workload emitted") {
  Bench bench;
  bench.config.nsys.nvtx_capture = "range";
  bench.script_workload({"prefill", "decode"});
  bench.runner.on(profile_with(true),
                  FakeAnswer::printing({"Processing events...", "Generated:", "    No reports were generated"}));
  bench.script_ncu_report(false);
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();

  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::failed);
  CHECK_THAT(nsys.reason, Catch::Contains("nsys.nvtx_capture=\"range\" never opened"));
  CHECK_THAT(nsys.reason, Catch::Contains("\"prefill\", \"decode\""));
  CHECK_THAT(nsys.reason, Catch::Contains("Fix: --set nsys.nvtx_capture=decode"));
  CHECK(stage_of(manifest, "select").status == StageStatus::skipped);
  // ncu still runs, without a kernel filter and bounded.
  CHECK(stage_of(manifest, "ncu").status == StageStatus::ok);
  const auto ncu_runs = bench.runs_of(ncu_profile(false));
  REQUIRE(ncu_runs.size() == 1);
  const auto bound = std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "--launch-count");
  REQUIRE(bound != ncu_runs[0].end());
  CHECK(*(bound + 1) == std::to_string(bench.config.ncu.max_launches));
  REQUIRE(summary.notes.size() >= 1);
  CHECK_THAT(summary.notes.front(), Catch::Contains("Fix: --set nsys.nvtx_capture=decode"));
  CHECK(summary.outcome == RunOutcome::incomplete);
  CHECK(manifest.status == RunStatus::incomplete);
}

TEST_CASE("on_empty_gate = rerun_ungated captures again without the gate") {
  Bench bench;
  bench.config.nsys.nvtx_capture = "decoding";
  bench.config.run.on_empty_gate = OnEmptyGate::rerun_ungated;
  bench.script_workload();
  bench.runner.on(profile_with(true), FakeAnswer::printing({"Generated:", "    No reports were generated"}));
  bench.script_nsys_report(false);
  bench.script_ncu_report();
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();

  CHECK(bench.runs_of(nsys_capture()).size() == 2);
  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::ok);
  REQUIRE_FALSE(nsys.warnings.empty());
  CHECK_THAT(nsys.warnings.back(), Catch::Contains("ungated"));
  CHECK(fs::exists(bench.main() / "nsys/profile_ungated.log"));
  // run.json's record of the capture: the gate never opened, the window is the ungated re-run's.
  REQUIRE(manifest.capture.has_value());
  CHECK(manifest.capture->gate == CaptureGateKind::nvtx);
  CHECK(manifest.capture->range == "decoding");
  CHECK_FALSE(manifest.capture->gate_opened);
  CHECK(manifest.capture->ungated_rerun);
  CHECK_FALSE(manifest.capture->gated_range().has_value());
  REQUIRE(manifest.capture->windows.size() == 1);
  CHECK(manifest.capture->windows[0].report == "nsys/profile.nsys-rep");
  CHECK(stage_of(manifest, "select").status == StageStatus::ok);
  REQUIRE_FALSE(summary.notes.empty());
  CHECK_THAT(summary.notes.front(), Catch::Contains("Re-running nsys without the gate"));
}

TEST_CASE("ncu that profiles no kernels is re-run once without the kernel filter") {
  Bench bench;
  bench.script_workload();
  bench.script_nsys_report();
  bench.runner.on(ncu_profile(true), FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_nokernels.txt")));
  bench.script_ncu_report(false);
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();

  CHECK(bench.runs_of(ncu_profile(true)).size() == 1);
  CHECK(bench.runs_of(ncu_profile(false)).size() == 1);
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(ncu.status == StageStatus::ok);
  REQUIRE_FALSE(ncu.warnings.empty());
  CHECK_THAT(ncu.warnings.front(), Catch::Contains("unfiltered re-run"));
  CHECK(ncu.log_file == "ncu/profile_unfiltered.log");
  const std::string commands = read_file(bench.main() / "ncu/cmd.txt");
  CHECK(commands.find("--kernel-name") != std::string::npos);
  const auto lines = detail::split_lines(commands);
  CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& line) { return line.rfind('#', 0) != 0; }) ==
        3);  // filtered, unfiltered, import; each profile line has its comment line
  REQUIRE_FALSE(summary.notes.empty());
  CHECK_THAT(summary.notes.front(), Catch::Contains("distribution_elementwise_grid_stride_kernel"));
}

TEST_CASE("a missing nsys skips its stage with the reason and ncu still runs unfiltered") {
  Bench bench(false);
  bench.script_workload();
  bench.script_ncu_report(false);
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();

  const StageRecord& nsys = stage_of(manifest, "nsys");
  CHECK(nsys.status == StageStatus::skipped);
  CHECK_THAT(nsys.reason, Catch::Contains("not found"));
  CHECK(stage_of(manifest, "ncu").status == StageStatus::ok);
  CHECK(fs::exists(bench.main() / "ncu/raw.csv"));
  CHECK(summary.outcome == RunOutcome::environment);
  CHECK_FALSE(summary.all_requested_succeeded);
}

TEST_CASE("a workload that exits non-zero is reported with its exit code and last stderr lines") {
  Bench bench;
  bench.runner.on(command_is("workload"),
                  FakeAnswer::exiting(3).with_stderr({"loading model", "RuntimeError: out of memory"}));
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();

  const StageRecord& stage1 = stage_of(manifest, "stage1");
  CHECK(stage1.status == StageStatus::failed);
  CHECK(stage1.exit_code == 3);
  CHECK_THAT(stage1.reason, Catch::Contains("exit code 3"));
  CHECK_THAT(stage1.reason, Catch::Contains("RuntimeError: out of memory"));
  CHECK(stage_of(manifest, "nsys").status == StageStatus::skipped);
  CHECK(stage_of(manifest, "ncu").status == StageStatus::skipped);
  CHECK(bench.runs_of(nsys_capture()).empty());
  // One vocabulary: the summary, RunOutcome and run.json all say failed (exit 1, as incomplete).
  CHECK(summary.outcome == RunOutcome::failed);
  CHECK(manifest.status == RunStatus::failed);
  CHECK(exit_code_for(summary.outcome) == exit_incomplete);
}

TEST_CASE("a configuration built in code that validate_config rejects is an error before anything runs",
          "[outcome]") {
  Bench bench;
  bench.script_workload();
  bench.config.run.top_n_kernels = 0;
  DeepProfiler profiler(bench.config, bench.runner, bench.clock, {}, bench.environment);
  const auto summary = profiler.run();
  REQUIRE_FALSE(summary.has_value());
  CHECK(summary.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(summary.error().message, Catch::Contains("run.top_n_kernels"));
  CHECK(bench.runner.runs().empty());
  CHECK_FALSE(fs::exists(bench.main()));
}

TEST_CASE("ncu skipped because the machine has no GPU is its own outcome, not ok", "[outcome]") {
  Bench bench;
  bench.script_workload();
  bench.script_nsys_report();
  bench.runner.on(ncu_profile(true), FakeAnswer::printing(fixture_lines("debian-nsight-2022/cli/ncu_no_driver.txt")));
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  CHECK(ncu.status == StageStatus::skipped);
  CHECK_THAT(ncu.reason, Catch::Contains("need an NVIDIA GPU and its driver"));
  CHECK_FALSE(summary.all_requested_succeeded);
  CHECK(manifest.status == summary.outcome);
  if (detect_nvidia_driver().present) {
    // A machine with a driver whose ncu cannot reach it has a problem: the machine's (exit 3).
    CHECK(summary.outcome == RunOutcome::environment);
    CHECK(summary.skipped_for_hardware.empty());
  } else {
    CHECK(summary.outcome == RunOutcome::hardware_limited);
    CHECK(summary.skipped_for_hardware == std::vector<std::string>{"ncu"});
    CHECK(to_string(manifest.status) == std::string("hardware_limited"));
    CHECK(exit_code_for(summary.outcome) == exit_ok);  // the quick start's exit 0 on a GPU-less machine
  }
}

TEST_CASE("a workload past its timeout fails stage1 with the timeout outcome") {
  Bench bench;
  bench.config.workload.timeout_s = 2;
  bench.runner.on(command_is("workload"), FakeAnswer::timing_out());
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();  // stage_of returns a reference into it
  const StageRecord& stage1 = stage_of(manifest, "stage1");
  CHECK(stage1.status == StageStatus::failed);
  CHECK_THAT(stage1.reason, Catch::Contains("timeout"));
  CHECK(bench.runner.runs().back().argv[0] != "nsys");
  CHECK(summary.outcome == RunOutcome::timeout);
  REQUIRE(std::find_if(bench.runner.runs().begin(), bench.runner.runs().end(),
                       [](const auto& s) { return s.argv[0] == "workload"; }) != bench.runner.runs().end());
}

TEST_CASE("a stop request during nsys marks it interrupted, keeps the manifest and runs nothing more") {
  Bench bench;
  bench.script_workload();
  DeepProfiler* current = nullptr;
  bench.runner.on(nsys_capture(),
                  FakeAnswer::killed_by(SIGTERM).doing([&current](const ProcessSpec&) { current->request_stop(); }));
  DeepProfiler profiler(bench.config, bench.runner, bench.clock, {}, bench.environment);
  current = &profiler;
  auto summary = profiler.run();
  REQUIRE(summary.has_value());
  const RunManifest manifest = bench.manifest();
  CHECK(stage_of(manifest, "nsys").status == StageStatus::interrupted);
  CHECK(stage_of(manifest, "stage1").status == StageStatus::ok);
  for (const char* later : {"select", "ncu", "analyze", "report"}) {
    CHECK(stage_of(manifest, later).status == StageStatus::skipped);
    CHECK_THAT(stage_of(manifest, later).reason, Catch::Contains("interrupted"));
  }
  CHECK(bench.runs_of(command_is("ncu", {"--target-processes"})).empty());
  CHECK(summary->outcome == RunOutcome::interrupted);
  CHECK(manifest.status == RunStatus::interrupted);
  CHECK(fs::exists(bench.main() / "nsys/cmd.txt"));
}

TEST_CASE("too little free space refuses the profilers but still runs the workload bare") {
  Bench bench;
  bench.config.run.min_free_space_gb = 1e12;
  bench.script_workload();
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();
  CHECK(stage_of(manifest, "stage1").status == StageStatus::ok);
  CHECK(stage_of(manifest, "nsys").status == StageStatus::skipped);
  CHECK_THAT(stage_of(manifest, "nsys").reason, Catch::Contains("run.min_free_space_gb"));
  CHECK(stage_of(manifest, "ncu").status == StageStatus::skipped);
  CHECK(summary.outcome == RunOutcome::environment);
}

TEST_CASE("an unwritable runs root is an error before anything runs") {
  Bench bench;
  write_file(bench.temp / "file", "not a directory");
  bench.config.run.runs_root = bench.temp / "file" / "runs";
  DeepProfiler profiler(bench.config, bench.runner, bench.clock, {}, bench.environment);
  auto summary = profiler.run();
  REQUIRE_FALSE(summary.has_value());
  CHECK(summary.error().code == ErrorCode::io_error);
  CHECK(bench.runner.runs().empty());
}

TEST_CASE("the bundled example that is not built gives a clear error naming the way out") {
  auto found = detail::find_example_workload("/nonexistent/bin/deep-profile", {});
  REQUIRE_FALSE(found.has_value());
  CHECK(found.error().code == ErrorCode::not_found);
  CHECK_THAT(found.error().message, Catch::Contains("/nonexistent/bin/llmprof-decode"));
  CHECK_THAT(found.error().hint, Catch::Contains("-- CMD"));
  TempDir temp;
  make_executable(temp / "examples/decode-workload/llmprof-decode");
  auto in_build_tree = detail::find_example_workload(temp / "apps/deep-profile/deep-profile", {});
  REQUIRE(in_build_tree.has_value());
  CHECK(in_build_tree.value() == temp / "examples/decode-workload/llmprof-decode");
}

TEST_CASE("ncu progress lines parse into kernel n/N and passes") {
  auto line = parse_ncu_progress_line(
      "==PROF== Profiling \"nvjet_sm90_hsh_64x8_64x16_4x1...\" - 2 (3/40): 0%....50%....100% - 17 passes");
  REQUIRE(line.has_value());
  CHECK(line->kernel_name == "nvjet_sm90_hsh_64x8_64x16_4x1...");
  CHECK(line->launch_id == 2);
  CHECK(line->index == 3);
  CHECK(line->total == 40);
  CHECK(line->passes == 17);
  auto running = parse_ncu_progress_line("==PROF== Profiling \"a \" - b\" - 0 (1/4): 0%....50%");
  REQUIRE(running.has_value());
  CHECK(running->kernel_name == "a \" - b");
  CHECK(running->passes == 0);
  CHECK_FALSE(parse_ncu_progress_line("==PROF== Connected to process 1224 (/usr/bin/python3.12)"));
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::tool_progress;
  event.stage = "ncu";
  event.elapsed = std::chrono::milliseconds(12345);
  event.kernel_name = "gemm";
  event.kernel_index = 4;
  event.kernel_total = 40;
  event.passes = 17;
  CHECK(format_progress_event(event) == "[   12.3s] ncu      kernel 4/40 gemm (17 passes)");
}

TEST_CASE("ncu 2025.3.1's progress lines under --filter-mode per-launch-config have no n/N and still count") {
  // Recorded on the H100 (ncu 2025.3.1, the 1b decode's first plan pass, ncu/profile.log): the line carries
  // neither the launch id nor n/N. Unparsed, no launch of a per-kernel plan was counted, so no pass ended.
  const std::string mangled = "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1_";
  auto line = parse_ncu_progress_line("==PROF== Profiling \"" + mangled + "\": 0%....50%....100% - 17 passes");
  REQUIRE(line.has_value());
  CHECK(line->kernel_name == mangled);
  CHECK(line->index == 0);
  CHECK(line->total == 0);
  CHECK(line->passes == 17);
  auto running = parse_ncu_progress_line("==PROF== Profiling \"" + mangled + "\": 0%....50%");
  REQUIRE(running.has_value());
  CHECK(running->passes == 0);
  CHECK_FALSE(parse_ncu_progress_line("==PROF== Profiling \"x\": the workload's own words"));
  ProgressEvent event;
  event.kind = ProgressEvent::Kind::tool_progress;
  event.stage = "ncu";
  event.elapsed = std::chrono::milliseconds(12345);
  event.kernel_name = "reduce_kernel";
  event.passes = 17;
  CHECK(format_progress_event(event) == "[   12.3s] ncu      kernel reduce_kernel (17 passes)");
}

TEST_CASE("the empty-gate diagnosis names the right fix for a wrong name and a wrong domain") {
  detail::EmittedRanges emitted{"", {"prefill", "decode"}};
  CHECK_THAT(detail::diagnose_empty_gate("decod", emitted, "prefill"),
             Catch::Contains("Fix: --set nsys.nvtx_capture=prefill"));
  CHECK_THAT(detail::diagnose_empty_gate("decod", detail::EmittedRanges{"", {"warmup", "decode"}}, "missing"),
             Catch::Contains("Fix: --set nsys.nvtx_capture=decode "));
  CHECK_THAT(detail::diagnose_empty_gate("decode@llm", emitted, "decode"),
             Catch::Contains("domain does not. Fix: --set nsys.nvtx_capture=decode"));
  CHECK_THAT(detail::diagnose_empty_gate("decode", detail::EmittedRanges{"llm", {"decode"}}, "decode"),
             Catch::Contains("--set nsys.nvtx_capture=decode@llm"));
  CHECK_THAT(detail::diagnose_empty_gate("range", std::nullopt, "decode"), Catch::Contains("nsys.capture_range=none"));
}

TEST_CASE("StopSignalWatcher turns SIGINT and SIGTERM into a callback on its own thread") {
  std::atomic<int> seen{0};
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);  // Catch2's own handler, which the watcher must restore
  {
    auto started = StopSignalWatcher::start([&seen](int signal_number) { seen.store(signal_number); });
    REQUIRE(started.has_value());
    const StopSignalWatcher watcher = std::move(started).value();
    std::raise(SIGTERM);
    await_condition([&seen] { return seen.load() != 0; });  // the watcher's thread, bounded
    CHECK(seen.load() == SIGTERM);
    CHECK(watcher.received_signal() == SIGTERM);
    std::raise(SIGINT);
    await_condition([&seen] { return seen.load() == SIGINT; });
    CHECK(seen.load() == SIGINT);
  }
  struct sigaction current {};
  ::sigaction(SIGINT, nullptr, &current);
  CHECK(current.sa_handler == before.sa_handler);
}

TEST_CASE("StopSignalWatcher without a free file descriptor is an error, and the handlers stay as they were") {
  struct sigaction before {};
  ::sigaction(SIGTERM, nullptr, &before);
  struct rlimit limits {};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &limits) == 0);
  struct rlimit none = limits;
  none.rlim_cur = 0;  // no new descriptor: pipe2 fails with EMFILE
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &none) == 0);
  auto started = StopSignalWatcher::start([](int) {});
  ::setrlimit(RLIMIT_NOFILE, &limits);
  REQUIRE_FALSE(started.has_value());
  CHECK(started.error().code == ErrorCode::io_error);
  CHECK_THAT(started.error().message, Catch::Contains("pipe2 failed"));
  CHECK_THAT(started.error().hint, Catch::Contains("ulimit -n"));
  struct sigaction after {};
  ::sigaction(SIGTERM, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
}

TEST_CASE("an interrupted nsys stage lists the report it left on disk; run.json lists every file") {
  Bench bench;
  bench.script_workload();
  DeepProfiler* current = nullptr;
  bench.runner.on(nsys_capture(),
                  FakeAnswer::killed_by(SIGTERM)
                      .writing((bench.main() / "nsys/profile.nsys-rep").string(), "partial report")
                      .doing([&current](const ProcessSpec&) { current->request_stop(); }));
  DeepProfiler profiler(bench.config, bench.runner, bench.clock, {}, bench.environment);
  current = &profiler;
  REQUIRE(profiler.run().has_value());
  const RunManifest manifest = bench.manifest();
  REQUIRE(stage_of(manifest, "nsys").status == StageStatus::interrupted);
  const auto& artifacts = stage_of(manifest, "nsys").artifacts;
  CHECK(std::find(artifacts.begin(), artifacts.end(), "nsys/profile.nsys-rep") != artifacts.end());  // before: absent
  // The class: whatever path a run takes, every file under MAIN is in run.json's "files".
  std::vector<std::string> on_disk;
  for (const auto& entry : fs::recursive_directory_iterator(bench.main())) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.front() != '.')
      on_disk.push_back(entry.path().lexically_relative(bench.main()).string());
  }
  std::sort(on_disk.begin(), on_disk.end());
  CHECK(manifest.files == on_disk);
  CHECK_FALSE(fs::exists(bench.main() / ".space-reserve"));  // given back at the end of the run
}

TEST_CASE(
    "the workload's own CUPTI profiler losing to nsys and ncu is a recorded warning, and LLMPROF_PROFILER says who "
    "runs it") {
  Bench bench;
  bench.script_workload();
  // What the workload printed under each tool on the H100 (tests/data/h100-nsight-2025.3/cli/cupti_conflict_*.log).
  std::vector<std::string> nsys_lines = fixture_lines("h100-nsight-2025.3/cli/cupti_conflict_nsys.log");
  nsys_lines.resize(std::min<std::size_t>(nsys_lines.size(), 6));
  nsys_lines.insert(nsys_lines.end(), {"Generated:", "\t" + (bench.main() / "nsys/profile.nsys-rep").string()});
  bench.runner.on(
      profile_with(true),
      FakeAnswer::printing(nsys_lines).writing((bench.main() / "nsys/profile.nsys-rep").string(), "report"));
  std::vector<std::string> ncu_lines = fixture_lines("h100-nsight-2025.3/cli/cupti_conflict_ncu.log");
  ncu_lines.resize(std::min<std::size_t>(ncu_lines.size(), 10));
  bench.runner.on(ncu_profile(true), FakeAnswer::printing(ncu_lines).writing("{output}.ncu-rep", "ncu report"));
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();
  for (const char* stage : {"nsys", "ncu"}) {
    const auto& warnings = stage_of(manifest, stage).warnings;
    INFO(stage);
    CHECK(std::any_of(warnings.begin(), warnings.end(), [&](const std::string& warning) {
      return warning.find("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)") != std::string::npos &&
             warning.find("LLMPROF_PROFILER=" + std::string(stage)) != std::string::npos;
    }));
  }
  CHECK(stage_of(manifest, "nsys").status == StageStatus::ok);
  std::map<std::string, std::string> profiler_by_tool;
  for (const auto& spec : bench.runner.runs()) {
    const auto value = spec.environment.find("LLMPROF_PROFILER");
    if (value != spec.environment.end() && value->second)
      profiler_by_tool[fs::path(spec.argv[0]).filename().string()] = *value->second;
  }
  CHECK(profiler_by_tool["workload"] == "none");
  CHECK(profiler_by_tool["nsys"] == "nsys");
  CHECK(profiler_by_tool["ncu"] == "ncu");
  const std::string report = read_file(bench.main() / "report.md");
  CHECK(report.find("## Warnings from the profiling stages") != std::string::npos);
  CHECK(report.find("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") != std::string::npos);
}

TEST_CASE("nsys ending the workload at the end of the capture range (stop-shutdown, exit 143) is not a failure") {
  Bench bench;
  bench.config.nsys.capture_range_end = NsysCaptureRangeEnd::stop_shutdown;
  bench.script_workload();
  std::vector<std::string> lines = fixture_lines("h100-nsight-2025.3/cli/cupti_conflict_nsys_gated_stop_shutdown.log");
  lines.push_back("\t" + (bench.main() / "nsys/profile.nsys-rep").string());
  bench.runner.on(
      profile_with(true),
      FakeAnswer::printing(lines, 143).writing((bench.main() / "nsys/profile.nsys-rep").string(), "report"));
  bench.script_ncu_report();
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& nsys = stage_of(manifest, "nsys");
  INFO(nsys.reason);
  CHECK(nsys.status == StageStatus::ok);
  CHECK(std::any_of(summary.notes.begin(), summary.notes.end(), [](const std::string& note) {
    return note.find("--capture-range-end=stop-shutdown") != std::string::npos &&
           note.find("exited 143") != std::string::npos;
  }));
  CHECK(std::none_of(nsys.warnings.begin(), nsys.warnings.end(), [](const std::string& warning) {
    return warning.find("application probably exited with an error") != std::string::npos;
  }));
}

TEST_CASE("ncu.plan = per-kernel: an ncu with --filter-mode per-launch-config profiles by the plan in one pass") {
  Bench bench;
  bench.config.ncu.plan = NcuPlanMode::per_kernel;
  bench.runner.on(command_is("ncu", {"--help"}),
                  FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_help.txt")));
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();
  INFO(stage_of(manifest, "ncu").reason);
  CHECK(stage_of(manifest, "ncu").status == StageStatus::ok);
  const auto ncu_runs = bench.runs_of(ncu_profile(true));
  REQUIRE(!ncu_runs.empty());
  const auto mode = std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "--filter-mode");
  REQUIRE(mode != ncu_runs[0].end());
  CHECK(*(mode + 1) == "per-launch-config");
  const auto count = std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "--launch-count");
  REQUIRE(count != ncu_runs[0].end());
  CHECK(*(count + 1) == "1");  // ncu.launches_per_config, per configuration: not the 200-launch bound
  // No SQLite export here (the fake export writes none): the plan comes from the selection's counts.
  const auto plan = boost::json::parse(read_file(bench.main() / "ncu/plan.json")).as_object();
  CHECK(plan.at("configs_known").as_bool() == false);
  CHECK(plan.at("passes").as_array().size() == 1);
  // A pass's estimate: the bare run plus 0.45 ms per launch nsys recorded (ns1_st_cuda_gpu_kern_sum.csv's
  // Instances sum to 435, Python's csv module).
  const double bare_s = stage_of(manifest, "stage1").duration_s;
  CHECK(plan.at("seconds_per_pass").to_number<double>() == Approx(bare_s + 435 * 0.00045));
  CHECK_THAT(std::string(plan.at("seconds_per_pass_source").as_string()), Catch::Contains("+ 435 launches x 0.00045 s"));
  const auto selection = boost::json::parse(read_file(bench.main() / "nsys/selection.json")).as_object();
  CHECK(plan.at("planned_launches").as_int64() == static_cast<std::int64_t>(selection.at("kernels").as_array().size()));
  REQUIRE(plan.contains("check"));
  CHECK(plan.at("check").at("rows").as_int64() > 0);
  CHECK(fs::exists(bench.main() / "ncu/plan.log"));
  bool eta = false;
  for (const auto& event : bench.events)
    eta = eta || format_progress_event(event).find("launch 2 of ") != std::string::npos;
  CHECK(eta);
  CHECK(summary.outcome == RunOutcome::ok);
}

TEST_CASE("ncu.plan = per-kernel: planned kernels without a row get one recovery pass, not one pass each") {
  Bench bench;
  bench.config.ncu.plan = NcuPlanMode::per_kernel;
  bench.runner.on(command_is("ncu", {"--help"}),
                  FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_help.txt")));
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  // The recorded ncu sample (nc1) has no launch of the selected nvjet_..._2x1_... kernel; the recovery pass's
  // export has one (a recorded row under that name).
  const std::string missing = "nvjet_sm90_hsh_64x8_64x16_2x1_v_bz_bias_TNT";
  const std::string present = "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT";
  const std::vector<std::string> recorded = fixture_lines("h100-nsight-2025.3/ncu/nc1_raw_base.csv");
  std::vector<std::string> recovery_csv(recorded.begin(), recorded.begin() + 2);  // header and units
  for (auto line = recorded.begin() + 2; line != recorded.end(); ++line) {
    if (line->find(present) == std::string::npos) continue;
    recovery_csv.push_back(*line);
    recovery_csv.back().replace(recovery_csv.back().find(present), present.size(), missing);
    break;
  }
  REQUIRE(recovery_csv.size() == 3);
  bench.runner.on_first(
      [](const ProcessSpec& spec) {
        return command_is("ncu", {"--import"})(spec) &&
               std::any_of(spec.argv.begin(), spec.argv.end(), [](const std::string& argument) {
                 return argument.find("recovery.ncu-rep") != std::string::npos;
               });
      },
      FakeAnswer::printing(recovery_csv));
  const RunSummary summary = bench.run();
  CHECK(summary.outcome == RunOutcome::ok);
  const auto ncu_runs = bench.runs_of(ncu_profile(true));
  REQUIRE(ncu_runs.size() == 2);  // the planned pass and the recovery pass; no bounded follow-up
  CHECK(has_argument(ncu_runs[1], (bench.main() / "ncu/recovery").string()));
  const std::string regex = *(std::find(ncu_runs[1].begin(), ncu_runs[1].end(), "--kernel-name") + 1);
  CHECK(regex.find(missing) != std::string::npos);
  CHECK(regex.find(present) == std::string::npos);  // it had its row: not profiled again
  CHECK(*(std::find(ncu_runs[1].begin(), ncu_runs[1].end(), "--filter-mode") + 1) == "per-launch-config");
  CHECK(read_file(bench.main() / "ncu/raw.csv").find(missing) != std::string::npos);
  // plan.json's check is the one after the recovery pass.
  const auto plan = boost::json::parse(read_file(bench.main() / "ncu/plan.json")).as_object();
  for (const auto& shortfall : plan.at("check").at("not_profiled").as_array())
    CHECK(shortfall.at("kernel").as_string() != missing);
  bool recovered = false;
  for (const auto& event : bench.events) {
    const std::string text = format_progress_event(event);
    recovered = recovered ||
                (text.find("after the recovery pass") != std::string::npos && text.find(missing) == std::string::npos);
  }
  CHECK(recovered);
}

TEST_CASE("ncu.plan = per-kernel falls back to the bounded plan where ncu --help lists no per-launch-config") {
  Bench bench;
  bench.config.ncu.plan = NcuPlanMode::per_kernel;
  bench.runner.on(command_is("ncu", {"--help"}),
                  FakeAnswer::printing(fixture_lines("debian-nsight-2022/cli/ncu_help.txt")));
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  const RunSummary summary = bench.run();
  const auto ncu_runs = bench.runs_of(ncu_profile(true));
  REQUIRE(!ncu_runs.empty());
  CHECK(std::find(ncu_runs[0].begin(), ncu_runs[0].end(), "--filter-mode") == ncu_runs[0].end());
  CHECK(std::any_of(summary.notes.begin(), summary.notes.end(), [](const std::string& note) {
    return note.find("no --filter-mode per-launch-config") != std::string::npos;
  }));
  CHECK_FALSE(fs::exists(bench.main() / "ncu/plan.json"));
}

TEST_CASE("workload.example_args with an explicit workload command is named as having no effect") {
  Bench bench;
  bench.config.workload.example_args = {"--batch", "8"};
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  bench.run();
  const auto warnings = stage_of(bench.manifest(), "stage1").warnings;
  CHECK(std::any_of(warnings.begin(), warnings.end(), [](const std::string& warning) {
    return warning.find("workload.example_args is set but has no effect") != std::string::npos;
  }));
  const std::string log = read_file(bench.main() / "run.json");
  CHECK_THAT(log, Catch::Contains("workload.example_args is set but has no effect"));
}

TEST_CASE("an nsys export left at 0 bytes (a full disk) fails the nsys stage, naming the file") {
  Bench bench;
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  std::string empty_file;
  SECTION("profile.sqlite") {
    // nsys 2022.4 exits 0 when its writes fail for want of space; the file stays at 0 bytes.
    bench.runner.on_first(command_is("nsys", {"export"}),
                          FakeAnswer::exiting(0).doing([](const ProcessSpec& spec) {
                            write_file(argument_after(spec, "--output"), "");
                          }));
    empty_file = "nsys/profile.sqlite";
  }
  const RunSummary summary = bench.run();
  const StageRecord& nsys = stage_of(bench.manifest(), "nsys");
  CHECK(nsys.status == StageStatus::failed);
  CHECK_THAT(nsys.reason, Catch::Contains(empty_file + " is empty (0 bytes)"));
  CHECK(summary.outcome != RunOutcome::ok);
}

TEST_CASE("a zero-byte nsys summary CSV is a report without rows, not a failed write") {
  // On the H100, nsys 2025.3.1 printed "PROCESSED (EMPTY RESULTS)" for cuda_gpu_mem_time_sum of the HF-style
  // decode and left the file at 0 bytes; failing the stage for it made every such run incomplete.
  TempDir temp;
  fs::create_directories(temp / "nsys");
  write_file(temp / "nsys/summary_cuda_gpu_mem_time_sum.csv", "");
  write_file(temp / "nsys/other.csv", "");
  CHECK_FALSE(detail::unusable_artifact(temp.path(), "nsys/summary_cuda_gpu_mem_time_sum.csv"));
  CHECK(detail::unusable_artifact(temp.path(), "nsys/other.csv") ==
        std::optional<std::string>("nsys/other.csv is empty (0 bytes)"));
}

TEST_CASE("unusable_artifact names what makes a handed-on file unusable, and leaves logs alone") {
  TempDir temp;
  write_file(temp / "a.csv", "\nrow\n");
  write_file(temp / "b.csv", "Time (%),Name\n1,k\n");
  write_file(temp / "c.sqlite", "not a database");
  write_file(temp / "d.json", "{\"truncated\": ");
  write_file(temp / "e.log", "");
  write_file(temp / "f.nsys-rep", "");
  CHECK(detail::unusable_artifact(temp.path(), "a.csv") == std::optional<std::string>("a.csv has no header line"));
  CHECK_FALSE(detail::unusable_artifact(temp.path(), "b.csv"));
  CHECK(detail::unusable_artifact(temp.path(), "c.sqlite") ==
        std::optional<std::string>("c.sqlite is not an SQLite database"));
  CHECK(detail::unusable_artifact(temp.path(), "d.json") == std::optional<std::string>("d.json is not valid JSON"));
  CHECK_FALSE(detail::unusable_artifact(temp.path(), "e.log"));
  CHECK(detail::unusable_artifact(temp.path(), "f.nsys-rep") ==
        std::optional<std::string>("f.nsys-rep is empty (0 bytes)"));
  CHECK_THAT(*detail::unusable_artifact(temp.path(), "absent.csv"), Catch::StartsWith("absent.csv is missing"));
  CHECK_FALSE(detail::unusable_artifact(fs::path(LLMPROF_TEST_DATA_DIR), "nsys-sqlite/eager.sqlite"));
}

TEST_CASE("two DeepProfilers running at once in one process keep their own logs and complete run directories",
          "[outcome][logging]") {
  Bench first;
  Bench second;
  for (Bench* bench : {&first, &second}) {
    bench->script_workload();
    bench->script_nsys_report();
    bench->script_ncu_report();
  }
  // Catch2's assertions are not thread-safe: the threads only run, the checks come after the joins.
  std::optional<Result<RunSummary>> first_summary;
  std::optional<Result<RunSummary>> second_summary;
  auto run_on = [](Bench& bench, std::optional<Result<RunSummary>>& into) {
    DeepProfiler profiler(bench.config, bench.runner, bench.clock, {}, bench.environment);
    into = profiler.run();
  };
  std::thread first_thread(run_on, std::ref(first), std::ref(first_summary));
  std::thread second_thread(run_on, std::ref(second), std::ref(second_summary));
  first_thread.join();
  second_thread.join();

  for (auto [bench, other, summary] : {std::tuple{&first, &second, &first_summary},
                                       std::tuple{&second, &first, &second_summary}}) {
    REQUIRE(summary->has_value());
    const Result<RunSummary>& result = summary->value();
    REQUIRE(result.has_value());
    CHECK(result.value().outcome == RunOutcome::ok);
    const RunManifest manifest = bench->manifest();
    CHECK(manifest.status == RunStatus::ok);
    for (const char* file : {"run.json", "env.json", "nsys/cmd.txt", "ncu/raw.csv", "deep-profile.log"}) {
      INFO(bench->main() / file);
      CHECK(fs::exists(bench->main() / file));
    }
    const std::string log = read_file(bench->main() / "deep-profile.log");
    CHECK(log.find("run directory " + bench->main().string()) != std::string::npos);
    CHECK(log.find(other->main().string()) == std::string::npos);
    // One "stage started" line per stage: a log shared by both runs would hold two of each.
    std::size_t started = 0;
    for (std::size_t at = log.find("stage started: "); at != std::string::npos; at = log.find("stage started: ", at + 1))
      ++started;
    CHECK(started == deep_profile_stage_names().size());
  }
}

TEST_CASE("ncu plan: rows that meet none of the planned launches fail the stage instead of reading ok", "[issue33]") {
  Bench bench;
  bench.config.ncu.plan = NcuPlanMode::per_kernel;
  bench.runner.on(command_is("ncu", {"--help"}),
                  FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_help.txt")));
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  // Every export holds one row of a kernel the plan never named: ncu profiled something else every time.
  const std::vector<std::string> recorded = fixture_lines("h100-nsight-2025.3/ncu/nc1_raw_base.csv");
  const std::string kernel = "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT";
  std::vector<std::string> unplanned(recorded.begin(), recorded.begin() + 2);
  for (auto line = recorded.begin() + 2; line != recorded.end(); ++line) {
    if (line->find(kernel) == std::string::npos) continue;
    unplanned.push_back(*line);
    unplanned.back().replace(unplanned.back().find(kernel), kernel.size(), "unplanned_kernel_of_another_library");
    break;
  }
  REQUIRE(unplanned.size() == 3);
  bench.runner.on_first(command_is("ncu", {"--import"}), FakeAnswer::printing(unplanned));
  const RunSummary summary = bench.run();
  const RunManifest manifest = bench.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  INFO(ncu.reason);
  CHECK(ncu.status == StageStatus::failed);
  CHECK_THAT(ncu.reason, Catch::Contains("ncu's rows meet none of the") && Catch::Contains("planned launches"));
  CHECK(summary.outcome == RunOutcome::incomplete);
  CHECK(exit_code_for(summary.outcome) == exit_incomplete);
}

namespace {

// The plan.json of a planned run whose nsys export is the recorded H200 serving window with ANALYSIS_DETAILS
// (start-up 7.17 s to its first decode_batch kernel), after `cost` was left in the runs root.
boost::json::object plan_with_recorded_start_up(const std::string& cost) {
  Bench bench;
  script_planned_bench(bench);
  bench.config.nsys.capture_range = NsysCaptureRange::none;
  bench.config.run.stage = "decode_batch";
  bench.config.ncu.nvtx_include = {"decode_batch/"};
  bench.script_nsys_report(false);
  bench.script_ncu_report();
  bench.runner.on_first(command_is("nsys", {"export"}), FakeAnswer::exiting(0).doing([](const ProcessSpec& spec) {
    fs::copy_file(data_path("serving/serving_nested_startup_h200.sqlite"), argument_after(spec, "--output"),
                  fs::copy_options::overwrite_existing);
  }));
  fs::create_directories(bench.temp / "runs");
  write_file(bench.temp / "runs/ncu-launch-cost.json", cost);
  bench.run();
  return boost::json::parse(read_file(bench.main() / "ncu/plan.json")).as_object();
}

}  // namespace

TEST_CASE("ncu plan: ncu's measured start-up overhead is taken only from a run of the same command") {
  // The bench's workload is `workload --steps 2`; the runs root says another run measured 3 s over the capture's
  // start-up (7.172982471 s, sqlite3 over the export).
  const std::string measured = R"({"schema":"llmprof.ncu_launch_cost/1","seconds_per_launch":0.5,"set":"llmprof",)"
                               R"("run":"r0","start_up_overhead_s":3.0,"workload":")";
  SECTION("the same command: its 3 s") {
    const auto plan = plan_with_recorded_start_up(measured + R"(workload --steps 2"})");
    CHECK(plan.at("start_up_seconds").as_double() == Approx(7.172982471));
    CHECK_THAT(std::string(plan.at("seconds_per_pass_source").as_string()),
               Catch::StartsWith("start-up to the stage 7.17 s by the nsys capture's clock + 3 s of ncu's (measured by "
                                 "run r0 of this command)"));
  }
  SECTION("another command: the configuration's figures, neither of its own (ncu.start_up_overhead_s is 3.5 s)") {
    const auto plan = plan_with_recorded_start_up(measured + R"(python3 serve.py"})");
    CHECK_THAT(std::string(plan.at("seconds_per_pass_source").as_string()),
               Catch::StartsWith("start-up to the stage 7.17 s by the nsys capture's clock + 3.5 s of ncu's "
                                 "(ncu.start_up_overhead_s)"));
    // ncu.seconds_per_launch is 0: the default set's own figure (pipeline/ncu_sets.cpp), not yet measured.
    CHECK(NcuConfig{}.seconds_per_launch == 0);
    CHECK(plan.at("seconds_per_launch").as_double() == 0.24);
    CHECK_THAT(std::string(plan.at("seconds_per_launch_source").as_string()),
               Catch::StartsWith("ncu.set llmprof: 6 replay passes and 0.24 s a launch, measured on the H100"));
  }
  SECTION("the same command measured under another set: not this set's figure") {
    const auto plan = plan_with_recorded_start_up(
        R"({"schema":"llmprof.ncu_launch_cost/2","entries":[)"
        R"({"set":"roofline","workload":"workload --steps 2","run":"r1","seconds_per_launch":0.9,"start_up_overhead_s":3.0}]})");
    CHECK(plan.at("seconds_per_launch").as_double() == 0.24);
    CHECK_THAT(std::string(plan.at("seconds_per_launch_source").as_string()), Catch::StartsWith("ncu.set llmprof: "));
  }
  SECTION("schema 2: this command's own cost per launch, not the last run's of another command") {
    const auto plan = plan_with_recorded_start_up(
        R"({"schema":"llmprof.ncu_launch_cost/2","entries":[)"
        R"({"set":"llmprof","workload":"workload --steps 2","run":"r1","seconds_per_launch":0.9,"start_up_overhead_s":3.0},)"
        R"({"set":"llmprof","workload":"python3 serve.py","run":"r2","seconds_per_launch":0.6,"start_up_overhead_s":12.0}]})");
    CHECK(plan.at("seconds_per_launch").as_double() == 0.9);
    CHECK(plan.at("seconds_per_launch_source").as_string() == "measured by run r1 of this command");
    CHECK_THAT(std::string(plan.at("seconds_per_pass_source").as_string()),
               Catch::StartsWith("start-up to the stage 7.17 s by the nsys capture's clock + 3 s of ncu's (measured by "
                                 "run r1 of this command)"));
  }
}

TEST_CASE("ncu launch cost record: per set and command, bad entries and files are not figures") {
  TempDir temp;
  const fs::path file = temp.path() / "ncu-launch-cost.json";
  using llmprof::detail::find_ncu_launch_cost;
  using llmprof::detail::NcuLaunchCost;
  using llmprof::detail::record_ncu_launch_cost;
  CHECK_FALSE(find_ncu_launch_cost(file, "roofline", "a"));  // no file
  REQUIRE(record_ncu_launch_cost(file, NcuLaunchCost{"roofline", "a", "r1", 0.6, 12.0}));
  REQUIRE(record_ncu_launch_cost(file, NcuLaunchCost{"roofline", "b", "r2", 0.9, 3.0}));
  REQUIRE(record_ncu_launch_cost(file, NcuLaunchCost{"full", "a", "r3", 4.0, 20.0}));
  SECTION("each command its own figures") {
    const auto a = find_ncu_launch_cost(file, "roofline", "a");
    REQUIRE(a);
    CHECK(a->seconds_per_launch == 0.6);
    CHECK(a->start_up_overhead_s == 12.0);
    const auto b = find_ncu_launch_cost(file, "roofline", "b");
    REQUIRE(b);
    CHECK(b->seconds_per_launch == 0.9);
    CHECK(b->start_up_overhead_s == 3.0);
    CHECK(find_ncu_launch_cost(file, "full", "a")->seconds_per_launch == 4.0);
  }
  SECTION("a command or set without an entry has no figure: another workload's would mislead its plan") {
    CHECK_FALSE(find_ncu_launch_cost(file, "roofline", "c"));
    CHECK_FALSE(find_ncu_launch_cost(file, "detailed", "a"));
    CHECK_FALSE(find_ncu_launch_cost(file, "roofline", ""));
  }
  SECTION("a run of the same command replaces its entry and becomes the newest") {
    REQUIRE(record_ncu_launch_cost(file, NcuLaunchCost{"roofline", "a", "r4", 0.7, std::nullopt}));
    const auto a = find_ncu_launch_cost(file, "roofline", "a");
    REQUIRE(a);
    CHECK(a->seconds_per_launch == 0.7);
    CHECK_FALSE(a->start_up_overhead_s);  // this run measured none: the configuration's, not r1's stale one
    CHECK(a->source == "measured by run r4 of this command");
    CHECK(find_ncu_launch_cost(file, "roofline", "b")->seconds_per_launch == 0.9);
    const auto document = boost::json::parse(read_file(file)).as_object();
    CHECK(document.at("entries").as_array().size() == 3);
  }
  SECTION("the 64 newest entries are kept") {
    for (int i = 0; i < 70; ++i)
      REQUIRE(record_ncu_launch_cost(file, NcuLaunchCost{"roofline", "w" + std::to_string(i), "r", 1.0, 1.0}));
    const auto document = boost::json::parse(read_file(file)).as_object();
    CHECK(document.at("entries").as_array().size() == 64);
    CHECK_FALSE(find_ncu_launch_cost(file, "roofline", "w5"));  // the oldest nine dropped: a, b, full/a, w0..w5
    CHECK(find_ncu_launch_cost(file, "roofline", "w6")->start_up_overhead_s == 1.0);
  }
  SECTION("entries that plan nothing are skipped; an unreadable file is no figure and is rewritten") {
    // The usable entry comes first: were a later, broken one taken, the newest would win.
    write_file(file, R"({"schema":"llmprof.ncu_launch_cost/2","entries":[)"
                     R"({"set":"roofline","workload":"a","run":"r1","seconds_per_launch":2.0,"start_up_overhead_s":4.0},)"
                     R"({"set":"roofline","workload":"a","run":"r2","seconds_per_launch":0},)"
                     R"({"set":"roofline","workload":"a","run":"r3","seconds_per_launch":"fast"},)"
                     R"({"workload":"a","run":"r4","seconds_per_launch":1.0},)"
                     R"({"set":"roofline","workload":"b","run":"r5","seconds_per_launch":3.0,"start_up_overhead_s":-1}]})");
    const auto a = find_ncu_launch_cost(file, "roofline", "a");
    REQUIRE(a);
    CHECK(a->seconds_per_launch == 2.0);
    CHECK(a->start_up_overhead_s == 4.0);
    CHECK(a->source == "measured by run r1 of this command");
    const auto b = find_ncu_launch_cost(file, "roofline", "b");  // its cost stands, the negative overhead does not
    REQUIRE(b);
    CHECK(b->seconds_per_launch == 3.0);
    CHECK_FALSE(b->start_up_overhead_s);
    write_file(file, "{not json");
    CHECK_FALSE(find_ncu_launch_cost(file, "roofline", "a"));
    write_file(file, R"({"schema":"llmprof.ncu_launch_cost/9","entries":[]})");
    CHECK_FALSE(find_ncu_launch_cost(file, "roofline", "a"));
    REQUIRE(record_ncu_launch_cost(file, NcuLaunchCost{"roofline", "a", "r5", 0.5, 2.0}));
    CHECK(find_ncu_launch_cost(file, "roofline", "a")->seconds_per_launch == 0.5);
  }
}

TEST_CASE("a harness log sink that throws is reported once, the run goes on and run.json closes", "[logging]") {
  Bench bench;
  bench.script_workload();
  bench.script_nsys_report();
  bench.script_ncu_report();
  std::size_t calls = 0;
  set_log_sink(
      [&calls](const LogRecord&) {
        ++calls;
        throw std::runtime_error("the harness's logger is down");
      },
      LogLevel::debug);
  auto summary = DeepProfiler(bench.config, bench.runner, bench.clock, {}, bench.environment).run();
  set_log_sink({});
  REQUIRE(summary.has_value());
  CHECK(summary->outcome == RunOutcome::ok);
  CHECK(bench.manifest().status == RunStatus::ok);
  CHECK(calls > 1);  // it was called again after it threw: the run did not stop logging to it
  const std::string log = read_file(bench.main() / "deep-profile.log");
  const std::string report = "the harness's log sink (set_log_sink) threw: the harness's logger is down";
  const auto first = log.find(report);
  REQUIRE(first != std::string::npos);
  CHECK(log.find(report, first + 1) == std::string::npos);  // once, although it threw on every line
}
