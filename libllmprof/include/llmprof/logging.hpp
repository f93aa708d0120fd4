// Logging: one call for library code, Boost.Log underneath (kept out of this header).
//
// Console lines go to stderr, short ("warning: ..."); the run's MAIN/deep-profile.log gets every
// line with a UTC timestamp, level and channel. Logging before init_logging() uses the defaults.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "llmprof/result.hpp"

namespace llmprof {

enum class LogLevel { trace, debug, info, warning, error };
const char* to_string(LogLevel level) noexcept;
std::optional<LogLevel> parse_log_level(std::string_view name);  // "trace" ... "error"

struct LoggingOptions {
  LogLevel console_level = LogLevel::info;
  bool quiet = false;                      // console shows errors only
  std::ostream* console_stream = nullptr;  // nullptr: std::clog (stderr); tests pass a stringstream
};

// (Re)configures the console sink. Safe to call more than once; a log file stays attached.
void init_logging(const LoggingOptions& options);
// Sends every message at `level` or above to `path` (appended, flushed per line). Replaces any
// earlier log file. Errors: the file cannot be opened.
Result<void> add_log_file(const std::filesystem::path& path, LogLevel level = LogLevel::debug);
// Detaches and closes the log file, if any.
void remove_log_file();

// channel: the area that speaks ("run", "nsys", "ncu", "probe", ...).
void log(LogLevel level, std::string_view channel, std::string_view message);
inline void log_trace(std::string_view channel, std::string_view message) { log(LogLevel::trace, channel, message); }
inline void log_debug(std::string_view channel, std::string_view message) { log(LogLevel::debug, channel, message); }
inline void log_info(std::string_view channel, std::string_view message) { log(LogLevel::info, channel, message); }
inline void log_warning(std::string_view channel, std::string_view message) {
  log(LogLevel::warning, channel, message);
}
inline void log_error(std::string_view channel, std::string_view message) { log(LogLevel::error, channel, message); }

}  // namespace llmprof
