// What toml++ may be given: configuration text checked before parsing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace llmprof::detail {

// Configuration is plain text: no invalid UTF-8, no control characters other than tab/CR/LF, no
// noncharacters. And outside strings and comments only ASCII: toml++ 3.3 classifies a non-ASCII
// character there with a lookup that reaches TOML_UNREACHABLE (undefined behaviour) for most code
// points (fuzz_config found it with U+FDFF; 'é' as a bare key takes the same path). Returns the
// 1-based byte offset of the first offending byte and why; nullopt when the text is safe.
std::optional<std::pair<std::size_t, std::string>> find_unsafe_toml_text(std::string_view text);

}  // namespace llmprof::detail
