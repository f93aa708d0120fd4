// Logging through Boost.Log: a console sink (stderr, short lines) and an optional run log file.
#include "llmprof/logging.hpp"
#include "llmprof/choice.hpp"

#include <boost/core/null_deleter.hpp>
#include <boost/date_time/posix_time/posix_time_types.hpp>
#include <boost/date_time/posix_time/time_formatters.hpp>
#include <boost/log/attributes/clock.hpp>
#include <boost/log/core.hpp>
#include <boost/log/expressions.hpp>
#include <boost/log/sinks/sync_frontend.hpp>
#include <boost/log/sinks/text_ostream_backend.hpp>
#include <boost/log/sources/record_ostream.hpp>
#include <boost/log/sources/severity_channel_logger.hpp>
#include <boost/make_shared.hpp>
#include <boost/shared_ptr.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>

namespace llmprof {
namespace {

namespace blog = boost::log;
using Sink = blog::sinks::synchronous_sink<blog::sinks::text_ostream_backend>;
using Logger = blog::sources::severity_channel_logger_mt<LogLevel, std::string>;

BOOST_LOG_ATTRIBUTE_KEYWORD(severity_keyword, "Severity", LogLevel)
BOOST_LOG_ATTRIBUTE_KEYWORD(channel_keyword, "Channel", std::string)
BOOST_LOG_ATTRIBUTE_KEYWORD(timestamp_keyword, "TimeStamp", boost::posix_time::ptime)

struct LoggingState {
  std::mutex mutex;
  bool initialized = false;
  boost::shared_ptr<Sink> console;
  boost::shared_ptr<Sink> file;
};

LoggingState& state() {
  static LoggingState instance;
  return instance;
}

// "warning: message" (info and below print just the message: the console is for people).
void format_console(const blog::record_view& record, blog::formatting_ostream& out) {
  const auto level = record[severity_keyword];
  if (level && *level != LogLevel::info) out << to_string(*level) << ": ";
  out << record[blog::expressions::smessage];
}

// "2026-11-22T15:31:22.123456Z warning [nsys] message"
void format_file(const blog::record_view& record, blog::formatting_ostream& out) {
  if (const auto time = record[timestamp_keyword]) out << boost::posix_time::to_iso_extended_string(*time) << "Z ";
  const auto level = record[severity_keyword];
  const auto channel = record[channel_keyword];
  out << (level ? to_string(*level) : "info") << " [" << (channel ? *channel : std::string("llmprof")) << "] "
      << record[blog::expressions::smessage];
}

void set_console(const LoggingOptions& options, LoggingState& current) {
  auto core = blog::core::get();
  if (current.console) core->remove_sink(current.console);
  auto backend = boost::make_shared<blog::sinks::text_ostream_backend>();
  std::ostream* stream = options.console_stream != nullptr ? options.console_stream : &std::clog;
  backend->add_stream(boost::shared_ptr<std::ostream>(stream, boost::null_deleter()));
  backend->auto_flush(true);
  current.console = boost::make_shared<Sink>(backend);
  const LogLevel threshold = options.quiet ? LogLevel::error : options.console_level;
  current.console->set_filter(severity_keyword >= threshold);
  current.console->set_formatter(&format_console);
  core->add_sink(current.console);
}

void ensure_initialized(LoggingState& current) {
  if (current.initialized) return;
  blog::core::get()->add_global_attribute("TimeStamp", blog::attributes::utc_clock());
  set_console(LoggingOptions{}, current);
  current.initialized = true;
}

Logger& logger() {
  static Logger instance;
  return instance;
}

}  // namespace

// LogLevel's one spelling table (choice.hpp): to_string writes with it, parse_choice reads with it.
std::span<const std::string_view> choice_names(LogLevel) noexcept {
  static constexpr std::string_view names[] = {"trace", "debug", "info", "warning", "error"};
  return names;
}

// The table holds string literals, so each entry's data() is NUL-terminated.
const char* to_string(LogLevel level) noexcept { return choice_name(level).data(); }

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "warn") return LogLevel::warning;
  return parse_choice<LogLevel>(name);
}

void init_logging(const LoggingOptions& options) {
  auto& current = state();
  std::lock_guard lock(current.mutex);
  ensure_initialized(current);
  set_console(options, current);
}

Result<void> add_log_file(const std::filesystem::path& path, LogLevel level) {
  auto stream = boost::make_shared<std::ofstream>(path, std::ios::app);
  if (!*stream) {
    return make_error(ErrorCode::io_error, "could not open log file " + path.string() + ": " + std::strerror(errno),
                      "make the run directory writable", path.string());
  }
  auto& current = state();
  std::lock_guard lock(current.mutex);
  ensure_initialized(current);
  auto core = blog::core::get();
  if (current.file) core->remove_sink(current.file);
  auto backend = boost::make_shared<blog::sinks::text_ostream_backend>();
  backend->add_stream(stream);
  backend->auto_flush(true);  // a crash must not lose the lines that explain it
  current.file = boost::make_shared<Sink>(backend);
  current.file->set_filter(severity_keyword >= level);
  current.file->set_formatter(&format_file);
  core->add_sink(current.file);
  return {};
}

void remove_log_file() {
  auto& current = state();
  std::lock_guard lock(current.mutex);
  if (!current.file) return;
  blog::core::get()->remove_sink(current.file);
  current.file->flush();
  current.file.reset();  // closes the ofstream
}

void log(LogLevel level, std::string_view channel, std::string_view message) {
  {
    auto& current = state();
    std::lock_guard lock(current.mutex);
    ensure_initialized(current);
  }
  BOOST_LOG_CHANNEL_SEV(logger(), std::string(channel), level) << message;
}

}  // namespace llmprof
