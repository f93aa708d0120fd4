// UTF-8 validation/repair and base64, for strings on their way into JSON.
#include "core/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace llmprof::detail {
namespace {

// Length of the well-formed sequence at bytes[at], or 0 when the byte there starts none
// (Unicode 15, table 3-7: the allowed second-byte ranges exclude overlongs and surrogates).
std::size_t sequence_length(std::string_view bytes, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2;
  else if (lead == 0xE0)
    length = 3, low = 0xA0;
  else if (lead == 0xED)
    length = 3, high = 0x9F;
  else if (lead >= 0xE1 && lead <= 0xEF)
    length = 3;
  else if (lead == 0xF0)
    length = 4, low = 0x90;
  else if (lead == 0xF4)
    length = 4, high = 0x8F;
  else if (lead >= 0xF1 && lead <= 0xF3)
    length = 4;
  else
    return 0;
  if (at + length > bytes.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return length;
}

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

bool is_valid_utf8(std::string_view bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t length = sequence_length(bytes, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string to_valid_utf8(std::string_view bytes) {
  if (is_valid_utf8(bytes)) return std::string(bytes);
  std::string text;
  text.reserve(bytes.size() + 8);
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t length = sequence_length(bytes, at);
    if (length == 0) {
      text += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER, one per bad byte
      ++at;
    } else {
      text.append(bytes.substr(at, length));
      at += length;
    }
  }
  return text;
}

std::string encode_base64(std::string_view bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t at = 0; at < bytes.size(); at += 3) {
    const std::size_t count = std::min<std::size_t>(3, bytes.size() - at);
    std::uint32_t group = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      group = (group << 8) | (i < count ? static_cast<unsigned char>(bytes[at + i]) : 0u);
    }
    for (std::size_t i = 0; i < 4; ++i) {
      text += i <= count ? kBase64Alphabet[(group >> (18 - 6 * i)) & 0x3F] : '=';
    }
  }
  return text;
}

std::optional<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::array<int, 256> value{};
  value.fill(-1);
  for (int i = 0; i < 64; ++i) value[static_cast<unsigned char>(kBase64Alphabet[i])] = i;
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t at = 0; at < text.size(); at += 4) {
    const bool last = at + 4 == text.size();
    const std::size_t padding = last ? (text[at + 3] == '=') + (text[at + 2] == '=') : 0;
    if (padding == 1 && text[at + 2] == '=') return std::nullopt;  // "x==y" is not padding
    std::uint32_t group = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const int digit = i >= 4 - padding ? 0 : value[static_cast<unsigned char>(text[at + i])];
      if (digit < 0) return std::nullopt;
      group = (group << 6) | static_cast<std::uint32_t>(digit);
    }
    for (std::size_t i = 0; i < 3 - padding; ++i) bytes += static_cast<char>((group >> (16 - 8 * i)) & 0xFF);
  }
  if (encode_base64(bytes) != text) return std::nullopt;  // only the canonical spelling round-trips
  return bytes;
}

}  // namespace llmprof::detail
