// TOML flattening (see report_toml.hpp).
#include "core/toml_flatten.hpp"

#include <algorithm>
#include <sstream>

namespace llmprof::detail {
namespace {

std::string node_text(const toml::node& node, bool quote_strings) {
  if (const auto* text = node.as_string(); text != nullptr && !quote_strings) return text->get();
  std::ostringstream out;
  if (const auto* array = node.as_array()) {
    out << *array;
  } else {
    node.visit([&](const auto& value) { out << value; });
  }
  return out.str();
}

void flatten_into(const toml::table& table, const std::string& prefix, bool quote_strings, FlatEntries& out) {
  for (const auto& [key, node] : table) {
    const std::string name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* child = node.as_table()) {
      flatten_into(*child, name, quote_strings, out);
    } else {
      out.emplace_back(name, node_text(node, quote_strings));
    }
  }
}

}  // namespace

void flatten_toml_table(const toml::table& table, const std::string& prefix, bool quote_strings, FlatEntries& out) {
  FlatEntries entries;
  flatten_into(table, prefix, quote_strings, entries);
  std::sort(entries.begin(), entries.end());
  out.insert(out.end(), entries.begin(), entries.end());
}

Result<toml::table> parse_toml_text(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& failure) {
    const auto& where = failure.source().begin;
    return make_error(ErrorCode::parse_error,
                      source + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                          ": not valid TOML: " + std::string(failure.description()),
                      "fix the TOML syntax at that line", source);
  }
}

Result<FlatEntries> flatten_toml_text(std::string_view text, const std::string& source) {
  auto table = parse_toml_text(text, source);
  if (!table) return table.error();
  FlatEntries entries;
  flatten_toml_table(*table, "", true, entries);
  return entries;
}

}  // namespace llmprof::detail
