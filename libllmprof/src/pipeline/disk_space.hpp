// Free space on a file system, for the probe stage's run.min_free_space_gb check.
#pragma once

#include <cstdint>
#include <filesystem>

#include "llmprof/result.hpp"

namespace llmprof::detail {

// Bytes available to an unprivileged user on the file system holding `path` (the nearest existing
// parent when `path` does not exist yet).
Result<std::uint64_t> available_disk_bytes(const std::filesystem::path& path);

}  // namespace llmprof::detail
