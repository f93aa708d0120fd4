// find_preset / resolve_config_sources: turn "--preset quick --config mine.toml k=v" into the ordered list
// of files and overrides load_config layers (default file first, always).
#include <algorithm>
#include <set>

#include "config/config_schema.hpp"
#include "core/text.hpp"
#include "llmprof/config.hpp"

namespace llmprof {
namespace {

constexpr const char* kDefaultConfigName = "deep-profile";

std::set<std::string> presets_in(const std::vector<std::filesystem::path>& search_dirs) {
  std::set<std::string> names;
  for (const auto& dir : search_dirs) {
    std::error_code error;
    for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      if (it->path().extension() == ".toml") names.insert(it->path().stem().string());
    }
  }
  return names;
}

}  // namespace

Result<std::filesystem::path> find_preset(const std::string& name,
                                          const std::vector<std::filesystem::path>& search_dirs) {
  std::string stem = name;
  if (stem.size() > 5 && stem.ends_with(".toml")) stem.resize(stem.size() - 5);
  if (stem.empty() || stem.find_first_of("/\\") != std::string::npos || stem == "." || stem == "..") {
    return make_error(ErrorCode::invalid_argument, "'" + name + "' is not a preset name",
                      "a preset is a name such as quick, thorough or serving; a file is a path, not a preset name", name);
  }
  std::vector<std::string> searched;
  for (const auto& dir : search_dirs) {
    const auto candidate = dir / (stem + ".toml");
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) return candidate;
    searched.push_back(dir.string());
  }
  if (search_dirs.empty()) {
    return make_error(ErrorCode::not_found, "no preset '" + stem + "': no configuration directory to search",
                      "set LLMPROF_CONFIG_DIR to the directory holding deep-profile.toml", stem);
  }
  const auto available = presets_in(search_dirs);
  const std::vector<std::string> names(available.begin(), available.end());
  std::string hint = names.empty() ? "none of these directories holds a .toml file; set LLMPROF_CONFIG_DIR to the "
                                     "directory holding deep-profile.toml (config/ in the source tree)"
                                   : "available presets: " + detail::join(names, ", ");
  const std::string nearest = detail::nearest_candidate(stem, names);
  if (!nearest.empty()) hint = "did you mean " + nearest + "? " + hint;
  return make_error(ErrorCode::not_found,
                    "no preset '" + stem + "' (looked for " + stem + ".toml in " + detail::join(searched, ", ") + ")",
                    std::move(hint), stem);
}

Result<ConfigSources> resolve_config_sources(const ConfigSelection& selection,
                                             const std::vector<std::filesystem::path>& search_dirs) {
  ConfigSources sources;
  auto defaults = find_preset(kDefaultConfigName, search_dirs);
  if (!defaults) {
    Error error = defaults.error();
    error.message = "the default configuration deep-profile.toml was not found: " + error.message;
    return error;
  }
  sources.files.push_back(*defaults);
  if (!selection.preset.empty()) {
    auto preset = find_preset(selection.preset, search_dirs);
    if (!preset) return preset.error();
    if (*preset != *defaults) sources.files.push_back(*preset);
  }
  for (const auto& file : selection.config_files) sources.files.push_back(file);
  sources.overrides = selection.overrides;
  return sources;
}

}  // namespace llmprof
