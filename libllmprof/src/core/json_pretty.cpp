// A small indenting JSON writer: Boost.JSON 1.81 only serializes on one line. Every file llmprof
// writes as JSON goes through here, so this is where strings are made valid UTF-8.
#include "core/json_pretty.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/utf8.hpp"

namespace llmprof::detail {
namespace {

// Boost.JSON writes string bytes as they are; a Latin-1 range name or directory would make the
// file unreadable to every strict JSON reader (and to ours), so invalid bytes become U+FFFD.
std::string quoted(boost::json::string_view text) {
  return boost::json::serialize(boost::json::value(to_valid_utf8(std::string_view(text.data(), text.size()))));
}

void write_value(const boost::json::value& value, int depth, std::string& out) {
  const std::string indent(static_cast<std::size_t>(depth + 1) * 2, ' ');
  const std::string closing(static_cast<std::size_t>(depth) * 2, ' ');
  if (const auto* object = value.if_object(); object != nullptr && !object->empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& member : *object) {
      if (!first) out += ",\n";
      first = false;
      out += indent + quoted(member.key()) + ": ";
      write_value(member.value(), depth + 1, out);
    }
    out += "\n" + closing + "}";
  } else if (const auto* array = value.if_array(); array != nullptr && !array->empty()) {
    out += "[\n";
    bool first = true;
    for (const auto& element : *array) {
      if (!first) out += ",\n";
      first = false;
      out += indent;
      write_value(element, depth + 1, out);
    }
    out += "\n" + closing + "]";
  } else if (const auto* text = value.if_string(); text != nullptr) {
    out += quoted(*text);
  } else {
    out += boost::json::serialize(value);  // numbers, booleans, null, {} and []
  }
}

}  // namespace

std::string pretty_json(const boost::json::value& value) {
  std::string out;
  write_value(value, 0, out);
  out += '\n';
  return out;
}

boost::json::value parse_json_text(std::string_view text, boost::system::error_code& error) {
  boost::json::parse_options options;
  options.allow_invalid_utf8 = true;
  return boost::json::parse(boost::json::string_view(text.data(), text.size()), error, {}, options);
}

}  // namespace llmprof::detail
