// Shared command-line parsing of the subcommands (see command_line.hpp).
#include "command_line.hpp"

#include <algorithm>
#include <iostream>

#include "llmprof/exit_code.hpp"

namespace deep_profile {
namespace po = boost::program_options;

CommandLine parse_command_line(CommandSyntax& syntax, const std::vector<std::string>& args) {
  CommandLine line;
  auto own_end = args.end();
  if (syntax.workload_after_separator) {
    own_end = std::find(args.begin(), args.end(), "--");
    if (own_end != args.end()) line.workload.assign(own_end + 1, args.end());
  }
  const std::vector<std::string> own(args.begin(), own_end);
  syntax.options.add_options()("help,h", "this help");
  po::options_description all;
  all.add(syntax.options).add(syntax.hidden);
  try {
    line.parsed = po::command_line_parser(own).options(all).positional(syntax.positional).run();
    po::store(line.parsed, line.values);
    po::notify(line.values);
  } catch (const po::error& error) {
    line.finished = usage_error(syntax, error.what());
    return line;
  }
  if (line.values.count("help") != 0) {
    std::cout << syntax.usage << "\n" << syntax.options;
    line.finished = llmprof::exit_ok;
  }
  return line;
}

int usage_error(const CommandSyntax& syntax, std::string_view message) {
  std::cerr << "deep-profile " << syntax.name << ": " << message << "\n\n" << syntax.usage << "\n" << syntax.options;
  return llmprof::exit_usage;
}

}  // namespace deep_profile
