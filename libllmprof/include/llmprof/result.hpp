// Result<T>: the value of an operation on the outside world, or an Error a user can act on.
//
// Every library function that spawns a process, reads or writes a file, or parses outside input
// returns a Result. Exceptions are reserved for broken invariants inside libllmprof itself
// (e.g. calling value() on an error), never for bad input.
#pragma once

#include <cassert>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "llmprof/export.hpp"

namespace llmprof {

// What kind of failure; exit_code_for (llmprof/exit_code.hpp) maps these to the documented exit codes.
enum class ErrorCode {
  invalid_argument,  // the caller (or the user's config) asked for something that cannot work
  not_found,         // a file, tool or executable is not where it was looked for
  io_error,          // reading or writing a file or directory failed (permissions, missing parent)
  no_space,          // a write failed because the file system is full (ENOSPC) or the quota is spent
  parse_error,       // outside input does not have the expected shape
  process_failed,    // a child process could not start, or exited unsuccessfully
  timeout,           // a child process ran past its time limit and was killed
  interrupted,       // SIGINT/SIGTERM arrived while work was in progress
  no_report,         // a profiler ran but produced no report (gate never opened, importer broken)
  unsupported,       // the probed tool version cannot do what was asked
  already_exists,    // refusing to overwrite something (an existing run directory)
};

// Stable lowercase name of a code ("not_found"), used in run.json and log lines.
LLMPROF_API const char* to_string(ErrorCode code) noexcept;

struct LLMPROF_API Error {
  ErrorCode code = ErrorCode::invalid_argument;
  std::string message;  // what went wrong and where, one sentence
  std::string hint;     // how to fix it; empty when there is nothing useful to say
  std::string subject;  // the offending path, argv, key or value, when there is one

  // "message (subject: ...) Hint: ..." on one line, for logs and the terminal.
  std::string describe() const;
};

LLMPROF_API Error make_error(ErrorCode code, std::string message, std::string hint = {}, std::string subject = {});

// Thrown only when a Result is misused (value() on an error); a programming error, not bad input.
class LLMPROF_API BadResultAccess : public std::logic_error {
 public:
  explicit BadResultAccess(const Error& error);
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    check();
    return std::get<0>(storage_);
  }
  const T& value() const& {
    check();
    return std::get<0>(storage_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(storage_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    if (has_value()) throw std::logic_error("llmprof::Result::error() called on a value");
    return std::get<1>(storage_);
  }

 private:
  void check() const {
    if (!has_value()) throw BadResultAccess(std::get<1>(storage_));
  }
  std::variant<T, Error> storage_;
};

// Result<void>: success carries nothing.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (error_) throw BadResultAccess(*error_);
  }
  const Error& error() const {
    if (!error_) throw std::logic_error("llmprof::Result<void>::error() called on success");
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace llmprof
