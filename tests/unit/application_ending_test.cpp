// A pass end against real processes: the fake ncu (endless mode) runs a serving engine whose front never touches
// CUDA and blocks on its worker without a timeout (tests/e2e/blocking_front_engine.py, python3 multiprocessing).
// ncu names only the worker; the whole engine must end, ncu and its launcher must live on to write the report,
// and a process from outside the run must not be touched.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "llmprof/ncu_progress.hpp"
#include "llmprof/process.hpp"
#include "process/process_group.hpp"
#include "process_handshake.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::read_file;
using llmprof::testing::running;
using llmprof::testing::TempDir;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const fs::path engine = fs::path(LLMPROF_SOURCE_DIR) / "tests/e2e/blocking_front_engine.py";

// "ROLE PID" lines the engine's processes appended.
std::vector<std::pair<std::string, pid_t>> engine_processes(const fs::path& pids_file) {
  std::vector<std::pair<std::string, pid_t>> processes;
  std::istringstream lines(read_file(pids_file));
  std::string role;
  pid_t pid = 0;
  while (lines >> role >> pid) processes.emplace_back(role, pid);
  return processes;
}

// The fake ncu running the engine, which serves until killed (it runs under LLMPROF_PROFILER=ncu); the pass end
// is asked for at the third progress line, with ncu's Connected lines as its targets, as the ncu stage does.
ProcessSpec engine_under_fake_ncu(const TempDir& temp, const std::string& start_method, const std::string& front) {
  ProcessSpec spec;
  spec.argv = {std::string(LLMPROF_FAKE_TOOLS_DIR) + "/ncu",
               "-o",
               (temp / "profile").string(),
               "python3",
               engine.string(),
               "--start-method",
               start_method,
               "--front",
               front,
               "--forever-under",
               "ncu",
               "--worker-pid-file",
               (temp / "worker.pid").string(),
               "--pids-file",
               (temp / "pids").string()};
  spec.environment["FAKE_NCU_MODE"] = "endless";
  spec.environment["FAKE_NCU_LAUNCH_INTERVAL_S"] = "0.01";
  spec.environment["FAKE_NCU_CONNECTED_PID_FILE"] = (temp / "worker.pid").string();
  spec.environment["LLMPROF_PROFILER"] = "ncu";
  spec.timeout = 120s;  // a safety net only: without the ending the engine runs until this
  spec.descendants_kill_grace = 500ms;
  spec.end_descendants = std::make_shared<DescendantEnding>("ncu");
  auto progress = std::make_shared<int>(0);
  spec.on_stdout_line = [ending = spec.end_descendants, progress](const std::string& line) {
    if (const auto pid = parse_ncu_connected_process(line)) ending->add_target(*pid);
    if (line.find("==PROF== Profiling") != std::string::npos && ++*progress == 3) ending->request();
  };
  return spec;
}

// A process from outside the run, started before it: a child of this process (so an orphan-looking one).
pid_t start_sentinel() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

void check_engine_ended(const fs::path& pids_file, std::size_t expected_processes) {
  const auto processes = engine_processes(pids_file);
  CHECK(processes.size() == expected_processes);
  for (const auto& [role, pid] : processes) {
    INFO(role << " " << pid);
    CHECK_FALSE(running(pid));
  }
}

}  // namespace

TEST_CASE("a serving engine whose front never touches CUDA ends whole once the pass end is asked for, under a "
          "launcher, and nothing else is touched",
          "[ownership]") {
  TempDir temp;
  const pid_t sentinel = start_sentinel();
  REQUIRE(sentinel > 0);
  ProcessSpec spec = engine_under_fake_ncu(temp, "fork", "queue");
  // ncu.path a launcher that runs ncu as its child (Debian's ncu script, `sudo ncu`).
  std::vector<std::string> inner = spec.argv;
  spec.argv = {"/bin/sh", "-c", "\"$@\"; exit $?", "launcher"};
  spec.argv.insert(spec.argv.end(), inner.begin(), inner.end());
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  INFO(outcome->describe());
  CHECK(outcome->descendants_ended);
  CHECK_FALSE(outcome->descendants_ended_at_limit);
  CHECK_FALSE(outcome->timed_out);
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 15);              // ncu's code for its application ended by SIGTERM, passed on
  CHECK(fs::exists(temp / "profile.ncu-rep"));  // ncu and its launcher lived on to write it
  CHECK(outcome->wall_time < 60s);              // the engine alone would have run to the 120 s timeout
  check_engine_ended(temp / "pids", 2);         // the front (queue.get()) and the worker
  CHECK(running(sentinel));
  ::kill(sentinel, SIGKILL);
  ::waitpid(sentinel, nullptr, 0);
}

TEST_CASE("a front that ignores SIGTERM is killed after the grace; ncu reports the SIGKILL", "[ownership]") {
  TempDir temp;
  // spawn: the worker and the resource tracker are fresh interpreters; the front ignores SIGTERM before it tells
  // the worker it blocks, so by ncu's Connected line (the worker's pid file) it does.
  ProcessSpec spec = engine_under_fake_ncu(temp, "spawn", "ignore-term");
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  INFO(outcome->describe());
  CHECK(outcome->descendants_ended);
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 9);  // the front outlived SIGTERM
  CHECK(fs::exists(temp / "profile.ncu-rep"));
  CHECK(outcome->wall_time < 60s);
  check_engine_ended(temp / "pids", 2);
}

TEST_CASE("a run's limit ends its application when nothing asked for it, and says so", "[ownership]") {
  TempDir temp;
  ProcessSpec spec;
  spec.argv = {std::string(LLMPROF_FAKE_TOOLS_DIR) + "/ncu", "-o", (temp / "profile").string(), "/bin/sh", "-c",
               "exec sleep 600"};
  spec.environment["FAKE_NCU_MODE"] = "endless";
  spec.environment["FAKE_NCU_LAUNCH_INTERVAL_S"] = "0.01";
  spec.timeout = 120s;
  spec.end_descendants = std::make_shared<DescendantEnding>("ncu");
  // The limit may pass before the application starts: python3 may be a launcher (pyenv's shim runs helpers
  // under bash first), which is no application; the application is ended once it runs.
  spec.end_descendants_after = 500ms;
  pid_t connected = 0;
  spec.on_stdout_line = [&connected](const std::string& line) {
    if (const auto pid = parse_ncu_connected_process(line)) connected = *pid;
  };
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  INFO(outcome->describe());
  CHECK(outcome->descendants_ended);
  CHECK(outcome->descendants_ended_at_limit);
  CHECK_THAT(outcome->describe(), Catch::Contains("after its application was ended at its limit"));
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 15);
  CHECK(fs::exists(temp / "profile.ncu-rep"));
  CHECK(outcome->wall_time < 60s);
  REQUIRE(connected > 0);
  CHECK_FALSE(running(connected));
  CHECK(outcome->surviving_descendants.empty());
}
