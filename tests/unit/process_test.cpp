// The system ProcessRunner against real child processes (/bin/sh scripts written into a TempDir),
// ProcessOutcome::describe(), find_executable(), and the FakeProcessRunner other tests reuse.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "fake_process_runner.hpp"
#include "llmprof/process.hpp"
#include "process/process_lines.hpp"
#include "process_handshake.hpp"
#include "test_support.hpp"

using llmprof::ErrorCode;
using llmprof::ProcessOutcome;
using llmprof::ProcessSpec;
using llmprof::testing::await_condition;
using llmprof::testing::await_gone;
using llmprof::testing::await_pid_file;
using llmprof::testing::holds_line;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// An executable /bin/sh script in `directory`.
std::filesystem::path write_script(const TempDir& directory, const std::string& name, const std::string& body) {
  const auto path = directory / name;
  llmprof::testing::write_file(path, "#!/bin/sh\n" + body);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

ProcessOutcome run_ok(const ProcessSpec& spec) {
  auto runner = llmprof::make_system_process_runner();
  auto outcome = runner->run(spec);
  if (!outcome) FAIL("run failed: " << outcome.error().describe());
  return *outcome;
}

// Lines a callback received, guarded because a custom runner may call from another thread.
struct LineRecorder {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> callback() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
};

}  // namespace

TEST_CASE("describe() says how a process ended") {
  ProcessOutcome exited;
  exited.exited = true;
  exited.exit_code = 3;
  CHECK(exited.describe() == "exit code 3");

  ProcessOutcome killed;
  killed.signal = 9;
  killed.timed_out = true;
  killed.timeout = 30s;
  CHECK(killed.describe() == "killed by signal 9 (SIGKILL) after timeout of 30s");
  killed.timeout = 1500ms;
  CHECK(killed.describe() == "killed by signal 9 (SIGKILL) after timeout of 1.5s");
  killed.timeout = 250ms;
  CHECK(killed.describe() == "killed by signal 9 (SIGKILL) after timeout of 250ms");
  killed.timeout = 120s;
  CHECK(killed.describe() == "killed by signal 9 (SIGKILL) after timeout of 2min");

  ProcessOutcome stopped;
  stopped.signal = SIGTERM;
  stopped.interrupted = true;
  CHECK(stopped.describe() == "killed by signal 15 (SIGTERM) after a stop request");

  ProcessOutcome never_started;
  never_started.interrupted = true;
  CHECK(never_started.describe() == "not started: a stop had been requested");
  CHECK_FALSE(never_started.succeeded());
}

TEST_CASE("LineSplitter: terminators split across reads, over-long lines come in pieces") {
  std::vector<std::string> lines;
  llmprof::detail::LineSplitter splitter([&](const std::string& line) { lines.push_back(line); }, 4);
  splitter.feed("ab\r");
  splitter.feed("\ncd");  // "\r\n" split over two reads is still one terminator
  splitter.feed("ef\rg");
  splitter.feed("123456789\n");
  splitter.feed("\n\rlast");
  splitter.finish();
  splitter.finish();  // idempotent
  CHECK(lines == std::vector<std::string>{"ab", "cdef", "g123", "4567", "89", "", "", "last"});
}

TEST_CASE("exit codes are outcomes, not errors") {
  TempDir directory;
  const auto zero = run_ok({.argv = {"/bin/true"}});
  CHECK(zero.exited);
  CHECK(zero.exit_code == 0);
  CHECK(zero.succeeded());
  CHECK_FALSE(zero.signal.has_value());

  const auto one = run_ok({.argv = {"false"}});  // bare name: found on PATH
  CHECK(one.exited);
  CHECK(one.exit_code == 1);
  CHECK_FALSE(one.succeeded());

  const auto three = run_ok({.argv = {write_script(directory, "three.sh", "exit 3\n").string()}});
  CHECK(three.exit_code == 3);
  CHECK(three.describe() == "exit code 3");
  CHECK(three.wall_time > 0ns);
}

TEST_CASE("arguments reach the child verbatim, without a shell") {
  TempDir directory;
  const auto script = write_script(directory, "args.sh", "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n");
  LineRecorder lines;
  const auto outcome = run_ok(
      {.argv = {script.string(), "two words", "$HOME", "*", "'quoted'", ""}, .on_stdout_line = lines.callback()});
  CHECK(outcome.succeeded());
  CHECK(lines.lines == std::vector<std::string>{"[two words]", "[$HOME]", "[*]", "['quoted']", "[]"});
}

TEST_CASE("a child killed by a signal reports the signal, not an exit code") {
  TempDir directory;
  const auto outcome = run_ok({.argv = {write_script(directory, "die.sh", "kill -9 $$\nsleep 5\n").string()}});
  CHECK_FALSE(outcome.exited);
  REQUIRE(outcome.signal.has_value());
  CHECK(*outcome.signal == SIGKILL);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.describe() == "killed by signal 9 (SIGKILL)");
}

TEST_CASE("stdout and stderr go to files, separate or shared") {
  TempDir directory;
  const auto script = write_script(directory, "both.sh", "echo out1\necho err1 >&2\necho out2\n");
  const auto separate =
      run_ok({.argv = {script.string()}, .stdout_file = directory / "out.txt", .stderr_file = directory / "err.txt"});
  CHECK(separate.succeeded());
  CHECK(read_file(directory / "out.txt") == "out1\nout2\n");
  CHECK(read_file(directory / "err.txt") == "err1\n");

  llmprof::testing::write_file(directory / "all.txt", "old content that must be truncated away\n");
  run_ok({.argv = {script.string()}, .stdout_file = directory / "all.txt", .stderr_file = directory / "all.txt"});
  CHECK(read_file(directory / "all.txt") == "out1\nerr1\nout2\n");
}

TEST_CASE(
    "line callbacks split at newline, carriage return and CRLF, keep an unterminated last line, and work with a file") {
  TempDir directory;
  const auto script = write_script(directory, "progress.sh",
                                   "printf 'first\\n==PROF== 10%%\\r==PROF== 50%%\\r100%%\\r\\nempty next\\n\\nlast'\n"
                                   "printf 'warning one\\nno newline at end' >&2\n");
  LineRecorder out;
  LineRecorder err;
  const auto outcome = run_ok({.argv = {script.string()},
                               .stdout_file = directory / "out.txt",
                               .on_stdout_line = out.callback(),
                               .on_stderr_line = err.callback()});
  CHECK(outcome.succeeded());
  CHECK(out.lines ==
        std::vector<std::string>{"first", "==PROF== 10%", "==PROF== 50%", "100%", "empty next", "", "last"});
  CHECK(err.lines == std::vector<std::string>{"warning one", "no newline at end"});
  CHECK(read_file(directory / "out.txt") == "first\n==PROF== 10%\r==PROF== 50%\r100%\r\nempty next\n\nlast");
}

TEST_CASE("environment overrides are applied on top of the parent's, and unset works") {
  TempDir directory;
  ::setenv("LLMPROF_PROCESS_TEST_KEEP", "kept", 1);
  ::setenv("LLMPROF_PROCESS_TEST_DROP", "should vanish", 1);
  const auto script = write_script(directory, "env.sh",
                                   "echo \"keep=${LLMPROF_PROCESS_TEST_KEEP-unset}\"\n"
                                   "echo \"drop=${LLMPROF_PROCESS_TEST_DROP-unset}\"\n"
                                   "echo \"set=${LLMPROF_PROCESS_TEST_SET-unset}\"\n");
  LineRecorder lines;
  run_ok({.argv = {script.string()},
          .environment = {{"LLMPROF_PROCESS_TEST_DROP", std::nullopt}, {"LLMPROF_PROCESS_TEST_SET", "a b=c"}},
          .on_stdout_line = lines.callback()});
  CHECK(lines.lines == std::vector<std::string>{"keep=kept", "drop=unset", "set=a b=c"});
  ::unsetenv("LLMPROF_PROCESS_TEST_KEEP");
  ::unsetenv("LLMPROF_PROCESS_TEST_DROP");
}

TEST_CASE("a PATH override in the spec is where a bare name is looked up") {
  TempDir directory;
  write_script(directory, "only-here", "echo found me\n");
  LineRecorder lines;
  run_ok({.argv = {"only-here"},
          .environment = {{"PATH", directory.path().string() + ":/usr/bin:/bin"}},
          .on_stdout_line = lines.callback()});
  CHECK(lines.lines == std::vector<std::string>{"found me"});
}

TEST_CASE("working directory is used, and a missing one is a clear error") {
  TempDir directory;
  std::filesystem::create_directories(directory / "work");
  LineRecorder lines;
  run_ok({.argv = {"/bin/sh", "-c", "pwd -P"},
          .working_directory = directory / "work",
          .on_stdout_line = lines.callback()});
  REQUIRE(lines.lines.size() == 1);
  CHECK(lines.lines[0] == std::filesystem::canonical(directory / "work").string());

  auto runner = llmprof::make_system_process_runner();
  const auto missing = runner->run({.argv = {"/bin/true"}, .working_directory = directory / "nowhere"});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::not_found);
  CHECK_THAT(missing.error().message, Catch::Contains((directory / "nowhere").string()));
  CHECK_THAT(missing.error().message, Catch::Contains("does not exist"));
}

TEST_CASE("a missing or non-executable program is Error(not_found), never exit code 127") {
  TempDir directory;
  auto runner = llmprof::make_system_process_runner();

  const auto not_on_path = runner->run({.argv = {"llmprof-no-such-tool-xyz", "--version"},
                                        .environment = {{"PATH", directory.path().string() + ":/bin"}}});
  REQUIRE_FALSE(not_on_path.has_value());
  CHECK(not_on_path.error().code == ErrorCode::not_found);
  CHECK(not_on_path.error().subject == "llmprof-no-such-tool-xyz");
  CHECK_THAT(not_on_path.error().message, Catch::Contains("'llmprof-no-such-tool-xyz' was not found on"));
  CHECK_THAT(not_on_path.error().message, Catch::Contains(directory.path().string()));  // where it looked
  CHECK_THAT(not_on_path.error().hint, Catch::Contains("PATH"));

  const auto no_file = runner->run({.argv = {(directory / "absent").string()}});
  REQUIRE_FALSE(no_file.has_value());
  CHECK(no_file.error().code == ErrorCode::not_found);
  CHECK_THAT(no_file.error().message, Catch::Contains("does not exist"));

  llmprof::testing::write_file(directory / "plain.sh", "#!/bin/sh\necho hi\n");  // no execute permission
  const auto not_executable = runner->run({.argv = {(directory / "plain.sh").string()}});
  REQUIRE_FALSE(not_executable.has_value());
  CHECK(not_executable.error().code == ErrorCode::not_found);
  CHECK_THAT(not_executable.error().message, Catch::Contains("cannot be executed"));
  CHECK_THAT(not_executable.error().hint, Catch::Contains("chmod +x"));

  // On PATH but not executable: named as such.
  const auto on_path_not_executable =
      runner->run({.argv = {"plain.sh"}, .environment = {{"PATH", directory.path().string()}}});
  REQUIRE_FALSE(on_path_not_executable.has_value());
  CHECK_THAT(on_path_not_executable.error().message, Catch::Contains("found but not executable"));
}

TEST_CASE("a program that exec cannot start is Error(process_failed) naming it") {
  TempDir directory;
  auto runner = llmprof::make_system_process_runner();
  const auto bad_interpreter = directory / "bad-interpreter.sh";
  llmprof::testing::write_file(bad_interpreter, "#!/nonexistent/interpreter\necho hi\n");
  std::filesystem::permissions(bad_interpreter, std::filesystem::perms::owner_all);
  const auto result = runner->run({.argv = {bad_interpreter.string()}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == ErrorCode::process_failed);
  CHECK_THAT(result.error().message, Catch::Contains(bad_interpreter.string()));
  CHECK_THAT(result.error().hint, Catch::Contains("#!"));
}

TEST_CASE("an output file that cannot be created is Error(io_error)") {
  TempDir directory;
  auto runner = llmprof::make_system_process_runner();
  const auto result = runner->run({.argv = {"/bin/true"}, .stdout_file = directory / "missing-dir" / "out.txt"});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == ErrorCode::io_error);
  CHECK_THAT(result.error().message, Catch::Contains("missing-dir/out.txt"));
}

// The runner's own timer ends these trees, so the test cannot wait for the script before it signals: the timeout
// is the script's head start (a shell forks and writes a line in milliseconds, even beside two busy loops), and
// the pid file, written after the set-up the test relies on, checks that it had it.
TEST_CASE("a timeout kills the whole process tree, grandchildren included") {
  TempDir directory;
  const auto pid_file = directory / "grandchild.pid";
  const auto script = write_script(directory, "tree.sh", "sleep 1000 &\necho $! > '" + pid_file.string() + "'\nwait\n");
  const auto started = std::chrono::steady_clock::now();
  const auto outcome = run_ok({.argv = {script.string()}, .timeout = 1000ms, .kill_grace = 5000ms});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  REQUIRE(holds_line(pid_file));  // the grandchild ran before the timeout
  CHECK(outcome.timed_out);
  CHECK_FALSE(outcome.interrupted);
  CHECK_FALSE(outcome.succeeded());
  REQUIRE(outcome.signal.has_value());
  CHECK(*outcome.signal == SIGTERM);  // the shell dies from the first, polite signal
  CHECK(outcome.describe() == "killed by signal 15 (SIGTERM) after timeout of 1s");
  CHECK(elapsed >= 1000ms);
  CHECK(elapsed < 5000ms);  // the grandchild went with SIGTERM too: no wait for the 5 s grace
  CHECK(await_gone(await_pid_file(pid_file)));
}

TEST_CASE("a tree that ignores SIGTERM gets SIGKILL after the grace") {
  TempDir directory;
  const auto pid_file = directory / "grandchild.pid";
  // An ignored signal stays ignored across fork/exec, so the grandchild ignores SIGTERM too. The pid file comes
  // after the trap: written, it says the whole tree ignored SIGTERM before the timeout.
  const auto script =
      write_script(directory, "stubborn.sh",
                   "trap '' TERM\nsleep 1000 &\necho $! > '" + pid_file.string() + "'\nwhile :; do sleep 0.05; done\n");
  const auto outcome = run_ok({.argv = {script.string()}, .timeout = 1000ms, .kill_grace = 300ms});
  REQUIRE(holds_line(pid_file));
  CHECK(outcome.timed_out);
  REQUIRE(outcome.signal.has_value());
  CHECK(*outcome.signal == SIGKILL);
  CHECK(outcome.wall_time >= 1300ms);
  CHECK(outcome.describe() == "killed by signal 9 (SIGKILL) after timeout of 1s");
  CHECK(await_gone(await_pid_file(pid_file)));
}

TEST_CASE("request_stop from another thread interrupts a run and blocks later runs until reset_stop") {
  TempDir directory;
  const auto pid_file = directory / "grandchild.pid";
  const auto script = write_script(directory, "long.sh", "sleep 1000 &\necho $! > '" + pid_file.string() + "'\nwait\n");
  auto runner = llmprof::make_system_process_runner();
  // The stop comes once the tree runs (its grandchild's pid written), not after a guessed time.
  std::thread stopper([&runner, &pid_file] {
    await_condition([&pid_file] { return holds_line(pid_file); });
    runner->request_stop();
  });
  const auto outcome = runner->run({.argv = {script.string()}, .timeout = 120s});
  stopper.join();
  REQUIRE(outcome.has_value());
  REQUIRE(holds_line(pid_file));
  CHECK(outcome->interrupted);
  CHECK_FALSE(outcome->timed_out);
  REQUIRE(outcome->signal.has_value());
  CHECK(*outcome->signal == SIGTERM);
  CHECK(outcome->describe() == "killed by signal 15 (SIGTERM) after a stop request");
  CHECK(await_gone(await_pid_file(pid_file)));

  const auto marker = directory / "marker";
  const auto after = runner->run({.argv = {"/bin/sh", "-c", "touch '" + marker.string() + "'"}});
  REQUIRE(after.has_value());
  CHECK(after->interrupted);
  CHECK_FALSE(after->exited);
  CHECK_FALSE(std::filesystem::exists(marker));  // it never ran

  runner->reset_stop();
  const auto again = runner->run({.argv = {"/bin/sh", "-c", "touch '" + marker.string() + "'"}});
  REQUIRE(again.has_value());
  CHECK(again->succeeded());
  CHECK(std::filesystem::exists(marker));
}

TEST_CASE("several MB on stdout and stderr at once do not deadlock") {
  TempDir directory;
  // ~4.5 MB per stream, written concurrently by two writers.
  const auto script = write_script(directory, "flood.sh",
                                   "yes 'stdout line of some length' | head -n 150000 &\n"
                                   "yes 'stderr line' | head -n 300000 >&2\nwait\n");
  std::size_t stdout_lines = 0;
  std::size_t stderr_lines = 0;
  bool all_stdout_equal = true;
  const auto outcome = run_ok({.argv = {script.string()},
                               .stderr_file = directory / "err.txt",
                               .on_stdout_line =
                                   [&](const std::string& line) {
                                     ++stdout_lines;
                                     all_stdout_equal = all_stdout_equal && line == "stdout line of some length";
                                   },
                               .on_stderr_line = [&](const std::string&) { ++stderr_lines; },
                               .timeout = 20s});
  CHECK(outcome.succeeded());
  CHECK(stdout_lines == 150000);
  CHECK(all_stdout_equal);
  CHECK(stderr_lines == 300000);
  CHECK(std::filesystem::file_size(directory / "err.txt") == 300000u * std::string("stderr line\n").size());
}

TEST_CASE("a background process that keeps the pipe open does not hold the run") {
  TempDir directory;
  const auto pid_file = directory / "background.pid";
  const auto script =
      write_script(directory, "leave.sh", "sleep 30 &\necho $! > '" + pid_file.string() + "'\necho done\n");
  LineRecorder lines;
  const auto started = std::chrono::steady_clock::now();
  const auto outcome = run_ok({.argv = {script.string()}, .on_stdout_line = lines.callback()});
  CHECK(std::chrono::steady_clock::now() - started < 3s);
  CHECK(outcome.succeeded());
  CHECK(lines.lines == std::vector<std::string>{"done"});
  ::kill(await_pid_file(pid_file), SIGKILL);  // left alone by design after a normal exit
}

TEST_CASE("an exception from a line callback stops the child and reaches the caller") {
  TempDir directory;
  const auto script = write_script(directory, "chatty.sh", "echo hello\nexec sleep 1000\n");
  auto runner = llmprof::make_system_process_runner();
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(
      runner->run({.argv = {script.string()},
                   .on_stdout_line = [](const std::string&) { throw std::runtime_error("callback broke"); }}),
      "callback broke");
  CHECK(std::chrono::steady_clock::now() - started < 3s);
}

TEST_CASE("find_executable searches a directory list, skips non-executables") {
  TempDir first;
  TempDir second;
  write_script(second, "tool", "exit 0\n");
  llmprof::testing::write_file(first / "tool", "not executable");
  const std::string path = first.path().string() + ":" + second.path().string();
  CHECK(llmprof::find_executable("tool", path) == second / "tool");
  CHECK(llmprof::find_executable("absent-tool", path).empty());
  CHECK(llmprof::find_executable("sh", "/nonexistent:/bin") == std::filesystem::path("/bin/sh"));
  CHECK(llmprof::find_executable((second / "tool").string(), "") == second / "tool");
  CHECK(llmprof::find_executable((first / "tool").string(), "").empty());
  CHECK_FALSE(llmprof::find_executable("sh").empty());  // empty list: this process's PATH
}

TEST_CASE("FakeProcessRunner answers by rule, records specs, writes outputs and files") {
  using namespace llmprof::testing;
  TempDir directory;
  FakeProcessRunner runner;
  runner.on(command_is("nsys", {"--version"}), FakeAnswer::printing({"NVIDIA Nsight Systems version 2025.3.1"}))
      .on(nsys_capture(), FakeAnswer::exiting(0).writing("{output}.nsys-rep", "report"), 1)
      .on(nsys_capture(), FakeAnswer::exiting(1).with_stderr({"second profile fails"}))
      .on(argv_contains("--boom"), FakeAnswer::timing_out(SIGKILL));

  LineRecorder lines;
  const auto version = runner.run({.argv = {"/opt/nsys/bin/nsys", "--version"}, .on_stdout_line = lines.callback()});
  REQUIRE(version.has_value());
  CHECK(version->succeeded());
  CHECK(lines.lines == std::vector<std::string>{"NVIDIA Nsight Systems version 2025.3.1"});

  const auto profile = runner.run({.argv = {"nsys", "profile", "-o", "out/profile", "app"},
                                   .working_directory = directory.path(),
                                   .stdout_file = directory / "log.txt"});
  REQUIRE(profile.has_value());
  CHECK(profile->succeeded());
  CHECK(read_file(directory / "out/profile.nsys-rep") == "report");

  const auto second = runner.run({.argv = {"nsys", "profile", "-o", "x"},
                                  .stdout_file = directory / "log.txt",
                                  .stderr_file = directory / "log.txt"});
  REQUIRE(second.has_value());
  CHECK(second->exit_code == 1);
  CHECK(read_file(directory / "log.txt") == "second profile fails\n");

  const auto boom = runner.run({.argv = {"app", "--boom"}, .timeout = 5s});
  REQUIRE(boom.has_value());
  CHECK(boom->describe() == "killed by signal 9 (SIGKILL) after timeout of 5s");

  const auto unknown = runner.run({.argv = {"ncu", "--list-sets"}});
  REQUIRE_FALSE(unknown.has_value());
  CHECK_THAT(unknown.error().message, Catch::Contains("ncu --list-sets"));

  runner.request_stop();
  const auto stopped = runner.run({.argv = {"nsys", "--version"}});
  REQUIRE(stopped.has_value());
  CHECK(stopped->interrupted);
  runner.reset_stop();
  CHECK(runner.run({.argv = {"nsys", "--version"}})->succeeded());
  CHECK(runner.argvs().size() == 7);
  CHECK(runner.argvs()[1] == std::vector<std::string>{"nsys", "profile", "-o", "out/profile", "app"});
}
