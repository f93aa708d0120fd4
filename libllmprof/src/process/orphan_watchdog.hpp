// What ends a run's processes when the host that started them dies without a word (SIGKILL, a crash, the OOM
// killer): a watchdog process forked from the host once, the first time the host starts a child.
//
// PR_SET_PDEATHSIG (child_setup.hpp) reaches the direct child only, and each child leads its own process group,
// so a SIGKILL of the host (or of the host's group: `timeout -s KILL`, a CI's job kill) used to leave what the
// child started (the workload under nsys or ncu, a serving engine's workers) running under init. The watchdog is
// told each child's group as it starts and ends, over a pipe whose write end only the host holds (close-on-exec),
// so the pipe's end-of-file is the host's death however it came. It then sends each group it still holds SIGTERM,
// and SIGKILL 5 s later to what is left, and exits. A host that ends normally has ended its children first, so the
// watchdog finds no group and exits at once.
//
// What it does not reach: a process that left its group (setsid, setpgid) is found and ended by the run's tree walk
// while the host lives (process_group.hpp), but not after the host's death, when nothing holds its pid any more.
#pragma once

#include <sys/types.h>

namespace llmprof::detail {

// Starts the watchdog if it is not running (once per host process; a fork() of the host starts none in its
// child); false when it could not be started (no pipe, no fork), in which case children run as before.
bool start_orphan_watchdog() noexcept;
// The watchdog's pid, 0 when none runs: a child of the host that no run may claim as its own.
pid_t orphan_watchdog_pid() noexcept;

// Tells the watchdog a child's process group started or ended (async-signal-safe: one write(2) to a pipe).
void watch_child_group(pid_t group) noexcept;
void unwatch_child_group(pid_t group) noexcept;

}  // namespace llmprof::detail
