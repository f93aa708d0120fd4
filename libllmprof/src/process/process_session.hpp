// One run of one child process for the system ProcessRunner (see process.hpp for the contract).
#pragma once

#include <atomic>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

// Starts spec's command in its own process group, pumps its output to files and callbacks, enforces
// the timeout and stop requests by signalling the whole group, and reaps it. Blocks until done.
// Callbacks run on the calling thread. An exception thrown by a callback kills the process group
// and is rethrown once the child has been reaped.
Result<ProcessOutcome> run_child_process(const ProcessSpec& spec, const std::atomic<bool>& stop_requested);

}  // namespace llmprof::detail
