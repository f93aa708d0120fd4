// Pre-fork checks of the system ProcessRunner, and find_executable().
#include "process/process_launch.hpp"

#include "core/text.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

extern "C" {
extern char** environ;  // NOLINT: the POSIX way to read the whole environment
}

namespace llmprof {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_path_variable(const std::string& path_variable) {
  std::vector<std::string> directories = detail::split(path_variable, ':');
  // An empty element means "the current directory" to the shell; we skip it on purpose, so that
  // a stray "::" in PATH never makes us run a tool out of whatever directory we happen to be in.
  std::erase(directories, std::string());
  return directories;
}

std::string process_path_variable() {
  const char* value = std::getenv("PATH");
  return value == nullptr ? std::string() : std::string(value);
}

using detail::join;

Result<fs::path> check_explicit_executable(const std::string& name) {
  std::error_code error;
  const fs::path path = fs::absolute(name, error);
  const std::string where =
      path.string() == name ? "" : " (resolved from the current directory to " + path.string() + ")";
  const auto status = fs::status(path, error);
  if (!fs::exists(status)) {
    return make_error(ErrorCode::not_found, "executable '" + name + "' does not exist" + where,
                      "check the path, or give a bare name to search PATH", name);
  }
  if (fs::is_directory(status)) {
    return make_error(ErrorCode::not_found, "executable '" + name + "' is a directory, not a program" + where,
                      "point at the program inside it", name);
  }
  if (::access(path.c_str(), X_OK) != 0) {
    return make_error(ErrorCode::not_found,
                      "executable '" + name + "' exists but cannot be executed: " + std::strerror(errno) + where,
                      "make it executable (chmod +x " + path.string() + ") or check the permissions of its directories",
                      name);
  }
  return path;
}

}  // namespace

std::filesystem::path find_executable(const std::string& name, const std::string& path_variable) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return detail::is_executable_file(name) ? fs::path(name) : fs::path();
  const std::string directories = path_variable.empty() ? process_path_variable() : path_variable;
  for (const auto& directory : split_path_variable(directories)) {
    const fs::path candidate = fs::path(directory) / name;
    if (detail::is_executable_file(candidate)) return candidate;
  }
  return {};
}

namespace detail {

bool is_executable_file(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void UniqueFd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<fs::path> resolve_executable(const ProcessSpec& spec) {
  if (spec.argv.empty() || spec.argv.front().empty()) {
    return make_error(ErrorCode::invalid_argument, "cannot run an empty command: argv[0] names no program",
                      "put the program's path or name first in argv");
  }
  const std::string& name = spec.argv.front();
  if (name.find('/') != std::string::npos) return check_explicit_executable(name);

  // The child's PATH decides, as it would for execvp() in the child.
  std::string path_variable = process_path_variable();
  std::string which_path = "PATH";
  if (const auto override = spec.environment.find("PATH");
      override != spec.environment.end() && override->second.has_value()) {
    path_variable = *override->second;
    which_path = "the PATH given in the command's environment";
  }
  const auto directories = split_path_variable(path_variable);
  std::vector<std::string> not_executable;
  for (const auto& directory : directories) {
    const fs::path candidate = fs::path(directory) / name;
    if (is_executable_file(candidate)) return fs::absolute(candidate);
    std::error_code error;
    if (fs::exists(candidate, error)) not_executable.push_back(candidate.string());
  }
  std::string message = "executable '" + name + "' was not found on " + which_path;
  message += directories.empty() ? " (it is empty)" : " (searched " + join(directories, ", ") + ")";
  if (!not_executable.empty()) message += "; found but not executable: " + join(not_executable, ", ");
  return make_error(ErrorCode::not_found, message, "install it, add its directory to PATH, or give its full path",
                    name);
}

Result<void> check_working_directory(const ProcessSpec& spec) {
  if (spec.working_directory.empty()) return {};
  std::error_code error;
  const auto status = fs::status(spec.working_directory, error);
  const std::string program = spec.argv.empty() ? std::string("the command") : "'" + spec.argv.front() + "'";
  if (!fs::exists(status)) {
    return make_error(ErrorCode::not_found,
                      "working directory '" + spec.working_directory.string() + "' for " + program + " does not exist",
                      "create it first or fix the configured working directory", spec.working_directory.string());
  }
  if (!fs::is_directory(status)) {
    return make_error(
        ErrorCode::not_found,
        "working directory '" + spec.working_directory.string() + "' for " + program + " is not a directory",
        "point the working directory at a directory", spec.working_directory.string());
  }
  return {};
}

std::vector<std::string> build_environment(const std::map<std::string, std::optional<std::string>>& overrides) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    const std::string name(text.substr(0, equals));
    if (overrides.count(name) == 0) entries.emplace_back(text);
  }
  for (const auto& [name, value] : overrides) {
    if (value.has_value()) entries.push_back(name + "=" + *value);
  }
  return entries;
}

namespace {

Result<UniqueFd> open_output_file(const fs::path& path, const char* stream, const ProcessSpec& spec) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    const std::string reason = std::strerror(errno);
    return make_error(
        ErrorCode::io_error,
        "cannot open '" + path.string() + "' for the " + stream + " of '" + spec.argv.front() + "': " + reason,
        "check that its directory exists and is writable", path.string());
  }
  return fd;
}

bool same_file(const fs::path& first, const fs::path& second) {
  std::error_code error;
  return fs::weakly_canonical(fs::absolute(first), error) == fs::weakly_canonical(fs::absolute(second), error);
}

}  // namespace

Result<OutputFiles> open_output_files(const ProcessSpec& spec) {
  OutputFiles files;
  if (!spec.stdout_file.empty()) {
    auto opened = open_output_file(spec.stdout_file, "stdout", spec);
    if (!opened) return opened.error();
    files.stdout_file = std::move(*opened);
  }
  if (!spec.stderr_file.empty()) {
    if (files.stdout_file.valid() && same_file(spec.stdout_file, spec.stderr_file)) {
      files.stderr_shares_stdout_file = true;
    } else {
      auto opened = open_output_file(spec.stderr_file, "stderr", spec);
      if (!opened) return opened.error();
      files.stderr_file = std::move(*opened);
    }
  }
  return files;
}

bool write_fully(int fd, const char* data, std::size_t size) noexcept {
  while (size > 0) {
    const auto written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

}  // namespace detail
}  // namespace llmprof
