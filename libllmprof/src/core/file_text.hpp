// Reading a whole small file (a manifest, a CSV, a log) into a string: the one way the library does it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace llmprof::detail {

// The file's bytes, or nullopt when it cannot be opened or read (errno says why, for a caller that
// reports it with io_error_from_errno). Not for /proc files, whose size stat() reports as 0: those
// are read with read(2) (process/process_group.hpp).
std::optional<std::string> read_file_text(const std::filesystem::path& path);

}  // namespace llmprof::detail
