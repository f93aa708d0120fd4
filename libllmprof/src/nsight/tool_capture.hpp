// Runs a short tool command through a ProcessRunner and keeps what it printed (probe, importer).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "llmprof/process.hpp"

namespace llmprof::detail {

struct CapturedRun {
  ProcessOutcome outcome;
  std::string stdout_text;
  std::string stderr_text;
  std::string combined() const {
    if (stderr_text.empty()) return stdout_text;
    if (stdout_text.empty()) return stderr_text;
    return stdout_text + (stdout_text.back() == '\n' ? "" : "\n") + stderr_text;
  }
};

// An Error only when the process could not be started; a non-zero exit is in outcome.
inline Result<CapturedRun> run_and_capture(ProcessRunner& runner, std::vector<std::string> argv,
                                           std::chrono::milliseconds timeout) {
  CapturedRun captured;
  std::mutex lock;  // the runner may call the two callbacks from different threads
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = timeout;
  spec.on_stdout_line = [&](const std::string& line) {
    std::lock_guard guard(lock);
    captured.stdout_text += line + "\n";
  };
  spec.on_stderr_line = [&](const std::string& line) {
    std::lock_guard guard(lock);
    captured.stderr_text += line + "\n";
  };
  auto outcome = runner.run(spec);
  if (!outcome) return outcome.error();
  captured.outcome = *outcome;
  return captured;
}

// "exit code 3", "killed by signal 9", "timed out": for messages, without needing process.cpp.
inline std::string describe_outcome(const ProcessOutcome& outcome) {
  if (outcome.timed_out) return "ran past its time limit and was killed";
  if (outcome.interrupted) return "was interrupted";
  if (outcome.exited) return "exit code " + std::to_string(outcome.exit_code);
  if (outcome.signal) return "killed by signal " + std::to_string(*outcome.signal);
  return "ended in an unknown way";
}

}  // namespace llmprof::detail
