// Small helpers shared by the nsys and ncu builders' validation (not part of the public API).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.hpp"
#include "llmprof/result.hpp"
#include "llmprof/tool_probe.hpp"

namespace llmprof::detail {

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
