// One TOML value set onto its configuration member (config_value.cpp), for load_config (config.cpp).
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <string>

#include "config/config_schema.hpp"
#include "llmprof/config.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

// Sets `field`'s member of `config` from `node`, written at `where` (file:line:column or the override);
// `entry` names one entry of a table key (workload.env.FOO=bar). Errors: a value of the wrong type or out of
// range, with the key and how to write it. A string that names none of a choice key's values, or that is no
// nsys.gpu_metrics setting, is not an error here but goes to `rejected_choice` (unset otherwise): a later layer
// may still replace it.
Result<void> assign_config_value(DeepProfileConfig& config, const ConfigField& field, const toml::node& node,
                                 const std::string& where, const std::optional<std::string>& entry,
                                 std::optional<Error>& rejected_choice);

// "string \"ten\"", "integer 3", "an array": what the user wrote, for wrong-type messages.
std::string describe_node(const toml::node& node);

}  // namespace llmprof::detail
