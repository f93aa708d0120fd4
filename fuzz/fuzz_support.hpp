// Shared helpers for the libFuzzer targets: the input as text or a stream, and invariant checks
// that abort (so libFuzzer records the input) when a parser breaks one of its documented promises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "llmprof/result.hpp"

namespace llmprof::fuzz {

// The name every target gives its input; each parser error must mention it (errors name the file).
inline constexpr const char* kSourceName = "fuzz-input.csv";

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline std::istringstream as_stream(const std::uint8_t* data, std::size_t size) {
  return std::istringstream(std::string(as_text(data, size)), std::ios::in | std::ios::binary);
}

[[noreturn]] inline void invariant_failed(const char* file, int line, const char* condition,
                                          const std::string& detail) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n  %s\n", file, line, condition, detail.c_str());
  std::abort();
}

// A parser error must say where (the source name) and what (a non-empty message).
inline void check_error_names_source(const Error& error, const char* file, int line) {
  if (error.message.empty()) invariant_failed(file, line, "error message not empty", error.describe());
  if (error.message.find(kSourceName) == std::string::npos && error.subject != kSourceName)
    invariant_failed(file, line, "error names the input", error.describe());
}

}  // namespace llmprof::fuzz

#define LLMPROF_FUZZ_CHECK(condition, detail)                                                      \
  do {                                                                                             \
    if (!(condition)) ::llmprof::fuzz::invariant_failed(__FILE__, __LINE__, #condition, (detail)); \
  } while (false)

#define LLMPROF_FUZZ_CHECK_ERROR(result)                                                            \
  do {                                                                                              \
    if (!(result)) ::llmprof::fuzz::check_error_names_source((result).error(), __FILE__, __LINE__); \
  } while (false)
