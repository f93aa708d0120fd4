// ProcessRunner: how libllmprof starts every child process (profilers, workloads, importers).
//
// An interface so that the pipeline can be tested with fake tools, and so that a harness can plug in
// its own launcher (a job scheduler, a container). Commands are argv vectors, never shell strings.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is a path or a name looked up on PATH
  // Variables to set (or override) on top of the parent's environment; an empty optional unsets.
  std::map<std::string, std::optional<std::string>> environment;
  std::filesystem::path working_directory;  // empty: the parent's
  // Where stdout/stderr go, when set (created or truncated). Both may name the same file.
  std::filesystem::path stdout_file;
  std::filesystem::path stderr_file;
  // Called with each complete line (without the newline; '\r'-separated progress counts as a line).
  std::function<void(const std::string&)> on_stdout_line;
  std::function<void(const std::string&)> on_stderr_line;
  // After this long the whole process tree (the child and everything it started) is killed.
  std::optional<std::chrono::milliseconds> timeout;
  // Grace period between SIGTERM and SIGKILL when stopping the tree.
  std::chrono::milliseconds kill_grace{2000};
};

struct ProcessOutcome {
  bool exited = false;            // exited normally; exit_code is valid
  int exit_code = -1;
  std::optional<int> signal;      // terminated by this signal (e.g. 9 after a timeout)
  bool timed_out = false;         // killed by us because the timeout passed
  bool interrupted = false;       // killed by us because stop was requested (Ctrl-C)
  std::chrono::nanoseconds wall_time{0};

  bool succeeded() const noexcept { return exited && exit_code == 0 && !timed_out && !interrupted; }
  // "exit code 3", "killed by signal 9 (SIGKILL) after timeout of 30s", ...
  std::string describe() const;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs to completion (or timeout). An Error only when the process could not be started at all
  // (executable missing or not executable, working directory missing, output file unwritable);
  // a non-zero exit is a ProcessOutcome, not an Error.
  virtual Result<ProcessOutcome> run(const ProcessSpec& spec) = 0;
  // Asks every running child tree to stop (SIGTERM, then SIGKILL after the grace); safe to call
  // from a signal-handling thread. Runs in progress return with interrupted = true.
  virtual void request_stop() = 0;
};

// The real runner (Boost.Process v2 underneath). Each child gets its own process group so that a
// timeout or a stop kills the profiler and the workload it launched, not just the profiler.
std::unique_ptr<ProcessRunner> make_system_process_runner();

// Searches PATH (or the given list of directories) for an executable; empty when not found.
std::filesystem::path find_executable(const std::string& name, const std::string& path_variable);

}  // namespace llmprof
