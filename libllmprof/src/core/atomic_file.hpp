// Crash-safe file replacement: write a temporary file beside the target, fsync, rename over it.
#pragma once

#include <filesystem>
#include <string>

#include "llmprof/result.hpp"

namespace llmprof::detail {

// Readers see either the old content or the new, never a partial file. Errors name the path and
// say why (permission, disk full, read-only file system) with a hint.
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& content);

// Creates `directory` and its parents (one that exists already is fine). When it cannot: an io_error naming `what`
// ("the rank directory") and the path, with io_error_from_errno's hint for the cause.
Result<void> ensure_directory(const std::filesystem::path& directory, const std::string& what);

// An io_error for a failed system call on `path`, with a hint chosen from errno.
Error io_error_from_errno(int error_number, const std::string& what, const std::filesystem::path& path);

}  // namespace llmprof::detail
