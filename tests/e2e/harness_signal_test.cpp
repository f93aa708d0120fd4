// A harness process that gets SIGINT (Ctrl-C) while its run's workload runs: the workload's processes must not
// outlive the harness, and run.json must not stay "running". Two harnesses: the example (examples/harness/,
// StopSignalWatcher as docs/library.md says) and a bare one that installs no handler (the library's fallback).
// The workload leaves the process group (setsid) so that only the library's tracking of its tree can end it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "process/process_group.hpp"
#include "test_support.hpp"

using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

// Alive and not a zombie.
bool running(pid_t pid) {
  const std::string text = llmprof::detail::read_proc_file("/proc/" + std::to_string(pid) + "/stat").value_or("");
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

// Polls for a file the workload writes when it is ready (its handshake), up to a minute.
std::string wait_for_file(const fs::path& file, pid_t harness) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = fs::exists(file) ? read_file(file) : std::string();
    if (!text.empty() && text.back() == '\n') return text;
    if (::waitpid(harness, nullptr, WNOHANG) == harness) FAIL("the harness ended before the workload was ready");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the workload never wrote " << file);
  return {};
}

struct Ended {
  int status = 0;
  pid_t grandchild = 0;
  fs::path main;
};

// How the workload's grandchild is started: in a session of its own (setsid), out of the stage's process group,
// or in that group as most programs' children are.
enum class Grandchild { own_session, stage_group };

// Starts `harness` in `directory` with `arguments` before "--", the workload after it; sends `signal_number` once
// the workload's grandchild has written its pid; waits for the harness to end.
Ended interrupt_harness(const std::string& harness, const TempDir& directory, std::vector<std::string> arguments,
                        int signal_number = SIGINT, Grandchild grandchild = Grandchild::own_session) {
  const fs::path ready = directory / "grandchild.pid";
  const std::string workload = std::string(grandchild == Grandchild::own_session ? "setsid " : "") +
                               "sleep 600 & echo $! > '" + (directory / "pid.tmp").string() + "' && mv '" +
                               (directory / "pid.tmp").string() + "' '" + ready.string() + "'; wait";
  arguments.insert(arguments.begin(), harness);
  for (const std::string part : {"--", "/bin/sh", "-c"}) arguments.push_back(part);
  arguments.push_back(workload);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::vector<char*> argv;
    for (auto& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    if (::chdir(directory.path().c_str()) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Ended ended;
  ended.grandchild = static_cast<pid_t>(std::stol(wait_for_file(ready, child)));
  REQUIRE(::kill(child, signal_number) == 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  pid_t waited = 0;
  while ((waited = ::waitpid(child, &ended.status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (waited != child) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    FAIL("the harness did not end within a minute of signal " << signal_number);
  }
  for (const auto& entry : fs::recursive_directory_iterator(directory.path()))
    if (entry.path().filename() == "run.json") ended.main = entry.path().parent_path();
  return ended;
}

std::string run_status(const fs::path& main) {
  const auto manifest = boost::json::parse(read_file(main / "run.json")).as_object();
  return std::string(manifest.at("status").as_string());
}

// `within`: how long the grandchild may take to go once the harness has ended (0: it must be gone already).
void check_nothing_left(pid_t grandchild, std::chrono::seconds within = std::chrono::seconds(0)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (running(grandchild) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const bool survived = running(grandchild);
  if (survived) ::kill(grandchild, SIGKILL);
  CHECK_FALSE(survived);  // before: it kept running under init after the harness died
}

}  // namespace

TEST_CASE("Ctrl-C in the example harness: the run stops, run.json says interrupted, nothing outlives it",
          "[e2e][slow][signals]") {
  TempDir directory;
  const Ended ended = interrupt_harness(LLMPROF_EXAMPLE_HARNESS, directory, {});
  REQUIRE(WIFEXITED(ended.status));
  CHECK(WEXITSTATUS(ended.status) == 130);  // exit_code_for(interrupted)
  REQUIRE_FALSE(ended.main.empty());
  CHECK(run_status(ended.main) == "interrupted");
  check_nothing_left(ended.grandchild);
}

TEST_CASE("Ctrl-C in a harness with no handler: it still dies of SIGINT, after its run closed and ended its "
          "processes",
          "[e2e][slow][signals]") {
  TempDir directory;
  const Ended ended = interrupt_harness(LLMPROF_BARE_HARNESS, directory, {(directory / "runs").string()});
  REQUIRE(WIFSIGNALED(ended.status));
  CHECK(WTERMSIG(ended.status) == SIGINT);  // what the harness chose by installing nothing
  REQUIRE_FALSE(ended.main.empty());
  CHECK(run_status(ended.main) == "interrupted");  // before: "running"
  check_nothing_left(ended.grandchild);
}

TEST_CASE("A harness killed with SIGKILL: what its run's workload started is ended by the library's watchdog",
          "[e2e][slow][signals]") {
  // SIGKILL gives the harness no chance to stop anything, and PR_SET_PDEATHSIG reaches only the stage's direct
  // child: before the watchdog, the workload's own child (in the stage's process group) kept running under init.
  TempDir directory;
  const Ended ended =
      interrupt_harness(LLMPROF_BARE_HARNESS, directory, {(directory / "runs").string()}, SIGKILL, Grandchild::stage_group);
  REQUIRE(WIFSIGNALED(ended.status));
  CHECK(WTERMSIG(ended.status) == SIGKILL);
  // The watchdog sends SIGTERM at once (SIGKILL 5 s later to what ignores it); a minute covers a loaded machine.
  check_nothing_left(ended.grandchild, std::chrono::seconds(60));
}
