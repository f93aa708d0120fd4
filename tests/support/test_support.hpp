// Helpers shared by the test executables: fixture paths and self-deleting temporary directories.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/file_text.hpp"

namespace llmprof::testing {

// tests/data/<relative>; tests never read outside the repository.
inline std::filesystem::path data_path(const std::string& relative) {
  return std::filesystem::path(LLMPROF_TEST_DATA_DIR) / relative;
}

// examples/<relative>: a recorded run directory a test reads where it is kept, not a copy under tests/data.
inline std::filesystem::path example_path(const std::string& relative) {
  return std::filesystem::path(LLMPROF_SOURCE_DIR) / "examples" / relative;
}

// tests/fake_tools/<relative>: fake nsys/ncu executables reproducing recorded behaviours.
inline std::filesystem::path fake_tool_path(const std::string& relative) {
  return std::filesystem::path(LLMPROF_FAKE_TOOLS_DIR) / relative;
}

// The file's bytes, "" when it cannot be read (the test's own CHECKs then fail on the content).
inline std::string read_file(const std::filesystem::path& path) {
  return llmprof::detail::read_file_text(path).value_or(std::string());
}

inline void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ =
        std::filesystem::temp_directory_path() / ("llmprof-test-" + std::to_string(seed()) + std::to_string(seed()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& relative) const { return path_ / relative; }

 private:
  std::filesystem::path path_;
};

}  // namespace llmprof::testing
