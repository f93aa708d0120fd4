// load_config: layers TOML files and dotted command-line overrides onto DeepProfileConfig, checking every
// key against the schema (config_schema.cpp) and every value's type (config_value.cpp), then runs validate_config.
#include "llmprof/config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include "config/config_schema.hpp"
#include "config/config_value.hpp"
#include "config/toml_text_guard.hpp"
#include "core/file_text.hpp"
#include "core/text.hpp"

namespace llmprof {
namespace {

using detail::ConfigField;
using detail::ConfigOrigins;

constexpr const char* kSections[] = {"run", "workload", "nsys", "ncu"};

std::string position(const std::string& source_name, const toml::source_region& region) {
  if (region.begin.line == 0) return source_name;
  return source_name + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

Error unknown_key(const std::string& key, const std::string& where) {
  const std::string nearest = detail::nearest_candidate(key, detail::config_key_names());
  std::string message = "unknown configuration key '" + key + "' at " + where;
  if (!nearest.empty()) message += "; did you mean " + nearest + "?";
  std::string section_keys;
  const std::string section = key.substr(0, key.find('.'));
  for (const auto& field : detail::config_fields()) {
    if (field.info.key.rfind(section + ".", 0) == 0)
      section_keys += (section_keys.empty() ? "" : ", ") + field.info.key;
  }
  std::string hint = section_keys.empty() ? "sections are [run], [workload], [nsys], [ncu]"
                                          : "keys of [" + section + "]: " + section_keys;
  hint += "; `deep-profile config --keys` describes every key";
  return make_error(ErrorCode::invalid_argument, std::move(message), std::move(hint), key);
}

class ConfigLayers {
 public:
  Result<void> apply_file(const std::filesystem::path& file);
  Result<void> apply_override(const std::string& text);
  Result<DeepProfileConfig> finish() {
    for (const auto& field : detail::config_fields()) {
      if (auto rejected = rejected_choices_.find(field.info.key); rejected != rejected_choices_.end())
        return rejected->second;
    }
    select_by_top_n_when_later();
    if (auto checked = detail::validate_config_values(config_, origins_); !checked) return checked.error();
    return std::move(config_);
  }

 private:
  Result<void> apply_table(const toml::table& root, const std::string& source_name);
  Result<void> apply_value(const ConfigField& field, const toml::node& node, const std::string& where,
                           const std::optional<std::string>& entry = std::nullopt) {
    std::optional<Error> rejected_choice;
    if (auto assigned = detail::assign_config_value(config_, field, node, where, entry, rejected_choice); !assigned)
      return assigned;
    if (rejected_choice) {
      rejected_choices_.insert_or_assign(field.info.key, *rejected_choice);
    } else {
      rejected_choices_.erase(field.info.key);
    }
    origins_[field.info.key] = where;
    layer_of_[field.info.key] = layer_;
    return {};
  }

  // run.kernel_coverage (default 0.9) selects by coverage, run.top_n_kernels by count. A layer (a file, an
  // override) that sets top_n_kernels after the last one that set kernel_coverage asks for the count: the
  // presets quick.toml and thorough.toml, `--set run.top_n_kernels=5`. Both in one layer: coverage, as written.
  void select_by_top_n_when_later() {
    const auto top_n = layer_of_.find("run.top_n_kernels");
    if (top_n == layer_of_.end()) return;
    const auto coverage = layer_of_.find("run.kernel_coverage");
    if (coverage != layer_of_.end() && coverage->second >= top_n->second) return;
    config_.run.kernel_coverage = 0;
    origins_["run.kernel_coverage"] = origins_["run.top_n_kernels"] + " (run.top_n_kernels set later)";
  }

  DeepProfileConfig config_;  // starts at the defaults, which equal config/deep-profile.toml (tested)
  ConfigOrigins origins_;
  int layer_ = 0;                         // the file or override being applied, counted from 1
  std::map<std::string, int> layer_of_;  // key -> the last layer that set it
  std::map<std::string, Error> rejected_choices_;  // by key: the last value given did not parse
};

Result<toml::table> parse_toml(const std::string& text, const std::string& source_name) {
  if (const auto unsafe = detail::find_unsafe_toml_text(text)) {
    return make_error(
        ErrorCode::parse_error, source_name + ": byte " + std::to_string(unsafe->first) + " " + unsafe->second,
        "save the file as UTF-8 text; keys and bare values are ASCII, other text belongs in quotes", source_name);
  }
#if TOML_EXCEPTIONS
  try {
    return toml::parse(std::string_view(text), std::string_view(source_name));
  } catch (const toml::parse_error& error) {
    const std::string where = position(source_name, error.source());
    return make_error(ErrorCode::parse_error, "TOML syntax error at " + where + ": " + std::string(error.description()),
                      "fix the line; TOML strings need quotes (key = \"value\")", where);
  }
#else
  toml::parse_result result = toml::parse(std::string_view(text), std::string_view(source_name));
  if (!result) {
    const std::string where = position(source_name, result.error().source());
    return make_error(ErrorCode::parse_error,
                      "TOML syntax error at " + where + ": " + std::string(result.error().description()),
                      "fix the line; TOML strings need quotes (key = \"value\")", where);
  }
  return std::move(result).table();
#endif
}

Result<void> ConfigLayers::apply_file(const std::filesystem::path& file) {
  ++layer_;
  std::error_code status_error;
  if (!std::filesystem::is_regular_file(file, status_error)) {
    // Said for a harness as much as for the CLI: no flag names here (the CLI adds its own, config_options.cpp).
    const std::string relative =
        file.is_relative() ? " (a relative path is taken from the current directory, " +
                                 std::filesystem::current_path(status_error).string() + ")"
                           : "";
    return make_error(ErrorCode::not_found, "configuration file " + file.string() + " does not exist or is not a file",
                      "check the path" + relative +
                          "; every default is already in DeepProfileConfig{}, so a program needs no file to start from",
                      file.string());
  }
  const auto text = detail::read_file_text(file);
  if (!text) {
    return make_error(ErrorCode::io_error, "cannot read configuration file " + file.string(),
                      "check the file's permissions", file.string());
  }
  auto table = parse_toml(*text, file.string());
  if (!table) return table.error();
  return apply_table(*table, file.string());
}

Result<void> ConfigLayers::apply_table(const toml::table& root, const std::string& source_name) {
  for (auto&& [section_key, section_node] : root) {
    const std::string section(section_key.str());
    const std::string section_where = position(source_name, section_key.source());
    if (std::find(std::begin(kSections), std::end(kSections), section) == std::end(kSections)) {
      return unknown_key(section, section_where);
    }
    const toml::table* section_table = section_node.as_table();
    if (section_table == nullptr) {
      return make_error(ErrorCode::invalid_argument,
                        "'" + section + "' must be a table ([" + section + "]), got " + detail::describe_node(section_node) +
                            " at " + section_where,
                        "put its keys under a [" + section + "] header", section);
    }
    for (auto&& [name, node] : *section_table) {
      const std::string key = section + "." + std::string(name.str());
      const ConfigField* field = detail::find_config_field(key);
      if (field == nullptr) return unknown_key(key, position(source_name, name.source()));
      if (auto applied = apply_value(*field, node, position(source_name, node.source())); !applied) return applied;
    }
  }
  return {};
}

// "section.key=value" (value as TOML where it parses, else a bare string); "section.table.NAME=value" sets
// one entry of a table key.
Result<void> ConfigLayers::apply_override(const std::string& text) {
  ++layer_;
  const auto equals = text.find('=');
  if (equals == std::string::npos) {
    return make_error(ErrorCode::invalid_argument, "override '" + text + "' is not of the form section.key=value",
                      "for example nsys.nvtx_capture=decode or run.top_n_kernels=10", text);
  }
  const std::string key(detail::trim(std::string_view(text).substr(0, equals)));
  const std::string raw(detail::trim(std::string_view(text).substr(equals + 1)));
  const std::string where = "command line override '" + text + "'";

  const ConfigField* field = detail::find_config_field(key);
  std::optional<std::string> entry;
  if (field == nullptr) {
    const auto first_dot = key.find('.');
    const auto second_dot = first_dot == std::string::npos ? std::string::npos : key.find('.', first_dot + 1);
    if (second_dot != std::string::npos) {
      const ConfigField* table_field = detail::find_config_field(key.substr(0, second_dot));
      if (table_field != nullptr && table_field->info.type == "table" && second_dot + 1 < key.size()) {
        field = table_field;
        entry = key.substr(second_dot + 1);
      }
    }
    if (field == nullptr) return unknown_key(key, where);
  }

  // Parse the value as TOML; anything that is not one TOML value is the bare string the user typed.
  const std::string document = "value = " + raw;
  std::optional<toml::table> parsed;
  // Text toml++ 3.3 cannot safely parse (see find_unsafe_text) is never handed to it: non-ASCII text
  // is taken as the bare string typed, invalid bytes and control characters are an error.
  const auto unsafe = detail::find_unsafe_toml_text(document);
  if (unsafe && unsafe->second.find("non-ASCII") == std::string::npos) {
    return make_error(ErrorCode::invalid_argument, "the value of " + key + " on the command line " + unsafe->second,
                      "remove control characters and invalid bytes from the value", raw);
  }
  if (!unsafe) {
#if TOML_EXCEPTIONS
    try {
      parsed = toml::parse(std::string_view(document), std::string_view("command line"));
    } catch (const toml::parse_error&) {
    }
#else
    if (auto result = toml::parse(std::string_view(document), std::string_view("command line")))
      parsed = std::move(result).table();
#endif
  }
  const toml::node* node = parsed && parsed->size() == 1 ? parsed->get("value") : nullptr;
  const bool wants_string = entry || field->info.type == "string" || field->info.type == "path";
  if (node == nullptr || (wants_string && !node->is_string())) {
    // nsys.nvtx_capture=decode, run.run_id=20250101: a string key takes the text as written.
    return apply_value(*field, toml::value<std::string>(raw), where, entry);
  }
  return apply_value(*field, *node, where, entry);
}

}  // namespace

Result<DeepProfileConfig> load_config(const ConfigSources& sources) {
  ConfigLayers layers;
  for (const auto& file : sources.files) {
    if (auto applied = layers.apply_file(file); !applied) return applied.error();
  }
  for (const auto& override_text : sources.overrides) {
    if (auto applied = layers.apply_override(override_text); !applied) return applied.error();
  }
  return layers.finish();
}

}  // namespace llmprof
