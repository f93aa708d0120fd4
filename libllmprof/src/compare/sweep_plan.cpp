// Sweep plans from TOML ([[point]] tables) or repeated --point arguments (see sweep.hpp).
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "core/file_text.hpp"
#include "core/text.hpp"
#include "core/toml_flatten.hpp"
#include "llmprof/sweep.hpp"

namespace llmprof {
namespace {

// A label usable inside a run id: other characters become '-'.
std::string sanitize_label(const std::string& text) {
  std::string label;
  for (char c : text) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    label += safe ? c : '-';
  }
  // Collapse runs of '-' and trim them, so "a=[\"--batch\", \"4\"]" reads "a-batch-4".
  std::string collapsed;
  for (char c : label) {
    if (c == '-' && (collapsed.empty() || collapsed.back() == '-')) continue;
    collapsed += c;
  }
  while (!collapsed.empty() && collapsed.back() == '-') collapsed.pop_back();
  // Long labels keep both ends: points usually differ at the end of a value (an argv's "--batch 4").
  if (collapsed.size() > 60) collapsed = collapsed.substr(0, 28) + "--" + collapsed.substr(collapsed.size() - 30);
  return collapsed;
}

std::string default_label(const std::vector<SweepOverride>& overrides) {
  std::string text;
  for (const auto& entry : overrides) {
    const auto dot = entry.key.rfind('.');
    text += (text.empty() ? "" : "_") + (dot == std::string::npos ? entry.key : entry.key.substr(dot + 1)) + "-" +
            entry.value;
  }
  return sanitize_label(text);
}

Result<void> finish_plan(SweepPlan& plan, const std::string& source) {
  if (plan.points.empty()) {
    return make_error(ErrorCode::invalid_argument, source + " defines no sweep point",
                      "add [[point]] tables (TOML) or --point 'key=value,...' arguments", source);
  }
  std::set<std::string> labels, derived;
  bool derived_collide = false;
  for (auto& point : plan.points) {
    if (!point.label.empty() || point.overrides.empty()) continue;
    derived_collide = derived_collide || !derived.insert(default_label(point.overrides)).second;
  }
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    auto& point = plan.points[i];
    if (point.overrides.empty()) {
      return make_error(ErrorCode::invalid_argument, source + ": point " + std::to_string(i + 1) + " has no overrides",
                        "each point must change at least one configuration key", source);
    }
    // Unnamed points are labelled from their overrides; when two such labels would collide (long
    // values cut short), every unnamed point gets its position as a prefix instead of an error.
    if (point.label.empty()) {
      point.label = default_label(point.overrides);
      if (derived_collide || point.label.empty()) {
        point.label = sanitize_label("p" + std::to_string(i + 1) + (point.label.empty() ? "" : "-" + point.label));
      }
    }
    if (!labels.insert(point.label).second) {
      return make_error(ErrorCode::invalid_argument, source + ": two sweep points are labelled '" + point.label + "'",
                        "give each [[point]] a distinct name = \"...\"", point.label);
    }
  }
  return {};
}

// Splits on commas outside [...], {...} and quotes.
std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  parts.push_back(current);
  return parts;
}

}  // namespace

std::vector<std::string> SweepPoint::override_strings() const {
  std::vector<std::string> strings;
  for (const auto& entry : overrides) strings.push_back(entry.to_string());
  return strings;
}

Result<SweepPlan> parse_sweep_plan_toml(std::string_view toml_text, const std::string& source_name) {
  auto parsed = detail::parse_toml_text(toml_text, source_name);
  if (!parsed) return parsed.error();
  const toml::table& root = *parsed;
  for (const auto& [key, node] : root) {
    if (key.str() != "point") {
      return make_error(ErrorCode::invalid_argument,
                        source_name + ": unexpected top-level key '" + std::string(key.str()) + "'",
                        "a sweep plan holds only [[point]] tables", std::string(key.str()));
    }
  }
  SweepPlan plan;
  const auto* points = root.get("point");
  if (points != nullptr && !points->is_array_of_tables()) {
    return make_error(ErrorCode::invalid_argument, source_name + ": 'point' must be an array of tables",
                      "write each configuration as a [[point]] table", "point");
  }
  if (points != nullptr) {
    std::size_t number = 0;
    for (const auto& element : *points->as_array()) {
      ++number;
      toml::table table = *element.as_table();
      SweepPoint point;
      if (const auto* name = table.get("name")) {
        if (!name->is_string()) {
          return make_error(ErrorCode::invalid_argument,
                            source_name + ": point " + std::to_string(number) + ": name must be a string",
                            "write name = \"batch-4\"", "name");
        }
        point.label = sanitize_label(name->as_string()->get());
        table.erase("name");
      }
      detail::FlatEntries entries;
      detail::flatten_toml_table(table, "", false, entries);
      for (auto& [key, value] : entries) point.overrides.push_back({key, value});
      plan.points.push_back(std::move(point));
    }
  }
  if (auto finished = finish_plan(plan, source_name); !finished) return finished.error();
  return plan;
}

Result<SweepPlan> load_sweep_plan(const std::filesystem::path& toml_file) {
  const auto text = detail::read_file_text(toml_file);
  if (!text) {
    return make_error(ErrorCode::not_found, "cannot read sweep plan " + toml_file.string(),
                      "check the path given to `deep-profile sweep --plan`", toml_file.string());
  }
  return parse_sweep_plan_toml(*text, toml_file.string());
}

Result<SweepPlan> parse_sweep_points(const std::vector<std::string>& point_arguments) {
  SweepPlan plan;
  for (std::size_t i = 0; i < point_arguments.size(); ++i) {
    SweepPoint point;
    for (const auto& part : split_top_level(point_arguments[i])) {
      const std::string item(detail::trim(part));
      if (item.empty()) continue;
      const auto equals = item.find('=');
      if (equals == std::string::npos || equals == 0) {
        return make_error(ErrorCode::invalid_argument,
                          "--point argument " + std::to_string(i + 1) + ": '" + item + "' is not key=value",
                          "write --point 'section.key=value,section.other=value'", point_arguments[i]);
      }
      point.overrides.push_back(
          {std::string(detail::trim(item.substr(0, equals))), std::string(detail::trim(item.substr(equals + 1)))});
    }
    plan.points.push_back(std::move(point));
  }
  if (auto finished = finish_plan(plan, "--point"); !finished) return finished.error();
  return plan;
}

}  // namespace llmprof

namespace llmprof {

Result<void> check_sweep_settings_take_effect(const SweepPlan& plan, bool explicit_workload_command) {
  for (const auto& point : plan.points) {
    const auto overrides = [&point](const char* key) {
      return std::any_of(point.overrides.begin(), point.overrides.end(),
                         [key](const SweepOverride& entry) { return entry.key == key; });
    };
    if (!overrides("workload.example_args")) continue;
    if (!explicit_workload_command && !overrides("workload.argv")) continue;
    return make_error(ErrorCode::invalid_argument,
                      "sweep point '" + point.label +
                          "' sets workload.example_args, which has no effect with an explicit workload command "
                          "(-- CMD or workload.argv): the points would run the same command",
                      "sweep over the bundled example (leave out -- CMD and workload.argv), or give each point its "
                      "command with workload.argv = [...]",
                      "workload.example_args");
  }
  return {};
}

}  // namespace llmprof
