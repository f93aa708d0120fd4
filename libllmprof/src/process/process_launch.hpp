// What the system ProcessRunner checks and prepares before it forks: the executable, the working
// directory, the environment and the output files, each failing with an Error a user can act on.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

// Owns a POSIX file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

// A regular file (links followed) this process may execute.
bool is_executable_file(const std::filesystem::path& path);

// The absolute path of the program to execute, or Error(not_found) naming where it looked.
Result<std::filesystem::path> resolve_executable(const ProcessSpec& spec);

// Error(not_found) when a non-empty working directory does not exist or is not a directory.
Result<void> check_working_directory(const ProcessSpec& spec);

// "NAME=value" entries: this process's environment with the spec's overrides and removals applied.
std::vector<std::string> build_environment(const std::map<std::string, std::optional<std::string>>& overrides);

// The files stdout and stderr are written to (created or truncated, close-on-exec). When both
// streams name the same file it is opened once and shared, so the two do not overwrite each other.
struct OutputFiles {
  UniqueFd stdout_file;
  UniqueFd stderr_file;  // invalid when unset or when it is the same file as stdout
  bool stderr_shares_stdout_file = false;

  int stdout_fd() const noexcept { return stdout_file.get(); }
  int stderr_fd() const noexcept { return stderr_shares_stdout_file ? stdout_file.get() : stderr_file.get(); }
};
Result<OutputFiles> open_output_files(const ProcessSpec& spec);

// Writes all of `size` bytes, retrying short writes; false (errno set) on failure.
bool write_fully(int fd, const char* data, std::size_t size) noexcept;

}  // namespace llmprof::detail
