// RunLock: flock(2) on MAIN/run.lock, held from RunDirectory::create to the end of the run.
#include "rundir/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "core/atomic_file.hpp"

namespace llmprof::detail {

struct RunLock::Descriptor {
  explicit Descriptor(int fd_) : fd(fd_) {}
  ~Descriptor() { ::close(fd); }  // closing the last descriptor releases the flock
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int fd;
};

namespace {

// flock, retried on EINTR; true when locked, false with errno set otherwise.
bool lock_without_blocking(int fd) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

}  // namespace

Result<RunLock> RunLock::acquire(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error_from_errno(errno, "could not create the run lock", path);
  RunLock lock;
  lock.descriptor_ = std::make_shared<Descriptor>(fd);
  if (!lock_without_blocking(fd)) {
    const int error_number = errno;
    if (error_number == EWOULDBLOCK) {
      return make_error(ErrorCode::already_exists, "another process holds the run lock " + path.string(),
                        "that run is still going; wait for it to finish", path.string());
    }
    return io_error_from_errno(error_number, "could not lock", path);
  }
  return lock;
}

RunLockState try_lock_finished_run(const std::filesystem::path& main, RunLock& lock) {
  const auto path = main / kRunLockName;
  // O_RDWR without O_CREAT: a missing lock file means an old run, not one to create a lock for.
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? RunLockState::absent : RunLockState::held_elsewhere;
  lock.descriptor_ = std::make_shared<RunLock::Descriptor>(fd);
  if (lock_without_blocking(fd)) return RunLockState::free;
  lock.descriptor_.reset();
  // Anything but "free" keeps the run: deleting data on a doubt is the failure being prevented.
  return RunLockState::held_elsewhere;
}

}  // namespace llmprof::detail
