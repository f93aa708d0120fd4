// Bytes that must become text: file names, argv, NVTX range names and tool output are arbitrary
// bytes on Linux, but JSON (run.json, report.json) must be UTF-8. This is the one home of that rule.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace llmprof::detail {

// True for well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view bytes);
// `bytes` with every byte that is not part of a well-formed sequence replaced by U+FFFD; valid
// input is returned unchanged.
std::string to_valid_utf8(std::string_view bytes);

// RFC 4648 base64 (with padding): how the original bytes travel beside the readable form.
std::string encode_base64(std::string_view bytes);
// nullopt for text that is not canonical padded base64.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace llmprof::detail
