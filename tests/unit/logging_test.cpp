// Logging: the run log file gets timestamped, levelled, channelled lines above its threshold, from its own
// thread only; the console is off until init_logging and respects its level and the quiet flag; a harness
// sink gets every line with its level and channel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include "llmprof/logging.hpp"
#include "test_support.hpp"

using llmprof::LogLevel;

namespace {

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("the log file receives messages at or above its level, with time, level and channel") {
  llmprof::testing::TempDir dir;
  std::ostringstream console;
  llmprof::init_logging({LogLevel::warning, false, &console});
  const auto path = dir / "deep-profile.log";
  {
    auto file = llmprof::ScopedLogFile::open(path, LogLevel::info);
    REQUIRE(file.has_value());
    llmprof::log_debug("nsys", "debug line");
    llmprof::log_info("nsys", "nsys profile started");
    llmprof::log_warning("ncu", "section dropped");
    llmprof::log_error("run", "stage failed");
  }
  llmprof::log_error("run", "after the file was removed");

  const auto text = llmprof::testing::read_file(path);
  CHECK(count_lines(text) == 3);
  CHECK(text.find("debug line") == std::string::npos);
  CHECK(text.find("after the file was removed") == std::string::npos);
  // "2026-11-22T15:31:22.123456Z info [nsys] nsys profile started"
  std::istringstream lines(text);
  std::string first;
  std::getline(lines, first);
  REQUIRE(first.size() > 28);
  CHECK(first[4] == '-');
  CHECK(first[10] == 'T');
  CHECK(first.find("Z info [nsys] nsys profile started") != std::string::npos);
  CHECK(text.find("warning [ncu] section dropped") != std::string::npos);
  CHECK(text.find("error [run] stage failed") != std::string::npos);

  // The console was set to warning: two lines while the file was attached, one after.
  CHECK(console.str() == "warning: section dropped\nerror: stage failed\nerror: after the file was removed\n");
  llmprof::disable_console_logging();
}

TEST_CASE("the library is silent until its host turns the console on", "[logging]") {
  std::ostringstream console;
  llmprof::init_logging({LogLevel::trace, false, &console});
  llmprof::disable_console_logging();
  // Boost.Log would print to the console while it has no sink at all: nothing may reach stderr.
  std::ostringstream captured;
  auto* const clog_buffer = std::clog.rdbuf(captured.rdbuf());
  auto* const cerr_buffer = std::cerr.rdbuf(captured.rdbuf());
  llmprof::log_error("run", "nobody listens");
  llmprof::log_info("run", "nor here");
  std::clog.rdbuf(clog_buffer);
  std::cerr.rdbuf(cerr_buffer);
  CHECK(console.str().empty());
  CHECK(captured.str().empty());
}

TEST_CASE("a harness sink receives every line at its level with channel and level", "[logging]") {
  std::vector<std::string> lines;
  llmprof::set_log_sink(
      [&lines](const llmprof::LogRecord& record) {
        lines.push_back(std::string(llmprof::to_string(record.level)) + " [" + std::string(record.channel) + "] " +
                        std::string(record.message));
      },
      LogLevel::info);
  llmprof::log_debug("ncu", "below the sink's level");
  llmprof::log_info("nsys", "capture started");
  llmprof::log_warning("ncu", "pass ended early");
  llmprof::set_log_sink({});
  llmprof::log_error("run", "after the sink was removed");
  CHECK(lines == std::vector<std::string>{"info [nsys] capture started", "warning [ncu] pass ended early"});
}

TEST_CASE("each thread's log file holds only that thread's lines", "[logging]") {
  llmprof::testing::TempDir dir;
  constexpr int kLines = 200;
  auto write = [&dir](const std::string& name) {
    auto file = llmprof::ScopedLogFile::open(dir / (name + ".log"), LogLevel::info);
    REQUIRE(file.has_value());
    for (int i = 0; i < kLines; ++i) llmprof::log_info("run", name + " line " + std::to_string(i));
  };
  std::thread first(write, "first");
  std::thread second(write, "second");
  first.join();
  second.join();
  for (const std::string name : {"first", "second"}) {
    const auto text = llmprof::testing::read_file(dir / (name + ".log"));
    CHECK(count_lines(text) == kLines);
    const std::string other = name == "first" ? "second line" : "first line";
    CHECK(text.find(other) == std::string::npos);
    CHECK(text.find(name + " line " + std::to_string(kLines - 1)) != std::string::npos);
  }
}

TEST_CASE("nested log files on one thread each get the lines of their own lifetime", "[logging]") {
  llmprof::testing::TempDir dir;
  auto outer = llmprof::ScopedLogFile::open(dir / "outer.log", LogLevel::info);
  REQUIRE(outer.has_value());
  llmprof::log_info("run", "outer only");
  {
    auto inner = llmprof::ScopedLogFile::open(dir / "inner.log", LogLevel::info);
    REQUIRE(inner.has_value());
    llmprof::log_info("run", "both");
  }
  llmprof::log_info("run", "outer again");
  outer->reset();
  const auto outer_text = llmprof::testing::read_file(dir / "outer.log");
  const auto inner_text = llmprof::testing::read_file(dir / "inner.log");
  CHECK(count_lines(outer_text) == 3);
  CHECK(count_lines(inner_text) == 1);
  CHECK(inner_text.find("both") != std::string::npos);
}

TEST_CASE("quiet console shows errors only") {
  std::ostringstream console;
  llmprof::init_logging({LogLevel::trace, true, &console});
  llmprof::log_info("run", "hidden");
  llmprof::log_warning("run", "hidden too");
  llmprof::log_error("run", "shown");
  CHECK(console.str() == "error: shown\n");
  llmprof::init_logging({LogLevel::debug, false, &console});
  llmprof::log_debug("run", "now visible");
  CHECK(console.str() == "error: shown\ndebug: now visible\n");
  llmprof::disable_console_logging();
}

TEST_CASE("a log file that cannot be opened is an io_error") {
  llmprof::testing::TempDir dir;
  llmprof::testing::write_file(dir / "file", "x");
  const auto result = llmprof::ScopedLogFile::open(dir / "file/deep-profile.log");
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == llmprof::ErrorCode::io_error);
}

TEST_CASE("log level names parse") {
  CHECK(llmprof::parse_log_level("trace") == LogLevel::trace);
  CHECK(llmprof::parse_log_level("warn") == LogLevel::warning);
  CHECK(llmprof::parse_log_level("error") == LogLevel::error);
  CHECK_FALSE(llmprof::parse_log_level("loud").has_value());
}
