// Logging: the run log file gets timestamped, levelled, channelled lines above its threshold;
// the console respects its level and the quiet flag.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

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
  REQUIRE(llmprof::add_log_file(path, LogLevel::info).has_value());
  llmprof::log_debug("nsys", "debug line");
  llmprof::log_info("nsys", "nsys profile started");
  llmprof::log_warning("ncu", "section dropped");
  llmprof::log_error("run", "stage failed");
  llmprof::remove_log_file();
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
  llmprof::init_logging({});
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
  llmprof::init_logging({});
}

TEST_CASE("a log file that cannot be opened is an io_error") {
  llmprof::testing::TempDir dir;
  llmprof::testing::write_file(dir / "file", "x");
  const auto result = llmprof::add_log_file(dir / "file/deep-profile.log");
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == llmprof::ErrorCode::io_error);
}

TEST_CASE("log level names parse") {
  CHECK(llmprof::parse_log_level("trace") == LogLevel::trace);
  CHECK(llmprof::parse_log_level("warn") == LogLevel::warning);
  CHECK(llmprof::parse_log_level("error") == LogLevel::error);
  CHECK_FALSE(llmprof::parse_log_level("loud").has_value());
}
