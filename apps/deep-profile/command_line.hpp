// The command-line plumbing every deep-profile subcommand shares: parse with program_options, print
// --help, and turn a usage error into one message plus the usage text and exit status 2.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace deep_profile {

// What a subcommand accepts. Fill `options` (shown by --help; "help,h" is added by
// parse_command_line), and for positional arguments `hidden` and `positional`.
struct CommandSyntax {
  CommandSyntax(std::string name_, std::string usage_) : name(std::move(name_)), usage(std::move(usage_)) {}
  std::string name;   // "report": messages start "deep-profile report: "
  std::string usage;  // printed before the options, on --help and after a usage error
  boost::program_options::options_description options{"options"};
  boost::program_options::options_description hidden;  // targets of positional arguments
  boost::program_options::positional_options_description positional;
  bool workload_after_separator = false;  // words after "--" are a workload's argv, not ours
};

struct CommandLine {
  boost::program_options::variables_map values;
  boost::program_options::parsed_options parsed{nullptr};  // in command-line order, for --set/--config
  std::vector<std::string> workload;                       // the words after "--"
  std::optional<int> finished;  // set when the command is done: --help printed (0) or a usage error (2)
};

CommandLine parse_command_line(CommandSyntax& syntax, const std::vector<std::string>& args);

// Prints "deep-profile <name>: <message>", the usage and the options to stderr; returns exit_usage.
int usage_error(const CommandSyntax& syntax, std::string_view message);

}  // namespace deep_profile
