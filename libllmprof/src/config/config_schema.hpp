// The configuration schema's internals: one ConfigField per dotted key, binding it to its member of
// DeepProfileConfig. config_schema.cpp holds the table; loading, validation and writing all walk it, so
// a key exists in exactly one place.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/text.hpp"
#include "llmprof/config.hpp"

namespace llmprof::detail {

using StringTable = std::map<std::string, std::string>;
using StringList = std::vector<std::string>;

// A member holding one of an enum's values (OnEmptyGate, NcuReplayMode, ...): a TOML string that must
// be one of `names`, parsed when it is loaded, so nothing downstream compares strings.
struct ChoiceFieldRef {
  void* member = nullptr;
  std::span<const std::string_view> names;  // names[i] spells the enumerator whose value is i
  std::size_t (*get)(const void* member) = nullptr;
  void (*set)(void* member, std::size_t index) = nullptr;

  std::string_view current() const { return names[get(member)]; }
  // False (member unchanged) when `text` is none of the names.
  bool assign(std::string_view text) const {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == text) {
        set(member, i);
        return true;
      }
    }
    return false;
  }
};

// A pointer to the member a key sets; the alternative decides the TOML type the key takes. A GpuMetricsSetting
// is a TOML string parsed when it is loaded (parse_gpu_metrics_setting), like a choice.
using ConfigFieldRef = std::variant<std::string*, std::filesystem::path*, bool*, int*, std::int64_t*, double*,
                                    StringList*, StringTable*, std::optional<int>*, ChoiceFieldRef,
                                    GpuMetricsSetting*>;

// The ConfigFieldRef of a member: enums become a ChoiceFieldRef over their choice_names().
template <class Member>
ConfigFieldRef field_ref(Member* member) {
  if constexpr (std::is_enum_v<Member>) {
    return ChoiceFieldRef{member, choice_names(Member{}),
                          [](const void* m) { return static_cast<std::size_t>(*static_cast<const Member*>(m)); },
                          [](void* m, std::size_t i) { *static_cast<Member*>(m) = static_cast<Member>(i); }};
  } else {
    return member;
  }
}

// The error for a string that is none of a choice's names: the names, and the nearest one as the fix.
Error unknown_choice(const std::string& key, std::string_view value, std::span<const std::string_view> names,
                     const std::string& where);

// A numeric bound: value >= minimum (or > minimum when exclusive).
struct ConfigBound {
  double minimum = 0;
  bool exclusive = false;
};

// What validate_config checks for one key besides its type.
struct ConfigRules {
  std::optional<ConfigBound> bound;  // numbers (and a set optional integer)
  bool required = false;             // string, path or array must not be empty
  bool blank_elements = true;        // array elements may be empty strings
};

struct ConfigField {
  ConfigKeyInfo info;
  ConfigFieldRef (*locate)(DeepProfileConfig& config);
  ConfigRules rules;
};

// Where each key got its final value ("quick.toml:4:15", "command line override 'run.top_n_kernels=0'").
using ConfigOrigins = std::map<std::string, std::string>;
// validate_config, naming where an offending key was set when `origins` knows it.
Result<void> validate_config_values(const DeepProfileConfig& config, const ConfigOrigins& origins);

const std::vector<ConfigField>& config_fields();
const ConfigField* find_config_field(std::string_view key);

// The member bound to `field` in `config` (const access through the same locator).
ConfigFieldRef locate_field(const ConfigField& field, DeepProfileConfig& config);
ConfigFieldRef locate_field(const ConfigField& field, const DeepProfileConfig& config);

// The field's value as TOML text ("\"decode\"", "10", "[\"cuda\", \"nvtx\"]", "{ FOO = \"bar\" }");
// std::nullopt for an unset optional.
std::optional<std::string> render_field_value(const ConfigField& field, const DeepProfileConfig& config);

std::string quote_toml_string(std::string_view text);
std::string format_toml_float(double value);
std::string format_toml_key(std::string_view key);  // bare when it can be, else quoted

// The candidate nearest to `wrong` when it is close enough to be a plausible typo; empty otherwise.
std::string nearest_candidate(std::string_view wrong, const std::vector<std::string>& candidates);
// Every dotted key, plus the section names ("run", "nsys", ...).
std::vector<std::string> config_key_names();

}  // namespace llmprof::detail
