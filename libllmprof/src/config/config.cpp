// load_config: layers TOML files and dotted command-line overrides onto DeepProfileConfig, checking every
// key against the schema (config_schema.cpp) and every value's type, then runs validate_config.
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

// "string \"ten\"", "integer 3", "array": what the user wrote, for wrong-type messages.
std::string describe_node(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "string " + detail::quote_toml_string(*node.value<std::string>());
    case toml::node_type::integer:
      return "integer " + std::to_string(*node.value<std::int64_t>());
    case toml::node_type::floating_point:
      return "float " + detail::format_toml_float(*node.value<double>());
    case toml::node_type::boolean:
      return std::string("boolean ") + (*node.value<bool>() ? "true" : "false");
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

std::string example_for(const std::string& type) {
  if (type == "string" || type == "path") return "\"text\"";
  if (type == "integer") return "10";
  if (type == "float") return "2.5";
  if (type == "boolean") return "true";
  if (type == "string array") return "[\"a\", \"b\"]";
  if (type == "table") return "{ NAME = \"value\" }";
  return "";
}

Error wrong_type(const std::string& key, const std::string& expected, const toml::node& got, const std::string& where) {
  return make_error(
      ErrorCode::invalid_argument,
      "configuration key " + key + " expects " + expected + ", got " + describe_node(got) + " at " + where,
      "write it as " + key.substr(key.find('.') + 1) + " = " + example_for(expected) + " in a file, or " + key + "=" +
          example_for(expected) + " on the command line",
      key);
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

Result<std::string> string_of(const std::string& key, const toml::node& node, const std::string& where) {
  if (auto text = node.value_exact<std::string>()) return *text;
  return wrong_type(key, "string", node, where);
}

// Sets one member from one TOML node; `entry` names a single table entry (workload.env.FOO=bar).
class FieldAssigner {
 public:
  FieldAssigner(const ConfigField& field, const toml::node& node, std::string where)
      : field_(field), node_(node), where_(std::move(where)) {}

  Result<void> assign(DeepProfileConfig& config, const std::optional<std::string>& entry) {
    if (auto windows = repeat_with_count(); windows) {
      config.nsys.capture_range_end = NsysCaptureRangeEnd::repeat;
      config.nsys.capture_windows = *windows;
      return {};
    }
    return std::visit(
        [&](auto ref) -> Result<void> {
          if constexpr (std::is_same_v<decltype(ref), detail::ChoiceFieldRef>) {
            return set_choice(ref);
          } else {
            return set(*ref, entry);
          }
        },
        detail::locate_field(field_, config));
  }

  // A string that names no enumerator: kept aside rather than failing at once, because a later layer
  // may still replace it (only a key's final value must be valid).
  std::optional<Error> rejected_choice;

 private:
  const std::string& key() const { return field_.info.key; }

  // nsys spells a bounded repeat "repeat:N"; the config takes that spelling too and keeps the count in
  // nsys.capture_windows (so config.toml writes capture_range_end = "repeat" and capture_windows = N).
  std::optional<int> repeat_with_count() const {
    if (key() != "nsys.capture_range_end") return std::nullopt;
    const auto text = node_.value_exact<std::string>();
    if (!text || text->rfind("repeat:", 0) != 0) return std::nullopt;
    const std::string count = text->substr(7);
    if (count.empty() || count.size() > 6 || count.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    const int windows = std::stoi(count);
    if (windows < 1) return std::nullopt;
    return windows;
  }

  Result<void> set_choice(const detail::ChoiceFieldRef& choice) {
    auto text = string_of(key(), node_, where_);
    if (!text) return text.error();
    if (!choice.assign(*text)) rejected_choice = detail::unknown_choice(key(), *text, choice.names, where_);
    return {};
  }
  Result<void> set(std::string& member, const std::optional<std::string>&) {
    auto text = string_of(key(), node_, where_);
    if (!text) return text.error();
    member = std::move(*text);
    return {};
  }
  Result<void> set(std::filesystem::path& member, const std::optional<std::string>& entry) {
    std::string text;
    if (auto result = set(text, entry); !result) return result;
    member = text;
    return {};
  }
  Result<void> set(bool& member, const std::optional<std::string>&) {
    if (auto value = node_.value_exact<bool>()) {
      member = *value;
      return {};
    }
    return wrong_type(key(), "boolean", node_, where_);
  }
  Result<void> set(std::int64_t& member, const std::optional<std::string>&) {
    if (auto value = node_.value_exact<std::int64_t>()) {
      member = *value;
      return {};
    }
    return wrong_type(key(), "integer", node_, where_);
  }
  Result<void> set(int& member, const std::optional<std::string>& entry) {
    std::int64_t wide = 0;
    if (auto result = set(wide, entry); !result) return result;
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
      return make_error(ErrorCode::invalid_argument, "configuration key " + key() + " is out of range at " + where_,
                        "use a value between " + std::to_string(std::numeric_limits<int>::min()) + " and " +
                            std::to_string(std::numeric_limits<int>::max()),
                        key());
    }
    member = static_cast<int>(wide);
    return {};
  }
  Result<void> set(std::optional<int>& member, const std::optional<std::string>& entry) {
    int value = 0;
    if (auto result = set(value, entry); !result) return result;
    member = value;
    return {};
  }
  Result<void> set(double& member, const std::optional<std::string>&) {
    // An integer is a fine float ("timeout_s = 600"); the reverse is not.
    if (node_.is_floating_point() || node_.is_integer()) {
      member = *node_.value<double>();
      return {};
    }
    return wrong_type(key(), "float", node_, where_);
  }
  Result<void> set(detail::StringList& member, const std::optional<std::string>&) {
    const toml::array* array = node_.as_array();
    if (array == nullptr) return wrong_type(key(), "string array", node_, where_);
    detail::StringList values;
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      auto text = element.value_exact<std::string>();
      if (!text) {
        return make_error(ErrorCode::invalid_argument,
                          "configuration key " + key() + " expects a string array, but element " + std::to_string(i) +
                              " is " + describe_node(element) + " at " + where_,
                          "quote every element: [\"a\", \"b\"]", key());
      }
      values.push_back(std::move(*text));
    }
    member = std::move(values);
    return {};
  }
  Result<void> set(detail::StringTable& member, const std::optional<std::string>& entry) {
    if (entry) {
      auto text = string_of(key() + "." + *entry, node_, where_);
      if (!text) return text.error();
      member[*entry] = std::move(*text);
      return {};
    }
    const toml::table* table = node_.as_table();
    if (table == nullptr) return wrong_type(key(), "table", node_, where_);
    for (auto&& [name, value] : *table) {
      auto text = string_of(key() + "." + std::string(name.str()), value, where_);
      if (!text) return text.error();
      member[std::string(name.str())] = std::move(*text);  // tables merge key by key across layers
    }
    return {};
  }

  const ConfigField& field_;
  const toml::node& node_;
  std::string where_;
};

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
    FieldAssigner assigner(field, node, where);
    if (auto assigned = assigner.assign(config_, entry); !assigned) return assigned;
    if (assigner.rejected_choice) {
      rejected_choices_.insert_or_assign(field.info.key, *assigner.rejected_choice);
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
  std::map<std::string, Error> rejected_choices_;  // by key: the last value given named no enumerator
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
    return make_error(ErrorCode::not_found, "configuration file " + file.string() + " does not exist or is not a file",
                      "check the --config path, or use --preset NAME for a preset in config/", file.string());
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
                        "'" + section + "' must be a table ([" + section + "]), got " + describe_node(section_node) +
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
