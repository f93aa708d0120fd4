// Crash-safe file replacement (temp + fsync + rename), used for run.json and every provenance file.
#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace llmprof::detail {
namespace {

// Closes a descriptor on every path out of write_file_atomically.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { close(); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int close() {
    if (fd_ < 0) return 0;
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

std::string temporary_name(const std::filesystem::path& path) {
  std::random_device seed;
  return "." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(seed());
}

Result<void> write_all(int fd, const std::string& content, const std::filesystem::path& path) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t count = ::write(fd, content.data() + written, content.size() - written);
    if (count < 0) {
      if (errno == EINTR) continue;
      return io_error_from_errno(errno, "could not write", path);
    }
    written += static_cast<std::size_t>(count);
  }
  return {};
}

}  // namespace

Error io_error_from_errno(int error_number, const std::string& what, const std::filesystem::path& path) {
  std::string hint;
  switch (error_number) {
    case EACCES:
    case EPERM:
      hint = "make the directory writable for this user, or choose another location";
      break;
    case ENOSPC:
    case EDQUOT:
      hint = "free disk space (or raise the quota) and run again";
      break;
    case EROFS:
      hint = "the file system is read-only; choose a writable location";
      break;
    case ENOTDIR:
      hint = "a component of the path is a file, not a directory";
      break;
    case ENOENT:
      hint = "create the parent directory first";
      break;
    default:
      break;
  }
  const bool full = error_number == ENOSPC || error_number == EDQUOT;
  return make_error(full ? ErrorCode::no_space : ErrorCode::io_error,
                    what + " " + path.string() + ": " + std::strerror(error_number), hint, path.string());
}

Result<void> ensure_directory(const std::filesystem::path& directory, const std::string& what) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return io_error_from_errno(error.value(), "could not create " + what, directory);
  return {};
}

Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  const auto directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const auto temporary = directory / temporary_name(path);
  FileDescriptor file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (file.get() < 0) return io_error_from_errno(errno, "could not create", temporary);
  auto fail = [&](Error error) {
    file.close();
    ::unlink(temporary.c_str());
    return error;
  };
  if (auto written = write_all(file.get(), content, temporary); !written) return fail(written.error());
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  if (::fsync(file.get()) != 0) return fail(io_error_from_errno(errno, "could not flush", temporary));
  if (file.close() != 0) return fail(io_error_from_errno(errno, "could not close", temporary));
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temporary.c_str());
    return io_error_from_errno(error_number, "could not replace", path);
  }
  // Make the rename itself durable; failure here loses nothing already visible, so it is ignored.
  FileDescriptor parent(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (parent.get() >= 0) ::fsync(parent.get());
  return {};
}

}  // namespace llmprof::detail
