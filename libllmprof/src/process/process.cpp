// ProcessOutcome::describe() and the system ProcessRunner (the engine is in process_session.cpp,
// the pre-fork checks and find_executable() in process_launch.cpp).
#include "llmprof/process.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>

#include "process/process_group.hpp"
#include "process/signal_fallback.hpp"
#include "process/process_session.hpp"

namespace llmprof {
namespace {

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGCHLD:
      return "SIGCHLD";
    case SIGCONT:
      return "SIGCONT";
    case SIGSTOP:
      return "SIGSTOP";
    case SIGTSTP:
      return "SIGTSTP";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSYS:
      return "SIGSYS";
    default:
      return nullptr;
  }
}

// "30s", "1.5s", "250ms", "2min", "1h" (whole units where the value is whole).
std::string format_duration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms % 3'600'000 == 0 && ms != 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0 && ms != 0) return std::to_string(ms / 60'000) + "min";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  if (ms < 1000) return std::to_string(ms) + "ms";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", static_cast<double>(ms) / 1000.0);
  return std::string(text) + "s";
}

class SystemProcessRunner final : public ProcessRunner {
 public:
  // Grandchildren whose parent exits come back to us instead of init, so a timeout or a stop can
  // still find and kill them (see DescendantTracker).
  SystemProcessRunner() { detail::become_child_subreaper(); }
  Result<ProcessOutcome> run(const ProcessSpec& spec) override {
    // A SIGINT/SIGTERM the host left at its default action stops the child instead of orphaning its tree
    // (signal_fallback.hpp); the host still ends by it once the outermost library call returns.
    const detail::SignalFallbackScope signals;
    if (stop_requested_.load() || detail::fallback_signal_received() != 0) {
      ProcessOutcome not_started;  // exited = false, no signal: nothing ran
      not_started.interrupted = true;
      not_started.timeout = spec.timeout;
      return not_started;
    }
    return detail::run_child_process(spec, stop_requested_);
  }
  void request_stop() override { stop_requested_.store(true); }
  void reset_stop() override { stop_requested_.store(false); }

 private:
  // Lock-free, so request_stop() may even be called from a signal handler.
  std::atomic<bool> stop_requested_{false};
  static_assert(std::atomic<bool>::is_always_lock_free);
};

}  // namespace

std::string ProcessOutcome::describe() const {
  std::string text;
  if (exited) {
    text = "exit code " + std::to_string(exit_code);
  } else if (signal) {
    text = "killed by signal " + std::to_string(*signal);
    if (const char* name = signal_name(*signal)) text += std::string(" (") + name + ")";
    if (core_dumped) text += ", core dumped";
  } else if (interrupted) {
    return "not started: a stop had been requested";
  } else {
    text = "ended with an unknown status";
  }
  if (timed_out) {
    text += timeout ? " after timeout of " + format_duration(*timeout) : std::string(" after its timeout");
  } else if (interrupted) {
    text += " after a stop request";
  }
  if (descendants_ended_at_limit)
    text += ", after its application was ended at its limit";
  else if (descendants_ended)
    text += ", after its application was ended on request";
  return text;
}

std::unique_ptr<ProcessRunner> make_system_process_runner() { return std::make_unique<SystemProcessRunner>(); }

}  // namespace llmprof
