// Free space on the runs root, checked before the profilers write gigabytes.
#include "pipeline/disk_space.hpp"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace llmprof::detail {
namespace fs = std::filesystem;

Result<std::uint64_t> available_disk_bytes(const fs::path& path) {
  fs::path probe = path.empty() ? fs::path(".") : path;
  std::error_code error;
  // The runs root may not exist yet; its nearest existing parent is on the same file system.
  while (!fs::exists(probe, error) && probe.has_parent_path() && probe.parent_path() != probe)
    probe = probe.parent_path();
  struct statvfs stats {};
  if (::statvfs(probe.c_str(), &stats) != 0) {
    return make_error(ErrorCode::io_error, std::string("could not read the free space: ") + std::strerror(errno),
                      "check that the runs root is on a mounted, readable file system", probe.string());
  }
  return static_cast<std::uint64_t>(stats.f_bavail) * static_cast<std::uint64_t>(stats.f_frsize);
}

}  // namespace llmprof::detail
