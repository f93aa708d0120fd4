// Enumerated options and their spellings: one table per enum, read by the config schema (to parse and
// write config files), by the command builders (to write argv) and by `deep-profile config --keys`.
//
// An enum takes part by declaring, next to it, `std::span<const std::string_view> choice_names(Enum)`
// whose i-th entry spells the enumerator whose value is i (enumerators 0, 1, 2, ... in order).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace llmprof {

// The spelling of `value` ("app-range" for NcuReplayMode::app_range).
template <class Enum>
std::string_view choice_name(Enum value) {
  return choice_names(Enum{})[static_cast<std::size_t>(value)];
}

// The enumerator spelled `text` exactly; nullopt for any other text.
template <class Enum>
std::optional<Enum> parse_choice(std::string_view text) {
  const auto names = choice_names(Enum{});
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

// "a, b, c": every spelling, for messages.
template <class Enum>
std::string choice_list(Enum = {}) {
  std::string text;
  for (const auto name : choice_names(Enum{})) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

}  // namespace llmprof
