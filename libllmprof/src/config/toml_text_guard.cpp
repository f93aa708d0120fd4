// Guards toml++ 3.3 against text it cannot classify safely (see toml_text_guard.hpp).
#include "config/toml_text_guard.hpp"

#include <cstdint>

namespace llmprof::detail {
namespace {

// Decodes one UTF-8 sequence at text[i]; 0 length for an invalid, overlong or surrogate sequence.
std::size_t decode_utf8(std::string_view text, std::size_t i, std::uint32_t& code) {
  const auto byte = static_cast<unsigned char>(text[i]);
  const std::size_t length = byte < 0x80           ? 1
                             : (byte >> 5) == 0x6  ? 2
                             : (byte >> 4) == 0xE  ? 3
                             : (byte >> 3) == 0x1E ? 4
                                                   : 0;
  if (length == 0 || i + length > text.size()) return 0;
  code = length == 1 ? byte : byte & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  const bool overlong =
      (length == 2 && code < 0x80) || (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  if (overlong || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return 0;
  return length;
}

}  // namespace

std::optional<std::pair<std::size_t, std::string>> find_unsafe_toml_text(std::string_view text) {
  enum class Context { code, comment, basic, literal, multiline_basic, multiline_literal } context = Context::code;
  constexpr std::string_view triple_double = "\"\"\"", triple_single = "'''";
  std::size_t i = 0;
  while (i < text.size()) {
    std::uint32_t code = 0;
    const std::size_t length = decode_utf8(text, i, code);
    if (length == 0) return std::pair{i + 1, std::string("is not valid UTF-8")};
    const bool control = (code < 0x20 && code != '\t' && code != '\n' && code != '\r') || code == 0x7F;
    const bool noncharacter = (code >= 0xFDD0 && code <= 0xFDEF) || (code & 0xFFFE) == 0xFFFE;
    if (control || noncharacter)
      return std::pair{i + 1, std::string("is a control character or a Unicode noncharacter")};
    const std::string_view rest = text.substr(i);
    std::size_t step = length;
    switch (context) {
      case Context::code:
        if (code >= 0x80)
          return std::pair{i + 1, std::string("is a non-ASCII character outside a quoted string or comment")};
        if (rest.starts_with(triple_double))
          context = Context::multiline_basic, step = 3;
        else if (rest.starts_with(triple_single))
          context = Context::multiline_literal, step = 3;
        else if (code == '"')
          context = Context::basic;
        else if (code == '\'')
          context = Context::literal;
        else if (code == '#')
          context = Context::comment;
        break;
      case Context::comment:
        if (code == '\n') context = Context::code;
        break;
      case Context::basic:
        if (code == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80)
          step = 2;
        else if (code == '"' || code == '\n')
          context = Context::code;
        break;
      case Context::literal:
        if (code == '\'' || code == '\n') context = Context::code;
        break;
      case Context::multiline_basic:
        if (code == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80)
          step = 2;
        else if (rest.starts_with(triple_double))
          context = Context::code, step = 3;
        break;
      case Context::multiline_literal:
        if (rest.starts_with(triple_single)) context = Context::code, step = 3;
        break;
    }
    i += step;
  }
  return std::nullopt;
}

}  // namespace llmprof::detail
