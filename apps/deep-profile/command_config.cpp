// deep-profile config: prints the resolved configuration as TOML (what a run would write to
// MAIN/config.toml), or with --keys every key with its type, allowed values and description.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "command.hpp"
#include "config_options.hpp"

namespace deep_profile {
namespace {
namespace po = boost::program_options;

const char* const usage_text =
    "usage: deep-profile config [--config FILE]... [--preset NAME] [--set KEY=VALUE]... [KEY=VALUE]... [--keys]\n\n"
    "Prints the configuration a run would use: config/deep-profile.toml, then the preset, then each --config\n"
    "file, then the overrides, checked against the schema. --keys lists every key instead.\n"
    "Overrides apply in command-line order (a later one wins).\n"
    "exit codes: 0 ok; 2 bad command line or configuration (unknown key, wrong type, missing file).\n";

void print_keys(std::ostream& out) {
  const auto& schema = llmprof::config_schema();
  std::size_t key_width = 0;
  for (const auto& info : schema) key_width = std::max(key_width, info.key.size());
  for (const auto& info : schema) {
    out << std::left << std::setw(static_cast<int>(key_width) + 2) << info.key << std::setw(14) << info.type
        << info.description;
    if (!info.allowed_values.empty()) {
      out << " [";
      for (std::size_t i = 0; i < info.allowed_values.size(); ++i) out << (i ? "|" : "") << info.allowed_values[i];
      out << "]";
    }
    if (!info.constraint.empty()) out << " (" << info.constraint << ")";
    out << "\n";
  }
}

int run_config_command(const std::vector<std::string>& args) {
  CommandSyntax syntax("config", usage_text);
  syntax.options.add_options()("keys", "list every key with its type and description");
  add_config_options(syntax.options);
  syntax.hidden.add_options()("override", po::value<std::vector<std::string>>(), "KEY=VALUE words");
  syntax.positional.add("override", -1);
  const CommandLine line = parse_command_line(syntax, args);
  if (line.finished) return *line.finished;
  if (line.values.count("keys") != 0) {
    print_keys(std::cout);
    return exit_ok;
  }

  auto selection = config_selection_from(line.parsed);
  if (!selection) return report_config_error("config", selection.error(), std::cerr);
  llmprof::ConfigSources sources;
  auto config = load_selected_config(*selection, &sources);
  if (!config) return report_config_error("config", config.error(), std::cerr);
  // Provenance as TOML comments, so the output stays loadable.
  for (const auto& file : sources.files) std::cout << "# layered: " << file.string() << "\n";
  for (auto override_text : sources.overrides) {
    std::replace(override_text.begin(), override_text.end(), '\n', ' ');  // a comment is one line
    std::cout << "# override: " << override_text << "\n";
  }
  std::cout << llmprof::config_to_toml(*config);
  return exit_ok;
}

const CommandRegistrar registrar{
    Command{"config", "print the resolved configuration (or --keys: every key)", run_config_command}};

}  // namespace
}  // namespace deep_profile
