// Small helpers shared by the nsys and ncu builders' validation (not part of the public API).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"
#include "llmprof/tool_probe.hpp"

namespace llmprof::detail {

inline bool is_one_of(std::string_view value, std::initializer_list<std::string_view> allowed) {
  for (auto candidate : allowed) {
    if (value == candidate) return true;
  }
  return false;
}

inline std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string joined;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) joined += separator;
    joined += parts[i];
  }
  return joined;
}

inline std::string join_allowed(std::initializer_list<std::string_view> allowed) {
  std::string joined;
  for (auto value : allowed) {
    if (!joined.empty()) joined += ", ";
    joined += value;
  }
  return joined;
}

// An error for an option whose value is not one the tool takes, naming the values it does take.
inline std::optional<Error> check_choice(std::string_view option, const std::string& value,
                                         std::initializer_list<std::string_view> allowed) {
  if (value.empty() || is_one_of(value, allowed)) return std::nullopt;
  return make_error(ErrorCode::invalid_argument,
                    std::string(option) + " does not take '" + value + "'",
                    "use one of: " + join_allowed(allowed), std::string(option) + " " + value);
}

inline void add_warning(std::vector<std::string>* warnings, std::string text) {
  if (warnings != nullptr) warnings->push_back(std::move(text));
}

// The probe may have found a tool whose version it could not read: say so, do not reject.
inline void warn_about_probe(std::string_view tool_name, bool found, const std::optional<ToolVersion>& version,
                             std::vector<std::string>* warnings) {
  if (!found) {
    add_warning(warnings, std::string(tool_name) +
                              " was not found by the probe, so the command was checked without its capabilities");
  } else if (!version) {
    add_warning(warnings, std::string(tool_name) +
                              " version is unknown (the probe could not read it); options were not checked "
                              "against a version");
  }
}

}  // namespace llmprof::detail
