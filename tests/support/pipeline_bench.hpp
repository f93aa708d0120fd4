// The pipeline on a scripted machine: fake nsys/ncu executables on a private PATH that the FakeProcessRunner
// answers for with recorded H100 outputs, manual time, and helpers to find what was run. Shared by the
// pipeline's unit tests (deep_profiler_test.cpp, run_resume_test.cpp).
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "fake_process_runner.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/nsys_stats.hpp"
#include "run_manifest_reading.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

inline std::vector<std::string> fixture_lines(const std::string& relative) {
  std::istringstream text(read_file(data_path(relative)));
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  return lines;
}

inline void make_executable(const std::filesystem::path& path) {
  write_file(path, "#!/bin/sh\nexit 99\n");  // never run: the fake runner answers instead
  ::chmod(path.c_str(), 0755);
}

inline std::string argument_after(const ProcessSpec& spec, const std::string& flag) {
  for (std::size_t i = 1; i + 1 < spec.argv.size(); ++i) {
    if (spec.argv[i] == flag) return spec.argv[i + 1];
  }
  return {};
}

inline bool has_argument(const std::vector<std::string>& argv, const std::string& prefix) {
  return std::any_of(argv.begin(), argv.end(), [&](const auto& a) { return a.rfind(prefix, 0) == 0; });
}

inline FakeMatcher profile_with(bool gated) {
  return [gated](const ProcessSpec& spec) {
    return nsys_capture()(spec) && has_argument(spec.argv, "--capture-range=nvtx") == gated;
  };
}

inline FakeMatcher ncu_profile(bool filtered) {
  return [filtered](const ProcessSpec& spec) {
    return command_is("ncu")(spec) && argv_contains("-o")(spec) && argv_contains("--kernel-name")(spec) == filtered;
  };
}

// A scripted machine: fake nsys/ncu files on a private PATH, recorded outputs for every tool.
struct Bench {
  TempDir temp;
  FakeProcessRunner runner;
  ManualClock clock;
  DeepProfileConfig config;
  DeepProfilerEnvironment environment;
  std::vector<ProgressEvent> events;

  explicit Bench(bool with_nsys = true) {
    init_logging({LogLevel::error, true, nullptr});
    const std::filesystem::path bin = temp / "bin";
    if (with_nsys) make_executable(bin / "nsys");
    make_executable(bin / "ncu");
    environment.path_variable = bin.string();
    environment.use_default_tool_locations = false;
    config.run.runs_root = temp / "runs";
    config.run.run_id = "r1";
    config.run.min_free_space_gb = 0;
    config.workload.argv = {"workload", "--steps", "2"};
    script_tools();
  }

  std::filesystem::path main() const { return temp.path() / "runs" / "r1"; }

  void script_tools() {
    runner.on(command_is("nsys", {"--version"}),
              FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/nsys_version.txt")));
    runner.on(command_is("nsys", {"status"}),
              FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/nsys_status_environment.txt")));
    runner.on(command_is("ncu", {"--version"}),
              FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_version.txt")));
    runner.on(command_is("ncu", {"--list-sections"}),
              FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_sections.txt")));
    runner.on(command_is("ncu", {"--list-sets"}),
              FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_sets.txt")));
    runner.on(command_is("nvidia-smi"),
              FakeAnswer::failing_to_start(make_error(ErrorCode::not_found, "nvidia-smi not found")));
    // Before the generic `nsys stats` rule (the first matching rule answers).
    runner.on(command_is("nsys", {"stats", "--help-reports"}),
              FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/nsys_reports.txt")));
    runner.on(command_is("nsys", {"stats"}), FakeAnswer::exiting(0).doing([](const ProcessSpec& spec) {
      const std::filesystem::path prefix = argument_after(spec, "--output");
      for (const auto& report : nsys_stats_report_names()) {
        const std::filesystem::path fixture = data_path("h100-nsight-2025.3/nsys/ns1_st_" + report + ".csv");
        if (std::filesystem::exists(fixture))
          std::filesystem::copy_file(fixture, nsys_stats_report_path(prefix, report));
      }
    }));
    runner.on(command_is("nsys", {"export"}), FakeAnswer::exiting(0));  // export_sqlite is on by default
    runner.on(command_is("ncu", {"--import"}),
              FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/ncu/nc1_raw_base.csv")));
  }

  void script_workload(std::vector<std::string> ranges = {"prefill", "decode"}) {
    runner.on(command_is("workload"), FakeAnswer::printing({"done"}).doing([ranges](const ProcessSpec& spec) {
      auto file = spec.environment.find("LLMPROF_METRICS_FILE");
      if (file == spec.environment.end() || !file->second) return;
      std::string names;
      for (const auto& name : ranges) names += (names.empty() ? "\"" : ",\"") + name + "\"";
      // The recorded decode run's metrics (the nsys/ncu fixtures come from the same run), with our range names.
      std::string metrics = read_file(data_path("analysis/workload_metrics_decode.json"));
      const std::string recorded = "\"nvtx_ranges\": [\"prefill\", \"decode\"]";
      metrics.replace(metrics.find(recorded), recorded.size(), "\"nvtx_ranges\": [" + names + "]");
      write_file(*file->second, metrics);
    }));
  }

  void script_nsys_report(bool gated = true) {
    runner.on(
        profile_with(gated),
        FakeAnswer::printing({"Collecting data...", "Generated:", "\t" + (main() / "nsys/profile.nsys-rep").string()})
            .writing((main() / "nsys/profile.nsys-rep").string(), "report"));
  }

  void script_ncu_report(bool filtered = true) {
    runner.on(ncu_profile(filtered),
              FakeAnswer::printing({"==PROF== Connected to process 1 (/bin/workload)",
                                    "==PROF== Profiling \"reduce_kernel\" - 0 (1/2): 0%....50%....100% - 17 passes",
                                    "==PROF== Profiling \"gemm\" - 1 (2/2): 0%....50%....100% - 17 passes",
                                    "==PROF== Disconnected from process 1",
                                    "==PROF== Report: " + (main() / "ncu/profile.ncu-rep").string()})
                  .writing("{output}.ncu-rep", "ncu report"));
  }

  RunSummary run() {
    DeepProfiler profiler(
        config, runner, clock, [this](const ProgressEvent& event) { events.push_back(event); }, environment);
    auto summary = profiler.run();
    REQUIRE(summary.has_value());
    return summary.value();
  }

  // DeepProfiler::resume of this bench's run directory, with the bench's configuration as it is now.
  Result<RunSummary> resume() {
    DeepProfiler profiler(
        config, runner, clock, [this](const ProgressEvent& event) { events.push_back(event); }, environment);
    return profiler.resume(main());
  }

  RunManifest manifest() const { return manifest_of(main()); }

  std::vector<std::vector<std::string>> runs_of(const FakeMatcher& matcher) const {
    std::vector<std::vector<std::string>> found;
    for (const auto& spec : runner.runs()) {
      if (matcher(spec)) found.push_back(spec.argv);
    }
    return found;
  }
};

// A per-kernel bench whose ncu has --filter-mode per-launch-config.
inline void script_planned_bench(Bench& bench) {
  bench.config.ncu.plan = NcuPlanMode::per_kernel;
  bench.runner.on(command_is("ncu", {"--help"}),
                  FakeAnswer::printing(fixture_lines("h100-nsight-2025.3/cli/ncu_help.txt")));
  bench.script_workload();
  bench.script_nsys_report();
}

}  // namespace llmprof::testing
