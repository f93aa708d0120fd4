// ProcessRunner: how libllmprof starts every child process (profilers, workloads, importers).
//
// An interface so that the pipeline can be tested with fake tools (tests/support/fake_process_runner.hpp), and
// so that a harness can plug in its own launcher (a job scheduler, a container). Commands are argv
// vectors, never shell strings.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/export.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

// A request, made while a child runs (from its line callback or another thread), to end the application the child
// profiles but not the child itself: SIGTERM to the application's processes, SIGKILL to those left after the
// spec's descendants_kill_grace. The child goes on and exits by itself. Made for a profiler that writes its
// report only when it outlives its application: on the H100 (ncu 2025.3.1) SIGTERM to the workload once the
// wanted launches were profiled ended an ncu pass at 25.6 s instead of 49.8 s, and ncu still wrote its report.
//
// The application is the whole tree the profiler started: its direct child (the application's root), everything
// that root started, and what left it (setsid, or re-parented to this process as the subreaper when its parent
// died; a spec that leaves survivors running leaves those too, targets aside: ProcessSpec::end_survivors_after). A serving engine's front process never touches CUDA, so the profiler never names it, yet it blocks on
// its worker (a queue, a pipe, a socket, a join) and the profiler waits for it: ending the worker alone left
// such passes running until an outer timeout. The root is found from the targets (the processes the profiler
// names: ncu's "==PROF== Connected to process PID" lines): their ancestor just below the deepest process that
// runs `profiler_name` (by executable, or the script an interpreter runs; on a target's path, the child where none
// does). Without a target, every child of that process (none while no process runs it yet: a launcher still
// starting ncu). While the ending lasts, what the application starts gets the same signals.
//
// Never signalled: the child, a process running `profiler_name` or the tool's executable
// (ProcessSpec::is_tool_executable), their ancestors (ncu.path a launcher: Debian's usr/lib/nsight-compute/ncu
// script, CUDA's bin/ncu script, `sudo ncu` run the real ncu as the child's child; ending it would lose the
// report), and any process started before the child (a daemon an earlier stage left, re-parented to this
// process).
class LLMPROF_API DescendantEnding {
 public:
  // `profiler_name`: the profiler's program ("ncu"); empty: the child itself is the profiler.
  explicit DescendantEnding(std::string profiler_name = {}) : profiler_name_(std::move(profiler_name)) {}
  void request() noexcept { requested_.store(true); }
  bool requested() const noexcept { return requested_.load(); }
  const std::string& profiler_name() const noexcept { return profiler_name_; }
  // A process the child works on (its pid); safe from the line callbacks and from other threads.
  void add_target(int pid) {
    std::lock_guard lock(mutex_);
    targets_.push_back(pid);
  }
  std::vector<int> targets() const {
    std::lock_guard lock(mutex_);
    return targets_;
  }

 private:
  const std::string profiler_name_;
  std::atomic<bool> requested_{false};
  mutable std::mutex mutex_;
  std::vector<int> targets_;
};

struct LLMPROF_API ProcessSpec {
  // argv[0] is a path (contains a '/'; a relative one is taken from the parent's current directory,
  // not from working_directory) or a bare name looked up on PATH: the PATH given in `environment`
  // when it overrides PATH, else the parent's. The child receives the resolved path as its argv[0].
  std::vector<std::string> argv;
  // Variables to set (or override) on top of the parent's environment; an empty optional unsets.
  std::map<std::string, std::optional<std::string>> environment;
  std::filesystem::path working_directory;  // empty: the parent's
  // Where stdout/stderr go, when set (created or truncated). Both may name the same file.
  // A stream with neither a file nor a callback is inherited from the parent (its terminal).
  // stdin is always /dev/null: a child in its own process group must never read the terminal.
  std::filesystem::path stdout_file;
  std::filesystem::path stderr_file;
  // Called with each line, without its terminator: '\n', '\r' (the progress lines of ncu and nsys)
  // and "\r\n" each end one line; a last line without a terminator is delivered too. Lines longer than
  // 1 MiB are delivered in 1 MiB pieces. A file and a callback may be set for the same stream.
  // The system runner calls them on the thread that called run(), one at a time, in order per
  // stream; a custom runner may use a reader thread, so keep them thread-agnostic (no thread-locals).
  std::function<void(const std::string&)> on_stdout_line;
  std::function<void(const std::string&)> on_stderr_line;
  // After this long the whole process tree (the child and everything it started) is killed.
  std::optional<std::chrono::milliseconds> timeout;
  // Grace period between SIGTERM and SIGKILL when stopping the tree.
  std::chrono::milliseconds kill_grace{2000};
  // Set: request() on it ends the child's descendants (see DescendantEnding); nullptr: never.
  std::shared_ptr<DescendantEnding> end_descendants;
  // Between the descendants' SIGTERM and their SIGKILL.
  std::chrono::milliseconds descendants_kill_grace{10000};
  // Set with end_descendants: this long after the start the runner requests the ending itself, if nothing did
  // (a bound on a run whose own request may never come; ProcessOutcome::descendants_ended_at_limit). Unlike
  // `timeout`, the child lives on to write what it gathered.
  std::optional<std::chrono::milliseconds> end_descendants_after;
  // Set: after a normal exit, the child's descendants still running (ProcessOutcome::surviving_descendants) get
  // SIGTERM, and SIGKILL when they outlive this grace. Unset: they are reported and left running. Only the
  // child's own tree is touched: never a process that existed before the child started. Unset, an ending
  // (end_descendants) also leaves the processes that left the application and are not among its targets.
  std::optional<std::chrono::milliseconds> end_survivors_after;
  // Set: a descendant whose executable it accepts is the child tool's own (a profiler's agent that finishes the
  // report after the tool's command line exits: nsys 2022.4's `nsys --start-agent`). Such survivors are listed in
  // ProcessOutcome::tool_survivors and never ended; only the others (the workload's) are. Unset: every survivor
  // is the child's workload's.
  std::function<bool(const std::filesystem::path& executable)> is_tool_executable;
};

struct LLMPROF_API ProcessOutcome {
  bool exited = false;  // exited normally; exit_code is valid
  int exit_code = -1;
  std::optional<int> signal;  // terminated by this signal (e.g. 9 after a timeout)
  bool core_dumped = false;   // with signal: the kernel wrote a core dump
  bool timed_out = false;     // killed by us because the timeout passed
  // Killed by us because stop was requested (Ctrl-C); also set, with exited = false and no
  // signal, when the run was never started because a stop had already been requested.
  bool interrupted = false;
  std::optional<std::chrono::milliseconds> timeout;  // the limit that applied (for messages)
  std::chrono::nanoseconds wall_time{0};
  // The child's descendants were ended on request (ProcessSpec::end_descendants) while it ran; its exit
  // code may then be the one it reports for its ended application.
  bool descendants_ended = false;
  // ...because ProcessSpec::end_descendants_after passed before anything else requested it.
  bool descendants_ended_at_limit = false;
  // "pid (name)" of the application's processes that outlived the SIGTERM and its grace and got SIGKILL.
  std::vector<std::string> descendants_killed;
  // After a normal exit: "pid (name)" of processes the child started that are still running (a
  // background job, a setsid daemon). They are left alone but reported; on a timeout or a stop the
  // whole tree, these included, is killed.
  std::vector<std::string> surviving_descendants;
  // With ProcessSpec::end_survivors_after: those survivors were sent SIGTERM (then SIGKILL where needed);
  // `survivors_killed` names the ones that outlived the grace and got SIGKILL.
  bool survivors_ended = false;
  std::vector<std::string> survivors_killed;
  // After a normal exit: "pid (name)" of the tool's own processes still running (ProcessSpec::is_tool_executable);
  // never ended, never in surviving_descendants.
  std::vector<std::string> tool_survivors;

  bool succeeded() const noexcept { return exited && exit_code == 0 && !timed_out && !interrupted; }
  // "exit code 3", "killed by signal 9 (SIGKILL) after timeout of 30s", ...
  std::string describe() const;
};

// The library calls run() from several threads at once (the probe runs its tool listings side by side), so an
// implementation must allow concurrent calls, as make_system_process_runner's does.
class LLMPROF_API ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs to completion (or timeout). An Error only when the process could not be started at all
  // (executable missing or not executable, working directory missing, output file unwritable);
  // a non-zero exit is a ProcessOutcome, not an Error.
  virtual Result<ProcessOutcome> run(const ProcessSpec& spec) = 0;
  // Asks every running child tree to stop (SIGTERM, then SIGKILL after the grace); safe to call
  // from a signal-handling thread. Runs in progress return with interrupted = true.
  // The request is sticky: runs started afterwards return interrupted = true at once without
  // starting anything, until reset_stop() is called. The system runner only sets an atomic flag
  // here, so it is even async-signal-safe; running children notice it within ~10 ms.
  virtual void request_stop() = 0;
  // Forgets an earlier request_stop() so that new runs start again (e.g. a harness that goes on
  // with its next benchmark after one was interrupted). Runs already interrupted stay interrupted.
  virtual void reset_stop() {}
};

// The real runner (Boost.Process v2 underneath). Each child gets its own process group so that a
// timeout or a stop kills the profiler and the workload it launched, not just the profiler.
// Because of that the terminal's Ctrl-C reaches only the parent: the parent must catch SIGINT and
// call request_stop(). Processes left in the group after the child exits normally are not killed;
// their output is read until they close it or for at most 0.5 s after the child's exit.
// One runner may serve several threads; each run() is independent.
LLMPROF_API std::unique_ptr<ProcessRunner> make_system_process_runner();

// Searches a colon-separated directory list (empty: this process's PATH) for an executable regular
// file called `name`; a name containing '/' is checked as it is. Empty when not found.
LLMPROF_API std::filesystem::path find_executable(const std::string& name, const std::string& path_variable = {});

}  // namespace llmprof
