// UTF-8 validation/repair and base64, for strings on their way into JSON.
#include "core/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace llmprof::detail {
namespace {

// The lead bytes of well-formed multi-byte sequences (Unicode 15, table 3-7): each range's sequence length and the
// range its second byte must lie in; the ranges of the second byte exclude overlongs (E0, F0) and surrogates (ED)
// and stop at U+10FFFF (F4). Every later byte lies in 80..BF.
struct LeadBytes {
  unsigned char first, last;
  std::size_t length;
  unsigned char second_low, second_high;
};
constexpr LeadBytes kLeadBytes[] = {
    {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF}, {0xE1, 0xEC, 3, 0x80, 0xBF}, {0xED, 0xED, 3, 0x80, 0x9F},
    {0xEE, 0xEF, 3, 0x80, 0xBF}, {0xF0, 0xF0, 4, 0x90, 0xBF}, {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F},
};

// Length of the well-formed sequence at bytes[at], or 0 when the byte there starts none.
std::size_t sequence_length(std::string_view bytes, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  const auto* range = std::find_if(std::begin(kLeadBytes), std::end(kLeadBytes), [&](const LeadBytes& candidate) {
    return lead >= candidate.first && lead <= candidate.last;
  });
  if (range == std::end(kLeadBytes)) return 0;
  const std::size_t length = range->length;
  if (at + length > bytes.size()) return 0;
  if (byte(at + 1) < range->second_low || byte(at + 1) > range->second_high) return 0;
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
