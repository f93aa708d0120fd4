// The configuration options every deep-profile command that loads a config shares:
// --config FILE (repeatable), --preset NAME, --set KEY=VALUE (repeatable), and bare KEY=VALUE words.
#pragma once

#include <boost/program_options.hpp>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/config.hpp"

namespace deep_profile {

// Adds --config, --preset and --set to `options`.
void add_config_options(boost::program_options::options_description& options);

// The selection the parsed options name, overrides in command-line order: --set values and the
// values of the option named `positional_name` (bare KEY=VALUE words a command maps to a positional
// option), each of which must contain '=' (else an error naming the word).
llmprof::Result<llmprof::ConfigSelection> config_selection_from(const boost::program_options::parsed_options& parsed,
                                                                const std::string& positional_name = "override");

// Where deep-profile.toml and the presets are looked for, in order: $LLMPROF_CONFIG_DIR,
// <exe>/../share/llmprof/config (the install), then the source tree's config/ (a build tree).
std::vector<std::filesystem::path> config_search_dirs();

// Resolves the selection against config_search_dirs() and loads it. `sources` (optional) receives the
// files and overrides that were layered, for provenance.
llmprof::Result<llmprof::DeepProfileConfig> load_selected_config(const llmprof::ConfigSelection& selection,
                                                                 llmprof::ConfigSources* sources = nullptr);

// "deep-profile <command>: <message>\n  hint: <hint>\n" on `out`; callers then return exit_usage.
void print_config_error(std::string_view command, const llmprof::Error& error, std::ostream& out);

}  // namespace deep_profile
