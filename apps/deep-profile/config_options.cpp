// Shared configuration options of deep-profile commands (see config_options.hpp).
#include "config_options.hpp"

#include <cstdlib>
#include <iostream>

#include "llmprof/exit_code.hpp"

namespace deep_profile {
namespace fs = std::filesystem;
namespace po = boost::program_options;

void add_config_options(po::options_description& options) {
  options.add_options()("config", po::value<std::vector<std::string>>()->composing(),
                        "a TOML file layered over the defaults and the preset (repeatable, applied in order)")(
      "preset", po::value<std::string>(), "a preset beside deep-profile.toml: quick, thorough, serving, sampled (a wrong name lists those found)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override one key, e.g. --set nsys.nvtx_capture=decode (repeatable; applied last)");
}

void add_override_words(po::options_description& hidden, po::positional_options_description& positional) {
  hidden.add_options()("override", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE words");
  positional.add("override", -1);
}

llmprof::Result<llmprof::ConfigSelection> config_selection_from(const po::parsed_options& parsed,
                                                                const std::string& positional_name) {
  llmprof::ConfigSelection selection;
  for (const auto& option : parsed.options) {
    for (const auto& value : option.value) {
      if (option.string_key == "preset") {
        selection.preset = value;
      } else if (option.string_key == "config") {
        selection.config_files.emplace_back(value);
      } else if (option.string_key == "set" || option.string_key == positional_name) {
        if (value.find('=') == std::string::npos) {
          return llmprof::make_error(
              llmprof::ErrorCode::invalid_argument, "'" + value + "' is not an override of the form section.key=value",
              "for example nsys.nvtx_capture=decode; `deep-profile config --keys` lists the keys", value);
        }
        selection.overrides.push_back(value);  // in command-line order: a later one wins
      }
    }
  }
  return selection;
}

std::optional<ProfilingCommandLine> parse_profiling_command_line(CommandSyntax& syntax,
                                                                 const std::vector<std::string>& args, int& exit) {
  add_config_options(syntax.options);
  add_override_words(syntax.hidden, syntax.positional);  // bare KEY=VALUE words, checked like --set
  syntax.workload_after_separator = true;
  const CommandLine line = parse_command_line(syntax, args);
  if (line.finished) {
    exit = *line.finished;
    return std::nullopt;
  }
  auto selection = config_selection_from(line.parsed);
  if (!selection) {
    exit = report_config_error(syntax.name, selection.error(), std::cerr);
    return std::nullopt;
  }
  return ProfilingCommandLine{selection.value(), line.workload};
}

std::vector<fs::path> config_search_dirs() {
  std::vector<fs::path> dirs;
  if (const char* dir = std::getenv("LLMPROF_CONFIG_DIR"); dir != nullptr && *dir != '\0') dirs.emplace_back(dir);
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) dirs.push_back(exe.parent_path().parent_path() / "share" / "llmprof" / "config");
  dirs.emplace_back(LLMPROF_SOURCE_CONFIG_DIR);
  return dirs;
}

llmprof::Result<llmprof::DeepProfileConfig> load_selected_config(const llmprof::ConfigSelection& selection,
                                                                 llmprof::ConfigSources* sources) {
  auto resolved = llmprof::resolve_config_sources(selection, config_search_dirs());
  if (!resolved) return resolved.error();
  if (sources != nullptr) *sources = *resolved;
  return llmprof::load_config(*resolved);
}

int report_config_error(std::string_view command, const llmprof::Error& error, std::ostream& out) {
  out << "deep-profile " << command << ": " << error.message << "\n";
  if (!error.hint.empty()) out << "  hint: " << error.hint << "\n";
  // The library's errors name no flags (a harness has none); on the command line these are the ways in.
  if (error.code == llmprof::ErrorCode::not_found && !error.subject.empty())
    out << "  hint: pass a file with --config PATH, or a preset with --preset NAME (deep-profile config --keys)\n";
  return llmprof::exit_usage;
}

}  // namespace deep_profile
