// The daemons a test workload left: each wrote its pid into a folder of its own (`<pid>.pid`), the way the
// survivor tests' workloads do, and the workload waited for that file before it went on (tests/support/handshake.sh).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>

#include "process_handshake.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

struct DaemonCount {
  std::size_t started = 0;  // pid files written
  std::size_t alive = 0;    // of those, still running (zombies excluded)
};

// Counts the daemons and kills those still alive, so that a failing test leaves none behind.
inline DaemonCount count_and_kill_daemons(const std::filesystem::path& pid_folder) {
  DaemonCount count;
  for (const auto& entry : std::filesystem::directory_iterator(pid_folder)) {
    ++count.started;
    const auto pid = static_cast<pid_t>(std::stol(entry.path().stem().string()));
    if (running(pid)) {
      ++count.alive;
      ::kill(pid, SIGKILL);
    }
  }
  return count;
}

}  // namespace llmprof::testing
