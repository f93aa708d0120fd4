// The one way tests run the real deep-profile binary: argv after "deep-profile", environment
// overrides on top of this process's environment, stdout/stderr captured, the exit status (128 + N
// for a death by signal N), and an optional callback with the child's pid (to send SIGINT).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

extern char** environ;  // NOLINT: the POSIX way to read the whole environment

namespace llmprof::testing {

struct CliOptions {
  std::map<std::string, std::string> environment;  // on top of this process's environment
  std::function<void(pid_t)> while_running;        // called once the child runs, e.g. to send SIGINT
  std::chrono::seconds timeout{300};               // then the child is killed and the test fails
};

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// PATH with tests/fake_tools first, then this process's PATH (the fakes' `#!/usr/bin/env python3`
// needs it).
inline std::string path_with_fake_tools() {
  const char* path = std::getenv("PATH");
  return fake_tool_path("").string() + ":" + (path == nullptr ? "/usr/bin:/bin" : path);
}

namespace detail {
inline std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string::npos) merged[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : overrides) merged[name] = value;
  std::vector<std::string> result;
  for (const auto& [name, value] : merged) result.push_back(name + "=" + value);
  return result;
}
}  // namespace detail

#ifdef LLMPROF_DEEP_PROFILE_EXE
// Runs `deep-profile ARGS...` with stdin from /dev/null and returns what it printed and its status.
inline CliResult run_deep_profile(const std::vector<std::string>& args, const CliOptions& options = {}) {
  std::vector<std::string> argv = {LLMPROF_DEEP_PROFILE_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::vector<std::string> environment = detail::environment_with(options.environment);
  std::vector<char*> c_argv, c_env;
  for (const auto& word : argv) c_argv.push_back(const_cast<char*>(word.c_str()));
  for (const auto& entry : environment) c_env.push_back(const_cast<char*>(entry.c_str()));
  c_argv.push_back(nullptr);
  c_env.push_back(nullptr);
  TempDir capture;
  const std::string out_file = (capture / "stdout.txt").string(), err_file = (capture / "stderr.txt").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(spawned == 0);
  if (options.while_running) options.while_running(pid);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL("deep-profile ran past " << options.timeout.count() << " s and was killed");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_file);
  result.err = read_file(err_file);
  UNSCOPED_INFO("deep-profile exit " << result.exit_code << "\nstdout:\n" << result.out << "\nstderr:\n" << result.err);
  return result;
}
#endif

}  // namespace llmprof::testing
