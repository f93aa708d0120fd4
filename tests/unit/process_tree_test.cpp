// The whole tree of a child is tracked (subreaper + /proc parent links), not only its process group:
// a grandchild that escaped with setsid is killed on a timeout, and one left running after a normal
// exit is reported.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "llmprof/process.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// Alive and not a zombie (a killed orphan may wait as our zombie until reaped).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

pid_t wait_for_pid_file(const fs::path& file) {
  for (int i = 0; i < 200; ++i) {
    const std::string text = read_file(file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the grandchild never wrote " << file);
  return -1;
}

// sh starts a grandchild in its own session (out of reach of kill(-group)), which writes its pid.
ProcessSpec with_setsid_grandchild(const fs::path& pid_file, const std::string& then) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "setsid /bin/sh -c 'echo $$ > \"$0\"; exec sleep 60' '" + pid_file.string() + "' & " + then};
  return spec;
}

}  // namespace

TEST_CASE("a timeout kills a grandchild that left the process group with setsid") {
  TempDir temp;
  ProcessSpec spec = with_setsid_grandchild(temp / "pid", "sleep 60");
  spec.timeout = std::chrono::milliseconds(500);
  spec.kill_grace = std::chrono::milliseconds(200);
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  CHECK(outcome->timed_out);
  const pid_t grandchild = wait_for_pid_file(temp / "pid");
  for (int i = 0; i < 100 && running(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const bool survived = running(grandchild);
  if (survived) ::kill(grandchild, SIGKILL);
  CHECK_FALSE(survived);  // before: it kept running although the reason said "its process tree was killed"
}

TEST_CASE("after a normal exit, descendants still running are reported, not silently left") {
  TempDir temp;
  const ProcessSpec spec = with_setsid_grandchild(temp / "pid", "sleep 0.3; exit 0");
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  const pid_t grandchild = wait_for_pid_file(temp / "pid");
  CHECK(outcome->succeeded());
  REQUIRE(outcome->surviving_descendants.size() == 1);
  CHECK(outcome->surviving_descendants.front() == std::to_string(grandchild) + " (sleep)");
  CHECK(running(grandchild));  // reported, not killed: the workload finished normally
  ::kill(grandchild, SIGKILL);
}

TEST_CASE("a child that leaves nothing behind reports no survivors") {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 0.1 & wait"};
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  CHECK(outcome->succeeded());
  CHECK(outcome->surviving_descendants.empty());
}
