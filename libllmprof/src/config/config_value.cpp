// One TOML value set onto its configuration member, its type checked: what load_config (config.cpp) does for
// each key of each layer.
#include "config/config_value.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "config/toml_text_guard.hpp"
#include "core/text.hpp"

namespace llmprof::detail {

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

namespace {

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
      if (!*windows) return windows->error();
      config.nsys.capture_range_end = NsysCaptureRangeEnd::repeat;
      config.nsys.capture_windows = windows->value();
      return {};
    }
    return std::visit(
        [&](auto ref) -> Result<void> {
          if constexpr (std::is_same_v<decltype(ref), ChoiceFieldRef>) {
            return set_choice(ref);
          } else {
            return set(*ref, entry);
          }
        },
        locate_field(field_, config));
  }

  // A string that names no enumerator: kept aside rather than failing at once, because a later layer
  // may still replace it (only a key's final value must be valid).
  std::optional<Error> rejected_choice;

 private:
  const std::string& key() const { return field_.info.key; }

  // nsys spells a bounded repeat "repeat:N"; the config takes that spelling too and keeps the count in
  // nsys.capture_windows (so config.toml writes capture_range_end = "repeat" and capture_windows = N).
  // nullopt: not that spelling. An error where it is that spelling written wrong ("repeat:0", "REPEAT:2",
  // " repeat:2"), naming what is wrong: the list of choices alone did not say that repeat:N exists.
  std::optional<Result<int>> repeat_with_count() const {
    if (key() != "nsys.capture_range_end") return std::nullopt;
    const auto text = node_.value_exact<std::string>();
    if (!text) return std::nullopt;
    std::string folded(detail::trim(*text));
    std::transform(folded.begin(), folded.end(), folded.begin(), [](unsigned char c) { return std::tolower(c); });
    if (folded.rfind("repeat:", 0) != 0) return std::nullopt;
    const std::string count = folded.substr(7);
    const auto wrong = [&](const std::string& what, const std::string& fix) -> Result<int> {
      return make_error(ErrorCode::invalid_argument,
                        "configuration key " + key() + " is '" + *text + "': " + what + " (set at " + where_ + ")",
                        fix, key());
    };
    if (count.empty() || count.size() > 6 || count.find_first_not_of("0123456789") != std::string::npos)
      return wrong("the count after repeat: must be a whole number of windows from 1 to 999999",
                   "write repeat:N (e.g. repeat:2), or repeat for no bound");
    const int windows = std::stoi(count);
    if (windows < 1)
      return wrong("repeat:0 asks for no window at all",
                   "write repeat:N with N >= 1 (one report per window), or repeat for no bound");
    if (folded != *text)
      return wrong("nsys spells it in lower case without spaces", "write " + key() + "=repeat:" + count);
    return windows;
  }

  Result<void> set_choice(const ChoiceFieldRef& choice) {
    auto text = string_of(key(), node_, where_);
    if (!text) return text.error();
    if (!choice.assign(*text)) rejected_choice = unknown_choice(key(), *text, choice.names, where_);
    return {};
  }
  Result<void> set(std::string& member, const std::optional<std::string>&) {
    auto text = string_of(key(), node_, where_);
    if (!text) return text.error();
    member = std::move(*text);
    return {};
  }
  // Like a choice: a value that does not parse is kept aside, for a later layer may replace it.
  Result<void> set(GpuMetricsSetting& member, const std::optional<std::string>&) {
    auto text = string_of(key(), node_, where_);
    if (!text) return text.error();
    auto parsed = parse_gpu_metrics_setting(*text);
    if (!parsed) {
      Error error = parsed.error();
      error.message += " (set at " + where_ + ")";
      rejected_choice = std::move(error);
      return {};
    }
    member = *parsed;
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
  Result<void> set(StringList& member, const std::optional<std::string>&) {
    const toml::array* array = node_.as_array();
    if (array == nullptr) return wrong_type(key(), "string array", node_, where_);
    StringList values;
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
  Result<void> set(StringTable& member, const std::optional<std::string>& entry) {
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

}  // namespace

Result<void> assign_config_value(DeepProfileConfig& config, const ConfigField& field, const toml::node& node,
                                 const std::string& where, const std::optional<std::string>& entry,
                                 std::optional<Error>& rejected_choice) {
  FieldAssigner assigner(field, node, where);
  if (auto assigned = assigner.assign(config, entry); !assigned) return assigned;
  rejected_choice = std::move(assigner.rejected_choice);
  return {};
}

}  // namespace llmprof::detail
