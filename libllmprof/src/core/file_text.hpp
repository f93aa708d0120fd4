// Reading a whole small file (a manifest, a CSV, a log) into a string: the one way the library does it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "llmprof/result.hpp"

namespace llmprof::detail {

// The file's bytes, or nullopt when it cannot be opened or read (errno says why, for a caller that
// reports it with io_error_from_errno). Not for /proc files, whose size stat() reports as 0: those
// are read with read(2) (process/process_group.hpp).
std::optional<std::string> read_file_text(const std::filesystem::path& path);
// The text of an input file the caller names as `what` ("step tokens file"): Error(not_found) with
// `missing_hint` when it is not a regular file, Error(io_error) when it cannot be read.
Result<std::string> read_input_file(const std::filesystem::path& path, const std::string& what,
                                    const std::string& missing_hint);
// The file's text, or "" when it cannot be read: for a log a failed tool may not have written.
std::string read_text(const std::filesystem::path& path);
// The last `count` non-blank lines of a file (CRLF or LF), joined with " | ": a failed tool's last words
// for a one-line reason. "" when the file cannot be read.
std::string tail_lines(const std::filesystem::path& path, std::size_t count);

}  // namespace llmprof::detail
