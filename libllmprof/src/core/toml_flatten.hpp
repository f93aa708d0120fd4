// TOML parsing and flattening for reports, comparisons and sweep plans: one syntax error message, and nested tables
// become dotted keys.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "llmprof/result.hpp"

namespace llmprof::detail {

using FlatEntries = std::vector<std::pair<std::string, std::string>>;

// Every leaf of `table` as ("section.key", text), sorted by key. Arrays are leaves, written as
// TOML arrays. quote_strings=false writes top-level string values bare (as typed after --set k=).
void flatten_toml_table(const toml::table& table, const std::string& prefix, bool quote_strings, FlatEntries& out);

// Parses TOML text; a syntax error is a parse_error naming `source` with line and column.
Result<toml::table> parse_toml_text(std::string_view text, const std::string& source);

// Parses TOML text and flattens it; a syntax error is a parse_error naming `source` with line and column.
Result<FlatEntries> flatten_toml_text(std::string_view text, const std::string& source);

}  // namespace llmprof::detail
