// A small indenting JSON writer: Boost.JSON 1.81 only serializes on one line.
#include "core/json_pretty.hpp"

#include <boost/json/serialize.hpp>

namespace llmprof::detail {
namespace {

void write_value(const boost::json::value& value, int depth, std::string& out) {
  const std::string indent(static_cast<std::size_t>(depth + 1) * 2, ' ');
  const std::string closing(static_cast<std::size_t>(depth) * 2, ' ');
  if (const auto* object = value.if_object(); object != nullptr && !object->empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& member : *object) {
      if (!first) out += ",\n";
      first = false;
      out += indent + boost::json::serialize(boost::json::value(member.key())) + ": ";
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
  } else {
    out += boost::json::serialize(value);  // scalars, {} and []
  }
}

}  // namespace

std::string pretty_json(const boost::json::value& value) {
  std::string out;
  write_value(value, 0, out);
  out += '\n';
  return out;
}

}  // namespace llmprof::detail
