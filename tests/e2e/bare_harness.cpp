// A harness as an author writes it who never thought of signals: no handler, no StopSignalWatcher, the library's
// DeepProfiler run in the main thread. tests/e2e/harness_signal_test.cpp sends it SIGINT while the workload runs.
//   llmprof-bare-harness RUNS_ROOT -- WORKLOAD [ARGS...]
#include <llmprof/llmprof.hpp>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4 || std::string(argv[2]) != "--") {
    std::cerr << "usage: llmprof-bare-harness RUNS_ROOT -- WORKLOAD [ARGS...]\n";
    return 2;
  }
  auto config = llmprof::load_config({{}, {"run.runs_root=" + std::string(argv[1])}});
  if (!config) return 2;
  config->workload.argv = std::vector<std::string>(argv + 3, argv + argc);
  auto runner = llmprof::make_system_process_runner();
  llmprof::SystemClock clock;
  llmprof::DeepProfiler profiler(config.value(), *runner, clock);
  const auto summary = profiler.run();
  if (!summary) return llmprof::exit_code_for(summary.error());
  return llmprof::exit_code_for(summary->outcome);
}
