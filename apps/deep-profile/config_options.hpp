// The configuration options every deep-profile command that loads a config shares:
// --config FILE (repeatable), --preset NAME, --set KEY=VALUE (repeatable), and bare KEY=VALUE words.
#pragma once

#include <boost/program_options.hpp>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command_line.hpp"
#include "llmprof/config.hpp"

namespace deep_profile {

// Adds --config, --preset and --set to `options`.
void add_config_options(boost::program_options::options_description& options);

// Bare KEY=VALUE words (`deep-profile run nsys.nvtx_capture=prefill -- CMD`, as the header of
// config/deep-profile.toml documents): a hidden option "override" that takes every positional word,
// so config_selection_from checks and applies them exactly like --set, and no word is ignored.
void add_override_words(boost::program_options::options_description& hidden,
                        boost::program_options::positional_options_description& positional);

// The selection the parsed options name, overrides in command-line order: --set values and the
// values of the option named `positional_name` (bare KEY=VALUE words a command maps to a positional
// option), each of which must contain '=' (else an error naming the word).
llmprof::Result<llmprof::ConfigSelection> config_selection_from(const boost::program_options::parsed_options& parsed,
                                                                const std::string& positional_name = "override");

// The command line of a command that profiles a workload (run, sweep): `syntax`'s own options plus
// the configuration options, and the workload's argv after "--". nullopt when the command is done
// (--help printed, or a usage error reported), with `exit` set.
struct ProfilingCommandLine {
  llmprof::ConfigSelection selection;
  std::vector<std::string> workload;
};
std::optional<ProfilingCommandLine> parse_profiling_command_line(CommandSyntax& syntax,
                                                                 const std::vector<std::string>& args, int& exit);

// Where deep-profile.toml and the presets are looked for, in order: $LLMPROF_CONFIG_DIR,
// <exe>/../share/llmprof/config (the install), then the source tree's config/ (a build tree).
std::vector<std::filesystem::path> config_search_dirs();

// Resolves the selection against config_search_dirs() and loads it. `sources` (optional) receives the
// files and overrides that were layered, for provenance.
llmprof::Result<llmprof::DeepProfileConfig> load_selected_config(const llmprof::ConfigSelection& selection,
                                                                 llmprof::ConfigSources* sources = nullptr);

// Prints "deep-profile <command>: <message>\n  hint: <hint>\n" on `out` and returns exit_usage: a
// configuration the user named that cannot be used is a usage error whatever its ErrorCode (a missing
// --config file or preset, a TOML syntax error, an unknown key), as README's exit-code table says.
int report_config_error(std::string_view command, const llmprof::Error& error, std::ostream& out);

}  // namespace deep_profile
