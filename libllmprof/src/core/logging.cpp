// Logging through Boost.Log: an optional console sink (the CLI's), an optional harness sink (a callback)
// and per-thread run log files (ScopedLogFile).
//
// Why per thread: a harness may run two DeepProfilers at once on two threads, and each run's
// deep-profile.log must hold its own lines only. The pipeline logs from the thread that called run(), and
// the sinks are synchronous, so a file sink's filter runs on the logging thread and can ask that thread
// which files it has open (a thread_local list), with no attribute plumbing.
#include "llmprof/logging.hpp"
#include "llmprof/choice.hpp"

#include <algorithm>
#include <atomic>
#include <boost/core/null_deleter.hpp>
#include <boost/date_time/posix_time/posix_time_types.hpp>
#include <boost/date_time/posix_time/time_formatters.hpp>
#include <boost/log/attributes/clock.hpp>
#include <boost/log/core.hpp>
#include <boost/log/expressions.hpp>
#include <boost/log/sinks/basic_sink_backend.hpp>
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
#include <string>
#include <vector>

namespace llmprof {
namespace {

namespace blog = boost::log;
using TextSink = blog::sinks::synchronous_sink<blog::sinks::text_ostream_backend>;
using Logger = blog::sources::severity_channel_logger_mt<LogLevel, std::string>;

BOOST_LOG_ATTRIBUTE_KEYWORD(severity_keyword, "Severity", LogLevel)
BOOST_LOG_ATTRIBUTE_KEYWORD(channel_keyword, "Channel", std::string)
BOOST_LOG_ATTRIBUTE_KEYWORD(timestamp_keyword, "TimeStamp", boost::posix_time::ptime)

// What a harness sink's first throw said, until log() has reported it (once per sink: a sink that throws on every
// line would otherwise add a report per line).
struct SinkFailure {
  std::mutex mutex;
  std::string pending;  // the report log() still owes; empty once given
};
SinkFailure& sink_failure() {
  static SinkFailure instance;
  return instance;
}

// Hands each record to the harness's callback; synchronized_feeding serialises the calls.
// A callback that throws is contained here: Boost.Log 1.81's core rethrows a sink's exception out of the
// logging call, which took it out of DeepProfiler::run() and left run.json "running". The line is lost to that
// sink only (the run log and the console still get it), and the first failure is reported by log() once the
// record is done, not from inside the sink: a report logged from here would re-enter this sink's lock.
class CallbackBackend : public blog::sinks::basic_sink_backend<blog::sinks::synchronized_feeding> {
 public:
  explicit CallbackBackend(LogSink sink) : sink_(std::move(sink)) {}
  void consume(const blog::record_view& record) {
    try {
      deliver(record);
    } catch (...) {
      if (failed_) return;
      failed_ = true;
      std::string what = "an exception that is no std::exception";
      try {
        throw;
      } catch (const std::exception& error) {
        what = error.what();
      } catch (...) {
      }
      std::lock_guard lock(sink_failure().mutex);
      sink_failure().pending = "the harness's log sink (set_log_sink) threw: " + what +
                               "; the line it was given and any later line it throws on are lost to it (the run "
                               "log keeps them), and the run goes on. Reported once.";
    }
  }

 private:
  void deliver(const blog::record_view& record) {
    const auto level = record[severity_keyword];
    const auto channel = record[channel_keyword];
    const auto message = record[blog::expressions::smessage];
    LogRecord line;
    line.level = level ? *level : LogLevel::info;
    line.channel = channel ? std::string_view(*channel) : std::string_view("llmprof");
    line.message = message ? std::string_view(*message) : std::string_view();
    sink_(line);
  }

  LogSink sink_;
  bool failed_ = false;  // reported already (calls are serialised: no atomic needed)
};
using CallbackSink = blog::sinks::synchronous_sink<CallbackBackend>;

struct LoggingState {
  std::mutex mutex;
  bool initialized = false;
  boost::shared_ptr<TextSink> console;
  boost::shared_ptr<CallbackSink> harness;
  std::atomic<bool> any_sink{false};
};

LoggingState& state() {
  static LoggingState instance;
  return instance;
}

// The ScopedLogFiles this thread has open, innermost last.
std::vector<std::uint64_t>& thread_files() {
  thread_local std::vector<std::uint64_t> files;
  return files;
}

bool thread_has_file(std::uint64_t id) {
  const auto& files = thread_files();
  return std::find(files.begin(), files.end(), id) != files.end();
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

// Boost.Log writes every record to std::clog while the core has no sink at all: a sink that accepts
// nothing keeps the library silent until its host adds one.
void ensure_initialized(LoggingState& current) {
  if (current.initialized) return;
  auto core = blog::core::get();
  core->add_global_attribute("TimeStamp", blog::attributes::utc_clock());
  auto silent = boost::make_shared<TextSink>();
  silent->set_filter([](const blog::attribute_value_set&) { return false; });
  core->add_sink(silent);
  current.initialized = true;
}

void update_any_sink(LoggingState& current) {
  current.any_sink = static_cast<bool>(current.console) || static_cast<bool>(current.harness);
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
  auto core = blog::core::get();
  if (current.console) core->remove_sink(current.console);
  auto backend = boost::make_shared<blog::sinks::text_ostream_backend>();
  std::ostream* stream = options.console_stream != nullptr ? options.console_stream : &std::clog;
  backend->add_stream(boost::shared_ptr<std::ostream>(stream, boost::null_deleter()));
  backend->auto_flush(true);
  current.console = boost::make_shared<TextSink>(backend);
  const LogLevel threshold = options.quiet ? LogLevel::error : options.console_level;
  current.console->set_filter(severity_keyword >= threshold);
  current.console->set_formatter(&format_console);
  core->add_sink(current.console);
  update_any_sink(current);
}

void disable_console_logging() {
  auto& current = state();
  std::lock_guard lock(current.mutex);
  if (!current.console) return;
  blog::core::get()->remove_sink(current.console);
  current.console.reset();
  update_any_sink(current);
}

void set_log_sink(LogSink sink, LogLevel level) {
  auto& current = state();
  std::lock_guard lock(current.mutex);
  ensure_initialized(current);
  auto core = blog::core::get();
  if (current.harness) {
    core->remove_sink(current.harness);
    current.harness->flush();
    current.harness.reset();
  }
  if (sink) {
    current.harness = boost::make_shared<CallbackSink>(boost::make_shared<CallbackBackend>(std::move(sink)));
    current.harness->set_filter(severity_keyword >= level);
    core->add_sink(current.harness);
  }
  update_any_sink(current);
}

struct ScopedLogFile::State {
  std::uint64_t id = 0;
  boost::shared_ptr<TextSink> sink;
};

ScopedLogFile::ScopedLogFile(std::filesystem::path path, std::unique_ptr<State> state)
    : path_(std::move(path)), state_(std::move(state)) {}

Result<std::unique_ptr<ScopedLogFile>> ScopedLogFile::open(const std::filesystem::path& path, LogLevel level) {
  auto stream = boost::make_shared<std::ofstream>(path, std::ios::app);
  if (!*stream) {
    return make_error(ErrorCode::io_error, "could not open log file " + path.string() + ": " + std::strerror(errno),
                      "make the run directory writable", path.string());
  }
  static std::atomic<std::uint64_t> next_id{1};
  auto file_state = std::make_unique<State>();
  file_state->id = next_id++;
  auto backend = boost::make_shared<blog::sinks::text_ostream_backend>();
  backend->add_stream(stream);
  backend->auto_flush(true);  // a crash must not lose the lines that explain it
  file_state->sink = boost::make_shared<TextSink>(backend);
  const std::uint64_t id = file_state->id;
  file_state->sink->set_filter([id, level](const blog::attribute_value_set& values) {
    const auto severity = values[severity_keyword];
    return severity && *severity >= level && thread_has_file(id);
  });
  file_state->sink->set_formatter(&format_file);
  auto& current = state();
  {
    std::lock_guard lock(current.mutex);
    ensure_initialized(current);
    blog::core::get()->add_sink(file_state->sink);
  }
  thread_files().push_back(id);
  return std::unique_ptr<ScopedLogFile>(new ScopedLogFile(path, std::move(file_state)));
}

ScopedLogFile::~ScopedLogFile() {
  auto& files = thread_files();
  files.erase(std::remove(files.begin(), files.end(), state_->id), files.end());
  auto& current = state();
  std::lock_guard lock(current.mutex);
  blog::core::get()->remove_sink(state_->sink);
  state_->sink->flush();
}

void log(LogLevel level, std::string_view channel, std::string_view message) {
  auto& current = state();
  // Nothing listens: no console, no harness sink, no run log on this thread.
  if (!current.any_sink && thread_files().empty()) return;
  {
    std::lock_guard lock(current.mutex);
    ensure_initialized(current);
  }
  BOOST_LOG_CHANNEL_SEV(logger(), std::string(channel), level) << message;
  std::string report;
  {
    std::lock_guard lock(sink_failure().mutex);
    report.swap(sink_failure().pending);
  }
  if (!report.empty()) BOOST_LOG_CHANNEL_SEV(logger(), std::string("log"), LogLevel::warning) << report;
}

}  // namespace llmprof
