// Process-group queries for the system ProcessRunner.
#pragma once

#include <sys/types.h>

namespace llmprof::detail {

// True while some process of the group is still running. A zombie does not count: an orphaned
// grandchild killed by our SIGTERM stays a zombie until init reaps it, which some container inits
// do only every second or two, yet kill(-group, 0) still finds it. Linux reads /proc to tell live
// members from zombies; elsewhere this is kill(-group, 0).
bool process_group_has_live_members(pid_t group);

}  // namespace llmprof::detail
