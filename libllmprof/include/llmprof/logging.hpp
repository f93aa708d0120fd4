// Logging: one call for library code, Boost.Log underneath (kept out of this header).
//
// The library is silent until its host says where lines go: a harness hands in a sink (a callback into
// its own logger) with set_log_sink, and the deep-profile CLI turns on the console with init_logging.
// Each run's MAIN/deep-profile.log is a ScopedLogFile: it receives the lines logged on the thread that
// opened it, so two DeepProfilers running on two threads of one process keep separate logs.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "llmprof/export.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

enum class LogLevel { trace, debug, info, warning, error };
LLMPROF_API const char* to_string(LogLevel level) noexcept;
LLMPROF_API std::optional<LogLevel> parse_log_level(std::string_view name);  // "trace" ... "error"

// One log line, as a sink receives it. The views live for the duration of the call.
struct LLMPROF_API LogRecord {
  LogLevel level = LogLevel::info;
  std::string_view channel;  // the area that speaks: "run", "nsys", "ncu", "probe", ...
  std::string_view message;
};
// Called for every line at or above the sink's level, from the thread that logged it (the pipeline's
// thread); calls are serialised, so the sink needs no lock of its own.
using LogSink = std::function<void(const LogRecord&)>;

struct LLMPROF_API LoggingOptions {
  LogLevel console_level = LogLevel::info;
  bool quiet = false;                      // console shows errors only
  std::ostream* console_stream = nullptr;  // nullptr: std::clog (stderr); tests pass a stringstream
};

// Turns on (or reconfigures) the console: short lines ("warning: ...") to stderr. Off until called, so a
// library user sees nothing on stderr unless it asks; the deep-profile CLI calls this first thing.
LLMPROF_API void init_logging(const LoggingOptions& options);
// Turns the console off again.
LLMPROF_API void disable_console_logging();

// Every line at `level` or above goes to `sink` as well (replacing an earlier sink); an empty sink removes it.
LLMPROF_API void set_log_sink(LogSink sink, LogLevel level = LogLevel::info);

// A log file for the lines logged on the opening thread while this object lives (a run's
// MAIN/deep-profile.log: UTC timestamp, level, channel, message; appended, flushed per line).
// Nested files on one thread each get the lines of their own lifetime; destroy it on the thread that
// opened it.
class LLMPROF_API ScopedLogFile {
 public:
  // Errors: io_error when the file cannot be opened (the path and the reason named).
  static Result<std::unique_ptr<ScopedLogFile>> open(const std::filesystem::path& path,
                                                     LogLevel level = LogLevel::debug);
  ~ScopedLogFile();
  ScopedLogFile(const ScopedLogFile&) = delete;
  ScopedLogFile& operator=(const ScopedLogFile&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

  struct State;  // the sink and the thread's scope tag (Boost.Log types, kept out of this header)

 private:
  ScopedLogFile(std::filesystem::path path, std::unique_ptr<State> state);
  std::filesystem::path path_;
  std::unique_ptr<State> state_;
};

LLMPROF_API void log(LogLevel level, std::string_view channel, std::string_view message);
inline void log_trace(std::string_view channel, std::string_view message) { log(LogLevel::trace, channel, message); }
inline void log_debug(std::string_view channel, std::string_view message) { log(LogLevel::debug, channel, message); }
inline void log_info(std::string_view channel, std::string_view message) { log(LogLevel::info, channel, message); }
inline void log_warning(std::string_view channel, std::string_view message) {
  log(LogLevel::warning, channel, message);
}
inline void log_error(std::string_view channel, std::string_view message) { log(LogLevel::error, channel, message); }

}  // namespace llmprof
