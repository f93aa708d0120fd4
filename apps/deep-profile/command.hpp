// Subcommand registry for deep-profile: each command_<name>.cpp registers one subcommand.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace deep_profile {

// Documented exit codes (README "Exit codes"); every subcommand returns one of these.
enum ExitCode : int {
  exit_ok = 0,             // everything that was asked for succeeded
  exit_incomplete = 1,     // the run finished but a requested stage failed or was skipped
  exit_usage = 2,          // bad command line or configuration (unknown key, wrong type)
  exit_environment = 3,    // the machine is not ready: tool missing, unwritable runs root, no space
  exit_input = 4,          // an input file or run directory is missing or unparsable
  exit_regression = 5,     // compare --fail-if-slower found a regression
  exit_timeout = 124,      // a stage ran past its timeout and was killed
  exit_interrupted = 130,  // SIGINT/SIGTERM stopped the run; artifacts and manifest are kept
};

struct Command {
  std::string name;
  std::string summary;  // one line for `deep-profile --help`
  // argv after the subcommand name; returns an ExitCode.
  std::function<int(const std::vector<std::string>& args)> run;
};

std::vector<Command>& command_registry();

struct CommandRegistrar {
  explicit CommandRegistrar(Command command) { command_registry().push_back(std::move(command)); }
};

}  // namespace deep_profile
