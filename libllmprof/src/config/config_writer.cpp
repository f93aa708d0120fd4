// config_to_toml: the resolved configuration as TOML (MAIN/config.toml) that load_config reads back to an
// equal DeepProfileConfig. Written by hand rather than through toml++'s formatter so the keys keep the
// schema's order and floats keep every digit.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <type_traits>

#include "config/config_schema.hpp"
#include "core/utf8.hpp"

namespace llmprof {
namespace detail {

std::string quote_toml_string(std::string_view text) {
  // TOML text is UTF-8 and has no escape for a raw byte: a Latin-1 workload argument becomes U+FFFD
  // here (its exact bytes are in run.json's argv_base64), so config.toml always loads again.
  const std::string valid = to_valid_utf8(text);
  std::string quoted = "\"";
  for (unsigned char c : valid) {
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\t':
        quoted += "\\t";
        break;
      case '\r':
        quoted += "\\r";
        break;
      case '\b':
        quoted += "\\b";
        break;
      case '\f':
        quoted += "\\f";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04X", c);
          quoted += escape;
        } else {
          quoted += static_cast<char>(c);
        }
    }
  }
  return quoted + "\"";
}

std::string format_toml_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  // Shortest text that parses back to the same double, so a round trip is exact.
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, ec == std::errc() ? end : buffer);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";  // TOML floats need a fraction or exponent
  return text;
}

std::string format_toml_key(std::string_view key) {
  const bool bare = !key.empty() && key.find_first_not_of(
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_-") == std::string_view::npos;
  return bare ? std::string(key) : quote_toml_string(key);
}

namespace {
std::string render_list(const StringList& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + quote_toml_string(values[i]);
  return text + "]";
}

std::string render_table(const StringTable& values) {
  if (values.empty()) return "{}";
  std::string text = "{ ";
  bool first = true;
  for (const auto& [name, value] : values) {
    text += (first ? "" : ", ") + format_toml_key(name) + " = " + quote_toml_string(value);
    first = false;
  }
  return text + " }";
}
}  // namespace

std::optional<std::string> render_field_value(const ConfigField& field, const DeepProfileConfig& config) {
  return std::visit(
      [](const auto member) -> std::optional<std::string> {
        using Member = std::remove_cv_t<std::remove_pointer_t<decltype(member)>>;
        if constexpr (std::is_same_v<Member, ChoiceFieldRef>)
          return quote_toml_string(member.current());
        else if constexpr (std::is_same_v<Member, GpuMetricsSetting>)
          return quote_toml_string(format_gpu_metrics_setting(*member));
        else if constexpr (std::is_same_v<Member, std::string>)
          return quote_toml_string(*member);
        else if constexpr (std::is_same_v<Member, std::filesystem::path>)
          return quote_toml_string(member->string());
        else if constexpr (std::is_same_v<Member, bool>)
          return std::string(*member ? "true" : "false");
        else if constexpr (std::is_same_v<Member, int> || std::is_same_v<Member, std::int64_t>)
          return std::to_string(*member);
        else if constexpr (std::is_same_v<Member, double>)
          return format_toml_float(*member);
        else if constexpr (std::is_same_v<Member, StringList>)
          return render_list(*member);
        else if constexpr (std::is_same_v<Member, StringTable>)
          return render_table(*member);
        else if constexpr (std::is_same_v<Member, std::optional<int>>) {
          if (!*member) return std::nullopt;
          return std::to_string(**member);
        }
      },
      locate_field(field, config));
}

}  // namespace detail

std::string config_to_toml(const DeepProfileConfig& config) {
  std::ostringstream out;
  out << "# deep-profile resolved configuration (every key; `deep-profile config --keys` describes them).\n";
  std::string section;
  for (const auto& field : detail::config_fields()) {
    const std::string& key = field.info.key;
    const auto dot = key.find('.');
    const std::string field_section = key.substr(0, dot);
    if (field_section != section) {
      out << "\n[" << field_section << "]\n";
      section = field_section;
    }
    const std::string name = key.substr(dot + 1);
    if (auto value = detail::render_field_value(field, config)) {
      out << name << " = " << *value << "\n";
    } else {
      out << "# " << name << " is unset: " << field.info.description << "\n";
    }
  }
  return out.str();
}

}  // namespace llmprof
