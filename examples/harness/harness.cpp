// llmprof-harness -- WORKLOAD [ARGS...]: what a benchmark harness does with libllmprof, in one file.
//
// It probes the profilers, shows the nsys command it would run (built from the probe), runs the whole
// deep-profile pipeline on the workload, and prints each stage's GPU busy, MFU and MBU from the run's
// report model. Exit status: the run's, as `deep-profile run` documents it (0 ok or hardware-limited).
#include <llmprof/llmprof.hpp>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

// "12.3%", or why the figure is absent: the report withholds a figure it could not measure.
std::string percent(const std::optional<double>& fraction) {
  if (!fraction) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", *fraction * 100.0);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]) != "--") {
    std::cerr << "usage: llmprof-harness -- WORKLOAD [ARGS...]   (libllmprof " LLMPROF_VERSION_STRING ")\n";
    return 2;
  }
  const std::vector<std::string> workload(argv + 2, argv + argc);

  // The library is silent unless told where its lines go: here, warnings and errors into our own log.
  llmprof::set_log_sink(
      [](const llmprof::LogRecord& line) {
        std::cerr << "[llmprof " << llmprof::to_string(line.level) << "] " << line.channel << ": " << line.message
                  << "\n";
      },
      llmprof::LogLevel::warning);

  // What this machine can do: the tools, their versions, the driver.
  auto runner = llmprof::make_system_process_runner();
  const llmprof::ProbedTools tools = llmprof::probe_tools(*runner, {});  // nsys and ncu, side by side
  const llmprof::NsysInfo& nsys = tools.nsys;
  const llmprof::ProbeVerdict verdict = llmprof::assess_readiness(nsys, tools.ncu, llmprof::detect_nvidia_driver());
  std::cout << "readiness: " << llmprof::to_string(verdict.readiness) << "\n";
  for (const auto& reason : verdict.reasons) std::cout << "  " << reason << "\n";

  // A command built from the probe runs the nsys the probe found, not whatever `nsys` PATH names later.
  llmprof::NsysProfileOptions capture;
  capture.capture_range = llmprof::NsysCaptureRange::nvtx;
  capture.nvtx_capture = "decode";
  capture.output_base = "harness-timeline";
  capture.application = workload;
  const auto command = llmprof::NsysCommand::profile(nsys, capture);
  if (auto valid = command.validate(nsys); !valid) {
    std::cerr << "nsys command: " << valid.error().describe() << "\n";
  } else {
    std::cout << "nsys command: " << command.to_shell_string() << "\n";
  }

  // Every default is in DeepProfileConfig{}: no file is needed, only what differs.
  auto config = llmprof::load_config({{}, {"nsys.nvtx_capture=decode", "run.runs_root=harness-runs"}});
  if (!config) {
    std::cerr << "configuration: " << config.error().describe() << "\n";
    return llmprof::exit_code_for(config.error());
  }
  config->workload.argv = workload;

  llmprof::SystemClock clock;
  llmprof::DeepProfiler profiler(config.value(), *runner, clock, [](const llmprof::ProgressEvent& event) {
    if (event.kind == llmprof::ProgressEvent::Kind::stage_finished && event.status)
      std::cout << "  stage " << event.stage << ": " << llmprof::to_string(*event.status) << "\n";
  });
  // Ctrl-C and SIGTERM become a stop request: the run ends the processes it started, closes run.json as
  // "interrupted" and returns, and this harness exits 130 like `deep-profile run`. Without a watcher (or a handler
  // of its own) the library still ends its processes and closes run.json, then lets the signal end the harness.
  auto watcher = llmprof::StopSignalWatcher::start([&profiler](int) { profiler.request_stop(); });
  if (!watcher) std::cerr << "signals: " << watcher.error().describe() << " (Ctrl-C ends the harness after the run)\n";
  const auto summary = profiler.run();
  if (!summary) {
    std::cerr << "run: " << summary.error().describe() << "\n";
    return llmprof::exit_code_for(summary.error());
  }
  std::cout << "run directory: " << summary->main_directory.string() << "\n"
            << "outcome: " << llmprof::to_string(summary->outcome) << "\n";
  for (const auto& stage : summary->skipped_for_hardware) std::cout << "  skipped for lack of hardware: " << stage << "\n";
  // Stopped (Ctrl-C): run.json says how far it got; there are no figures to read back.
  if (summary->outcome == llmprof::RunOutcome::interrupted) return llmprof::exit_code_for(summary->outcome);

  // The figures, read back through the report model (analysis/report.json, run.json, env.json).
  const auto report = llmprof::load_run_report(summary->main_directory);
  if (!report) {
    std::cerr << "report: " << report.error().describe() << "\n";
    return llmprof::exit_code_for(report.error());
  }
  std::cout << "stage | GPU busy | MFU | MBU\n";
  for (const auto& stage : report->stages) {
    std::cout << stage.name << " | " << percent(stage.gpu_busy_fraction) << " | " << percent(stage.mfu) << " | "
              << percent(stage.mbu) << "\n";
  }
  return llmprof::exit_code_for(summary->outcome);
}
