// What SIGINT and SIGTERM do while the library runs children for a host that left them at their default action
// (a harness that never installed a handler nor a StopSignalWatcher).
//
// Left alone, the default action ends the host at once: its run.json stays "running", and whatever the children
// started keeps running under init (PR_SET_PDEATHSIG reaches the direct child only, and the workload's own
// children do not get it). While a SignalFallbackScope lives, such a signal becomes a stop request instead: every
// child session stops its tree as request_stop() would, the runs close their records, and when the last scope
// ends the signal is raised again with its default action, so the host still ends as it would have. A second
// signal before then does not wait: the running children's process groups get SIGKILL and the host ends at once.
// A host that handles the signals itself (StopSignalWatcher, its own handler, SIG_IGN) is left as it is.
#pragma once

#include <sys/types.h>

namespace llmprof::detail {

class SignalFallbackScope {
 public:
  SignalFallbackScope();
  ~SignalFallbackScope();  // the last one out restores the default actions and re-raises a signal that came
  SignalFallbackScope(const SignalFallbackScope&) = delete;
  SignalFallbackScope& operator=(const SignalFallbackScope&) = delete;
};

// The signal a fallback handler received (SIGINT or SIGTERM), 0 when none: a stop request for every run.
int fallback_signal_received() noexcept;

// The process groups of the children running now, for a second signal's SIGKILL (async-signal-safe).
void register_child_group(pid_t group) noexcept;
void unregister_child_group(pid_t group) noexcept;

}  // namespace llmprof::detail
