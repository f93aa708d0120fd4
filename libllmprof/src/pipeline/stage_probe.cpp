// Stage "probe": finds nsys and ncu, records env.json and sections.txt, gives a readiness verdict,
// and checks the free space on the runs root before anything is profiled.
#include <sstream>

#include "llmprof/logging.hpp"
#include "llmprof/tool_probe.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/disk_space.hpp"
#include "rundir/run_records.hpp"

namespace llmprof::detail {

ProbeOptions probe_options(const PipelineRun& run) {
  ProbeOptions options;
  options.nsys_path = run.config.nsys.path;
  options.ncu_path = run.config.ncu.path;
  options.path_variable = run.environment.path_variable;
  options.extra_search_roots = run.environment.extra_tool_search_roots;
  options.use_default_locations = run.environment.use_default_tool_locations;
  return options;
}

namespace {

std::string verdict_text(const ProbeVerdict& verdict, const NsysInfo& nsys, const NcuInfo& ncu) {
  std::ostringstream text;
  text << "readiness: " << to_string(verdict.readiness) << "\n";
  text << "nsys: " << (nsys.found ? nsys.path.string() : "not found")
       << (nsys.version ? " (" + nsys.version->to_string() + ")" : "") << "\n";
  text << "ncu: " << (ncu.found ? ncu.path.string() : "not found")
       << (ncu.version ? " (" + ncu.version->to_string() + ")" : "") << "\n";
  for (std::size_t i = 0; i < verdict.reasons.size(); ++i) {
    text << "problem: " << verdict.reasons[i] << "\n";
    if (i < verdict.fixes.size() && !verdict.fixes[i].empty()) text << "  fix: " << verdict.fixes[i] << "\n";
  }
  for (const auto& skipped : verdict.skipped) text << "will skip: " << skipped << "\n";
  for (const auto& note : verdict.notes) text << "note: " << note << "\n";
  for (const auto& ability : describe_abilities(nsys, ncu)) {
    text << (ability.able ? "can: " : "cannot: ") << ability.what
         << (ability.detail.empty() ? "" : " (" + ability.detail + ")") << "\n";
  }
  return text.str();
}

// Profilers write gigabytes; refuse them (not the bare run) when the runs root is nearly full.
std::optional<std::string> check_free_space(PipelineRun& run) {
  auto available = available_disk_bytes(run.directory.path());
  if (!available) {
    run.warn(Stage::probe, available.error().describe());
    return std::nullopt;
  }
  const double free_gb = static_cast<double>(available.value()) / 1e9;
  if (free_gb < run.config.run.min_free_space_gb) {
    std::ostringstream why;
    why.precision(3);
    why << "only " << free_gb << " GB free on the file system of " << run.directory.path().parent_path().string()
        << ", below run.min_free_space_gb=" << run.config.run.min_free_space_gb
        << "; free some space, choose another run.runs_root, or lower run.min_free_space_gb";
    run.warn(Stage::probe, why.str());
    return why.str();
  }
  return std::nullopt;
}

}  // namespace

Staged<ProbeOutput> run_probe_stage(PipelineRun& run) {
  const ProbeOptions options = probe_options(run);
  ProbeOutput probe;
  ProbedTools tools = probe_tools(run.runner, options);
  probe.nsys = std::move(tools.nsys);
  probe.ncu = std::move(tools.ncu);
  probe.nvidia_driver = run.nvidia_driver();
  if (!probe.nvidia_driver.present) {
    run.say(Stage::probe, "no NVIDIA GPU here (" + probe.nvidia_driver.evidence +
                              "): the timeline and NVTX stage table can run, kernel-level stages need an NVIDIA GPU");
  }
  if (run.stopping()) return {StageResult::interrupted("interrupted while probing the tools"), std::move(probe)};
  StageReport& reported = run.stage_report(Stage::probe);
  if (probe.ncu.found && !probe.ncu.sections_listing.empty()) {
    if (auto written = run.directory.write_text(RunLayout::ncu_sections(), probe.ncu.sections_listing); written) {
      reported.artifacts.push_back(RunLayout::ncu_sections().string());
    } else {
      run.warn(Stage::probe, written.error().describe());
    }
  }
  const EnvironmentRecord environment = collect_environment(run.runner, probe_to_json(probe.nsys, probe.ncu, probe.nvidia_driver));
  if (auto written = run.directory.write_environment(environment); !written) {
    return {StageResult::failed("could not write env.json: " + written.error().describe()), std::move(probe)};
  }
  reported.artifacts.push_back(RunLayout::environment().string());
  const ProbeVerdict verdict = assess_readiness(probe.nsys, probe.ncu, probe.nvidia_driver);
  const std::string text = verdict_text(verdict, probe.nsys, probe.ncu);
  if (auto written = run.directory.write_text(RunLayout::probe_log(), text); written)
    reported.log_file = RunLayout::probe_log().string();
  run.say(Stage::probe, std::string("readiness: ") + to_string(verdict.readiness) +
                            (verdict.reasons.empty() ? "" : " (" + verdict.reasons.front() + ")"));
  for (const auto& reason : verdict.reasons) reported.warnings.push_back(reason);
  probe.low_disk_space = check_free_space(run);
  return {StageResult::ok(), std::move(probe)};
}

}  // namespace llmprof::detail
