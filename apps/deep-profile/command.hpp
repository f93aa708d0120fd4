// Subcommand registry for deep-profile: each command_<name>.cpp registers one subcommand.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "llmprof/exit_code.hpp"

namespace deep_profile {

// Every subcommand returns one of the documented exit statuses (README "Exit codes"); a failed
// library call maps to one through llmprof::exit_code_for.
using llmprof::exit_code_for;
using enum llmprof::ExitCode;

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
