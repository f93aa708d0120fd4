// The C++ side of the tests' process handshake (the shell side, and why: tests/support/handshake.sh): a test that
// starts a process and then signals it, or relies on its state, waits for the process's pid file (a line ending
// in a newline, written once its set-up is done), bounded, never for a fixed time; and it waits, bounded, for a
// process it ended to be gone. Each wait polls every 10 ms up to a limit far above what a loaded 2-core machine
// needs, so that the limit only turns a hang into a failure that names what never came.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "process/process_group.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

// The shell helpers, for a test's workload to source: ". '<this path>'".
inline std::filesystem::path handshake_script() {
  return std::filesystem::path(LLMPROF_SOURCE_DIR) / "tests/support/handshake.sh";
}

// The shell line that sources them, to start a workload's script or `sh -c` text with.
inline std::string source_handshake() { return ". '" + handshake_script().string() + "'\n"; }

inline constexpr std::chrono::seconds handshake_limit{60};

// Waits until `ready` holds, polling every 10 ms; false when `limit` passed first.
template <typename Condition>
bool await_condition(Condition ready, std::chrono::milliseconds limit = handshake_limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Whether `file` holds a complete line (the handshake's pid file is written).
inline bool holds_line(const std::filesystem::path& file) {
  const std::string text = read_file(file);
  return !text.empty() && text.back() == '\n';
}

// The pid in `file` once a process wrote it (the first number of its complete line); fails the test, naming the
// file, when none came within `limit`.
inline pid_t await_pid_file(const std::filesystem::path& file, std::chrono::milliseconds limit = handshake_limit) {
  if (!await_condition([&] { return holds_line(file); }, limit))
    FAIL("no process wrote its pid to " << file.string() << " within " << limit.count() << " ms");
  return static_cast<pid_t>(std::stol(read_file(file)));
}

// Alive and not a zombie (a killed orphan may wait as a zombie until its parent or a subreaper reaps it).
inline bool running(pid_t pid) {
  const std::string text =
      llmprof::detail::read_proc_file("/proc/" + std::to_string(pid) + "/stat").value_or(std::string());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

// True once `pid` no longer runs; false when it still ran after `limit` (a killed process is torn down by the
// kernel after the signal, not at once).
inline bool await_gone(pid_t pid, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  return await_condition([pid] { return !running(pid); }, limit);
}

}  // namespace llmprof::testing
