// The whole tree of a child is tracked (subreaper + /proc parent links), not only its process group:
// a grandchild that escaped with setsid is killed on a timeout, and one left running after a normal
// exit is reported.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#include "core/text.hpp"
#include "llmprof/ncu_progress.hpp"
#include "llmprof/process.hpp"
#include "process/process_group.hpp"
#include "process_handshake.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

// sh starts a grandchild in its own session (out of reach of kill(-group)), which writes its pid and execs sleep;
// sh goes on to `then` only once the grandchild runs sleep (tests/support/handshake.sh), so what the runner finds
// is a grandchild that is ready, named (sleep) whenever it is first seen. setsid execs without forking (sh's
// child leads no process group), so $! is the grandchild.
ProcessSpec with_setsid_grandchild(const fs::path& pid_file, const std::string& then) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               source_handshake() + "setsid /bin/sh -c 'echo $$ > \"$0\"; exec sleep 60' '" + pid_file.string() +
                   "' &\nawait_program $! sleep || exit 1\n" + then};
  return spec;
}

}  // namespace

// The runner's own timer signals the tree: the 2 s are the script's head start to start its grandchild (it writes
// "ready" once the grandchild runs sleep; milliseconds even beside two busy loops), and the line checks it had it.
TEST_CASE("a timeout kills a grandchild that left the process group with setsid") {
  TempDir temp;
  ProcessSpec spec = with_setsid_grandchild(temp / "pid", "echo ready; sleep 60");
  spec.timeout = std::chrono::milliseconds(2000);
  spec.kill_grace = std::chrono::milliseconds(200);
  bool ready = false;
  spec.on_stdout_line = [&ready](const std::string& line) { ready = ready || line == "ready"; };
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  REQUIRE(ready);
  CHECK(outcome->timed_out);
  const pid_t grandchild = await_pid_file(temp / "pid");
  const bool survived = !await_gone(grandchild, std::chrono::seconds(2));
  if (survived) ::kill(grandchild, SIGKILL);
  CHECK_FALSE(survived);  // before: it kept running although the reason said "its process tree was killed"
}

TEST_CASE("after a normal exit, descendants still running are reported, not silently left") {
  TempDir temp;
  const ProcessSpec spec = with_setsid_grandchild(temp / "pid", "exit 0");
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  const pid_t grandchild = await_pid_file(temp / "pid");
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

// A process that exits between the opening of its /proc/<pid>/stat and the read makes read() fail
// with ESRCH; through std::ifstream that was an uncaught basic_filebuf::underflow exception, and
// deep-profile died with "internal error" (exit 134) under load while walking /proc.
TEST_CASE("a /proc file whose process ended after it was opened reads as absent, without an exception") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const int fd = ::open(("/proc/" + std::to_string(child) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  ::kill(child, SIGKILL);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  std::optional<std::string> content;
  CHECK_NOTHROW(content = llmprof::detail::read_whole_fd(fd));
  CHECK_FALSE(content.has_value());
  ::close(fd);
  CHECK_FALSE(llmprof::detail::read_proc_file("/proc/" + std::to_string(child) + "/stat").has_value());
  const auto own = llmprof::detail::read_proc_file("/proc/self/stat");
  REQUIRE(own.has_value());
  CHECK(own->find(')') != std::string::npos);
}

namespace {

// The fake ncu in its endless mode (tests/fake_tools/README.md): one progress line after another while its
// application runs, then the application's exit code, the report, and that code as its own. With `ready_file`,
// the application writes its pid there once set up (after its trap, say), and the fake ncu's Connected line and
// its progress lines, which the tests end the application on, wait for it (FAKE_NCU_CONNECTED_PID_FILE): the
// ending never meets an application that is not ready.
ProcessSpec endless_fake_ncu(const fs::path& report, const std::string& application_script,
                             const fs::path& ready_file = {}) {
  ProcessSpec spec;
  spec.argv = {std::string(LLMPROF_FAKE_TOOLS_DIR) + "/ncu", "-o", report.string(), "/bin/sh", "-c",
               application_script};
  spec.environment["FAKE_NCU_MODE"] = "endless";
  spec.environment["FAKE_NCU_LAUNCH_INTERVAL_S"] = "0.01";
  if (!ready_file.empty()) spec.environment["FAKE_NCU_CONNECTED_PID_FILE"] = ready_file.string();
  spec.timeout = std::chrono::seconds(120);  // a safety net only: the test ends the application itself
  return spec;
}

}  // namespace

TEST_CASE("ending a child's descendants on request ends the application, not the profiler, which writes its report") {
  TempDir temp;
  ProcessSpec spec = endless_fake_ncu(
      temp / "profile", "echo $$ > '" + (temp / "app.pid").string() + "'; exec sleep 600", temp / "app.pid");
  spec.end_descendants = std::make_shared<DescendantEnding>();
  std::vector<std::string> lines;
  int progress = 0;
  spec.on_stdout_line = [&](const std::string& line) {
    lines.push_back(line);
    if (line.find("==PROF== Profiling") != std::string::npos && ++progress == 3) spec.end_descendants->request();
  };
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  INFO(outcome->describe());
  CHECK(outcome->descendants_ended);
  CHECK_FALSE(outcome->timed_out);
  // The profiler exited by itself with the code it reports for the application killed by SIGTERM.
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 15);
  CHECK(std::find(lines.begin(), lines.end(), "==ERROR== The application returned an error code (15).") != lines.end());
  CHECK(fs::exists(temp / "profile.ncu-rep"));
  CHECK_FALSE(running(await_pid_file(temp / "app.pid")));
}

TEST_CASE("descendants that ignore SIGTERM are killed after the descendants' grace, and the child still finishes") {
  TempDir temp;
  ProcessSpec spec = endless_fake_ncu(
      temp / "profile", "trap '' TERM; echo $$ > '" + (temp / "app.pid").string() + "'; while :; do sleep 0.05; done",
      temp / "app.pid");
  spec.end_descendants = std::make_shared<DescendantEnding>();
  spec.descendants_kill_grace = std::chrono::milliseconds(300);
  int progress = 0;
  spec.on_stdout_line = [&](const std::string& line) {
    if (line.find("==PROF== Profiling") != std::string::npos && ++progress == 2) spec.end_descendants->request();
  };
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  INFO(outcome->describe());
  CHECK(outcome->descendants_ended);
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 9);  // SIGKILL, reported as the application's error code
  CHECK(fs::exists(temp / "profile.ncu-rep"));
}

TEST_CASE("without a request the descendants are left alone and the child ends with its application") {
  TempDir temp;
  ProcessSpec spec = endless_fake_ncu(temp / "profile", "sleep 0.2; exit 0");
  spec.end_descendants = std::make_shared<DescendantEnding>();
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  CHECK_FALSE(outcome->descendants_ended);
  CHECK(outcome->succeeded());
  CHECK(fs::exists(temp / "profile.ncu-rep"));
}

// Issue 33: the pass end touches only what it owns. In each case the run's line callback does what the ncu stage
// does: the processes ncu says it profiles ("==PROF== Connected to process PID") are the ending's targets.
namespace {

std::function<void(const std::string&)> ending_at_progress(ProcessSpec& spec, int at) {
  auto progress = std::make_shared<int>(0);
  return [&spec, progress, at](const std::string& line) {
    if (const auto pid = parse_ncu_connected_process(line)) spec.end_descendants->add_target(*pid);
    if (line.find("==PROF== Profiling") != std::string::npos && ++*progress == at) spec.end_descendants->request();
  };
}

}  // namespace

TEST_CASE("ncu run by a launcher script: the pass end ends the application, not the profiler under the launcher",
          "[ownership]") {
  TempDir temp;
  // ncu.path a wrapper that runs ncu as its child (Debian's usr/lib/nsight-compute/ncu, `sudo ncu`): the real ncu
  // is the child's child. Ending every descendant would SIGTERM it and lose its report.
  ProcessSpec spec = endless_fake_ncu(
      temp / "profile", "echo $$ > '" + (temp / "app.pid").string() + "'; exec sleep 600", temp / "app.pid");
  std::vector<std::string> inner = spec.argv;
  std::string command = "\"$@\"; exit $?";
  spec.argv = {"/bin/sh", "-c", command, "launcher"};
  spec.argv.insert(spec.argv.end(), inner.begin(), inner.end());
  spec.end_descendants = std::make_shared<DescendantEnding>("ncu");  // the profiler's name, as the ncu stage gives
  spec.on_stdout_line = ending_at_progress(spec, 3);
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  INFO(outcome->describe());
  CHECK(outcome->descendants_ended);
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 15);  // the launcher passes on ncu's code for the application it ended
  CHECK(fs::exists(temp / "profile.ncu-rep"));  // ncu lived on to write it
  CHECK_FALSE(running(await_pid_file(temp / "app.pid")));
}

TEST_CASE("a daemon an earlier child left behind is not ended by a later child's pass end", "[ownership]") {
  TempDir temp;
  auto runner = make_system_process_runner();
  // Stage 1's workload leaves a setsid daemon; it is re-parented to this process (the subreaper) when sh exits.
  auto earlier = runner->run(with_setsid_grandchild(temp / "daemon.pid", "exit 0"));
  REQUIRE(earlier.has_value());
  const pid_t daemon = await_pid_file(temp / "daemon.pid");
  REQUIRE(running(daemon));
  ProcessSpec spec = endless_fake_ncu(temp / "profile", "exec sleep 600");
  spec.end_descendants = std::make_shared<DescendantEnding>();
  spec.on_stdout_line = ending_at_progress(spec, 2);
  const auto outcome = runner->run(spec);
  REQUIRE(outcome.has_value());
  CHECK(outcome->descendants_ended);
  CHECK(running(daemon));  // not ours to end: it was there before this child started
  ::kill(daemon, SIGKILL);

  // Without targets (a caller that names none) the rule still holds: only processes born after the child.
  auto again = runner->run(with_setsid_grandchild(temp / "daemon2.pid", "exit 0"));
  REQUIRE(again.has_value());
  const pid_t second = await_pid_file(temp / "daemon2.pid");
  ProcessSpec untargeted = endless_fake_ncu(temp / "profile2", "exec sleep 600");
  untargeted.end_descendants = std::make_shared<DescendantEnding>();
  int progress = 0;
  untargeted.on_stdout_line = [&](const std::string& line) {
    if (line.find("==PROF== Profiling") != std::string::npos && ++progress == 2) untargeted.end_descendants->request();
  };
  REQUIRE(runner->run(untargeted).has_value());
  CHECK(running(second));
  ::kill(second, SIGKILL);
}

TEST_CASE("a grandchild of the application that ignores SIGTERM is killed even when ncu exits first",
          "[ownership]") {
  TempDir temp;
  // The application starts a worker that ignores SIGTERM (an engine worker holding its port), waits until it runs,
  // then sleeps. ncu exits as soon as the application is gone, long before the grace: the worker must not outlive
  // the run. The worker writes its own pid ($$ in a ( ) subshell would be the application's), and the pass ends
  // only once it has: on a loaded machine the third progress line came before the worker existed (a flaky failure).
  // The worker execs sleep, which keeps the ignored SIGTERM, rather than loop over short children that a SIGKILL
  // could orphan between two looks at the tree. Beside two busy loops this test failed 10 runs in 25, each with the
  // application's own `sleep 600` left running: forked just before the ending's SIGTERM ended its parent, it was
  // first seen re-parented and taken for a process that had left the application (application_tree.cpp).
  const fs::path worker_file = temp / "worker.pid";
  const std::string app = source_handshake() + "/bin/sh -c 'trap \"\" TERM; echo $$ > \"$0\"; exec sleep 600' '" +
                          worker_file.string() + "' &\nawait_file '" + worker_file.string() + "' || exit 1\nsleep 600";
  ProcessSpec spec = endless_fake_ncu(temp / "profile", app);
  spec.end_descendants = std::make_shared<DescendantEnding>();
  spec.descendants_kill_grace = std::chrono::milliseconds(500);
  const auto count_progress = ending_at_progress(spec, 1'000'000);  // the Connected lines; never ends by count
  int progress = 0;
  bool requested = false;
  spec.on_stdout_line = [&](const std::string& line) {
    count_progress(line);
    if (line.find("==PROF== Profiling") != std::string::npos) ++progress;
    if (!requested && progress >= 3 && holds_line(worker_file)) {
      requested = true;
      spec.end_descendants->request();
    }
  };
  const auto outcome = make_system_process_runner()->run(spec);
  REQUIRE(outcome.has_value());
  INFO(outcome->describe());
  CHECK(outcome->descendants_ended);
  CHECK(fs::exists(temp / "profile.ncu-rep"));
  const pid_t worker = await_pid_file(temp / "worker.pid");
  CHECK_FALSE(running(worker));
  INFO("survivors: " << detail::join(outcome->surviving_descendants, ", "));
  CHECK(outcome->surviving_descendants.empty());
}

TEST_CASE("ncu's Connected lines name the processes it profiles", "[ownership]") {
  CHECK(parse_ncu_connected_process("==PROF== Connected to process 4242 (/usr/bin/python3.11)") == 4242);
  CHECK(parse_ncu_connected_process("==PROF== Connected to process 7") == 7);
  CHECK_FALSE(parse_ncu_connected_process("==PROF== Connected to process x (/bin/a)"));
  CHECK_FALSE(parse_ncu_connected_process("==PROF== Connected to process 0 (/bin/a)"));
  CHECK_FALSE(parse_ncu_connected_process("==PROF== Connected to process 12a (/bin/a)"));
  CHECK_FALSE(parse_ncu_connected_process("==PROF== Disconnected from process 4242"));
  CHECK_FALSE(parse_ncu_connected_process("==PROF== Connected to process 99999999999 (/bin/a)"));
}

namespace {

// Whether a TCP port on 127.0.0.1 can be bound now (its holder is gone).
bool port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

}  // namespace

// Issue 33: survivors of a stage are ended after it, each kind of escape included, and a SIGTERM-ignoring one
// by SIGKILL after the grace; the child exits by itself first, as a workload that forgets its children does.
TEST_CASE("a child's survivors are ended after it exits: SIGTERM-ignoring, other group, setsid daemon, port holder",
          "[ownership]") {
  TempDir temp;
  const auto file = [&](const char* name) { return "'" + (temp / name).string() + "'"; };
  // Each survivor writes its pid once set up (the first after its trap); sh exits only once all have.
  const std::string script = source_handshake() +
      "/bin/sh -c 'trap \"\" TERM; echo $$ > \"$0\"; while :; do sleep 0.05; done' " + file("ignores.pid") + " & "
      "python3 -c 'import os,sys,time; os.setpgid(0,0); open(sys.argv[1],\"w\").write(\"%d\\n\" % os.getpid()); "
      "time.sleep(600)' " + file("group.pid") + " & "
      "setsid /bin/sh -c 'echo $$ > \"$0\"; exec sleep 600' " + file("daemon.pid") + " & "
      "python3 -c 'import os,socket,sys,time; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); "
      "open(sys.argv[2],\"w\").write(\"%d\\n\" % s.getsockname()[1]); open(sys.argv[1],\"w\").write(\"%d\\n\" % "
      "os.getpid()); time.sleep(600)' " + file("port_holder.pid") + " " + file("port") + " & "
      "for f in ignores.pid group.pid daemon.pid port_holder.pid port; do await_file '" + temp.path().string() +
      "'/$f || exit 1; done; exit 0";
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.end_survivors_after = std::chrono::milliseconds(300);
  auto runner = make_system_process_runner();
  const auto started = std::chrono::steady_clock::now();
  const auto outcome = runner->run(spec);
  REQUIRE(outcome.has_value());
  CHECK(outcome->exited);
  CHECK(outcome->exit_code == 0);
  CHECK(outcome->survivors_ended);
  const pid_t ignores = await_pid_file(temp / "ignores.pid");
  const pid_t group = await_pid_file(temp / "group.pid");
  const pid_t daemon = await_pid_file(temp / "daemon.pid");
  const pid_t holder = await_pid_file(temp / "port_holder.pid");
  const int port = static_cast<int>(await_pid_file(temp / "port"));
  for (pid_t pid : {ignores, group, daemon, holder}) {
    INFO("pid " << pid);
    CHECK(std::any_of(outcome->surviving_descendants.begin(), outcome->surviving_descendants.end(),
                      [&](const std::string& process) { return process.rfind(std::to_string(pid) + " ", 0) == 0; }));
    CHECK_FALSE(running(pid));
  }
  // Only the one that ignores SIGTERM (with the sleep it may be waiting on) needed SIGKILL, after the grace.
  const auto killed = [&](pid_t pid) {
    return std::any_of(outcome->survivors_killed.begin(), outcome->survivors_killed.end(),
                       [&](const std::string& process) { return process.rfind(std::to_string(pid) + " ", 0) == 0; });
  };
  CHECK(killed(ignores));
  for (pid_t pid : {group, daemon, holder}) CHECK_FALSE(killed(pid));
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(300));
  CHECK(port_free(port));
}

TEST_CASE("without end_survivors_after, survivors are reported and left running", "[ownership]") {
  TempDir temp;
  auto runner = make_system_process_runner();
  const auto outcome = runner->run(with_setsid_grandchild(temp / "daemon.pid", "exit 0"));
  REQUIRE(outcome.has_value());
  const pid_t daemon = await_pid_file(temp / "daemon.pid");
  CHECK_FALSE(outcome->survivors_ended);
  CHECK(outcome->surviving_descendants.size() == 1);
  CHECK(running(daemon));
  ::kill(daemon, SIGKILL);
}

// Issue 33: a profiler's own process that outlives its command line (nsys 2022.4's `nsys --start-agent`, which
// finishes the report) is named apart and left; the workload's daemon beside it is ended. The "tool" here is a
// copy of sleep whose path has an nsight-* folder, as every Nsight install has; the predicate is the caller's.
TEST_CASE("survivors the tool predicate claims are listed apart and left; the others are ended", "[ownership]") {
  TempDir temp;
  const fs::path tool_directory = temp / "nsight-systems" / "target-linux-x64";
  fs::create_directories(tool_directory);
  const fs::path agent = tool_directory / "agent";
  fs::copy_file(find_executable("sleep"), agent);
  const auto file = [&](const char* name) { return "'" + (temp / name).string() + "'"; };
  // sh exits only once both run their programs: the predicate reads the executable, and the names are the programs'.
  const std::string script = source_handshake() + "setsid /bin/sh -c 'echo $$ > \"$0\"; exec \"$1\" 600' " +
                             file("agent.pid") + " '" + agent.string() + "' &\nagent=$!\n" +
                             "setsid /bin/sh -c 'echo $$ > \"$0\"; exec sleep 600' " + file("daemon.pid") +
                             " &\nawait_program $agent agent && await_program $! sleep || exit 1\nexit 0";
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.end_survivors_after = std::chrono::milliseconds(300);
  spec.is_tool_executable = [&](const fs::path& executable) { return executable == fs::canonical(agent); };
  auto runner = make_system_process_runner();
  const auto outcome = runner->run(spec);
  REQUIRE(outcome.has_value());
  const pid_t agent_pid = await_pid_file(temp / "agent.pid");
  const pid_t daemon = await_pid_file(temp / "daemon.pid");
  CHECK(outcome->survivors_ended);
  REQUIRE(outcome->tool_survivors.size() == 1);
  CHECK(outcome->tool_survivors.front() == std::to_string(agent_pid) + " (agent)");
  REQUIRE(outcome->surviving_descendants.size() == 1);
  CHECK(outcome->surviving_descendants.front() == std::to_string(daemon) + " (sleep)");
  CHECK(running(agent_pid));
  CHECK_FALSE(running(daemon));
  ::kill(agent_pid, SIGKILL);
}

// Two launches in one process (two DeepProfilers, or a harness that starts processes of its own): a run ends and
// reports only what descends from its own launch. Run A leaves a setsid daemon (it leaves survivors running), and
// the harness starts a process of its own, both while run B is going and both re-parented to, or children of, this
// process, which is the subreaper of both runs: B ended both and named them as its own survivors.
TEST_CASE("a run's survivors are only what descends from its own launch, not another run's or the harness's",
          "[ownership]") {
  TempDir temp;
  const std::string dir = temp.path().string();
  auto runner = make_system_process_runner();
  ProcessSpec second;
  second.argv = {"/bin/sh", "-c",
                 "cd '" + dir + "' && : > started && "
                 "while [ ! -s harness.pid ] || [ ! -s daemon.pid ]; do sleep 0.01; done; d=$(cat daemon.pid); "
                 // A's sh has exited and its daemon is this process's now (field 4 of stat: the parent).
                 "while [ \"$(cut -d' ' -f4 /proc/$d/stat)\" != \"$PPID\" ]; do sleep 0.01; done; exit 0"};
  second.end_survivors_after = std::chrono::milliseconds(300);
  std::optional<Result<ProcessOutcome>> second_outcome;
  std::thread second_run([&] { second_outcome = runner->run(second); });

  while (!fs::exists(temp / "started")) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // The harness's own process, started while B runs.
  const pid_t harness_child = ::fork();
  if (harness_child == 0) {
    ::execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  llmprof::testing::write_file(temp / "harness.pid.tmp", std::to_string(harness_child) + "\n");
  fs::rename(temp / "harness.pid.tmp", temp / "harness.pid");
  // Run A, which leaves its daemon running.
  auto first = runner->run(with_setsid_grandchild(temp / "daemon.pid", "while [ ! -s '" + dir + "/daemon.pid' ]; do sleep 0.01; done; exit 0"));
  second_run.join();
  REQUIRE(first.has_value());
  const pid_t daemon = await_pid_file(temp / "daemon.pid");
  CHECK(first->surviving_descendants.size() == 1);

  REQUIRE(second_outcome.has_value());
  REQUIRE(second_outcome->has_value());
  const ProcessOutcome& outcome = second_outcome->value();
  CHECK(outcome.succeeded());
  CHECK(outcome.surviving_descendants.empty());
  CHECK(outcome.survivors_killed.empty());
  CHECK(running(daemon));
  CHECK(running(harness_child));
  ::kill(daemon, SIGKILL);
  ::kill(harness_child, SIGKILL);
  ::waitpid(harness_child, nullptr, 0);
}
