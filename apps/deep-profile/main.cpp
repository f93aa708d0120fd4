// deep-profile entry point: dispatches to the registered subcommand.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "command.hpp"
#include "llmprof/logging.hpp"

namespace deep_profile {
std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace deep_profile

namespace {
void print_usage(std::ostream& out) {
  auto commands = deep_profile::command_registry();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  out << "usage: deep-profile <command> [options]\n\ncommands:\n";
  for (const auto& command : commands) {
    out << "  " << command.name << std::string(command.name.size() < 10 ? 10 - command.name.size() : 1, ' ')
        << command.summary << "\n";
  }
  out << "\n`deep-profile <command> --help` describes a command's options.\n";
}

// A programming error that escapes as an exception would otherwise abort with nothing but "exit 134" (seen once
// in CI under heavy load and not reproduced since): name the exception before aborting, so the log says what broke.
[[noreturn]] void report_uncaught_exception() {
  std::cerr << "deep-profile: internal error: ";
  try {
    if (const auto current = std::current_exception()) std::rethrow_exception(current);
    std::cerr << "std::terminate called without an active exception";
  } catch (const std::exception& error) {
    std::cerr << "uncaught exception: " << error.what();
  } catch (...) {
    std::cerr << "uncaught exception of an unknown type";
  }
  std::cerr << " (please report it with deep-profile.log)" << std::endl;
  std::abort();
}
}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(report_uncaught_exception);
  // The library is silent by default (a harness decides where its lines go); the CLI shows them on stderr.
  // Subcommands that print their own progress (run, sweep) lower this to errors.
  llmprof::init_logging({});
  if (argc < 2) {
    print_usage(std::cerr);
    return deep_profile::exit_usage;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return deep_profile::exit_ok;
  }
  for (const auto& command : deep_profile::command_registry()) {
    if (command.name == name) return command.run(std::vector<std::string>(argv + 2, argv + argc));
  }
  std::cerr << "deep-profile: unknown command '" << name << "'\n\n";
  print_usage(std::cerr);
  return deep_profile::exit_usage;
}
