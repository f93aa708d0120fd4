// The workload's step tokens under hostile input: counts whose sum overflows, files that would flood the report
// with notes. On the two H100 serving windows (tests/data/serving) and the workload's own count for them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

#include "llmprof/step_kinds.hpp"
#include "llmprof/step_tokens.hpp"
#include "llmprof/timeline.hpp"
#include "serving_h100_windows.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::TempDir;
using llmprof::testing::read_file;

namespace {

const StepKindFigures& kind_named(const StepKindReport& window, const std::string& name) {
  const auto found = std::find_if(window.kinds.begin(), window.kinds.end(),
                                  [&](const StepKindFigures& kind) { return kind.name == name; });
  REQUIRE(found != window.kinds.end());
  return *found;
}

}  // namespace

TEST_CASE("step tokens whose sum overflows are rejected with the file and the key", "[step_tokens]") {
  // 2^63 - 1 prompt tokens and 1 decode token: summed, a negative count (-0.04 tokens/step before the check).
  const std::string text = R"({"schema": "llmprof.step_tokens/1", "windows": [{"kinds": {"decode_batch": )"
                           R"({"steps": 22, "prompt_tokens": 9223372036854775807, "decode_tokens": 1}}}]})";
  TempDir directory;
  const auto file = directory / "step_tokens.json";
  llmprof::testing::write_file(file, text);
  auto parsed = load_step_tokens(file);
  REQUIRE_FALSE(parsed.has_value());
  CHECK(parsed.error().code == ErrorCode::parse_error);
  CHECK(parsed.error().message ==
        file.string() +
            ": windows[0].kinds.decode_batch carries more tokens than a 64-bit count holds (prompt_tokens "
            "9223372036854775807 + decode_tokens 1)");
  // The largest sum that fits is read.
  auto fits = parse_step_tokens(R"({"schema": "llmprof.step_tokens/1", "windows": [{"kinds": {"decode_batch": )"
                                R"({"steps": 22, "prompt_tokens": 9223372036854775806, "decode_tokens": 1}}}]})",
                                "t");
  CHECK(fits.has_value());
}

TEST_CASE("overflowing tokens built in code withhold the time per token instead of a negative one", "[step_tokens]") {
  auto windows = testing::h100_serving_windows();
  StepTokens tokens = testing::h100_serving_step_tokens();
  tokens.windows[0].kinds["decode_batch"].prompt_tokens = std::numeric_limits<std::int64_t>::max();
  attach_step_tokens(windows, tokens);
  const auto& decode = kind_named(windows[0], "decode_batch");
  REQUIRE(decode.tokens);
  CHECK_FALSE(decode.tokens->time_per_token_ns);
  CHECK_FALSE(decode.tokens->tokens_per_step);
  CHECK(decode.tokens->withheld == "its prompt and decode tokens in window 1 add up past a 64-bit count");
  CHECK(step_kinds_markdown(windows).find("-0.0") == std::string::npos);
}

TEST_CASE("a step tokens file with 100,000 windows and 2,000 unknown kinds gives one note each, counted",
          "[step_tokens]") {
  // The recorded workload's two windows, then what a runaway writer appends: 2,000 kinds the capture never saw
  // in window 1, and 100,000 windows the capture does not have.
  std::string text = R"({"schema": "llmprof.step_tokens/1", "windows": [{"kinds": {)"
                     R"("decode_batch": {"steps": 22, "prompt_tokens": 0, "decode_tokens": 352},)"
                     R"("mixed_batch": {"steps": 18, "prompt_tokens": 3599, "decode_tokens": 265})";
  for (int kind = 0; kind < 2000; ++kind)
    text += R"(, "extra_)" + std::to_string(kind) + R"(_batch": {"steps": 1, "prompt_tokens": 0, "decode_tokens": 1})";
  text += R"(}}, {"kinds": {"decode_batch": {"steps": 21, "prompt_tokens": 0, "decode_tokens": 336},)"
          R"("mixed_batch": {"steps": 19, "prompt_tokens": 4018, "decode_tokens": 276}}})";
  for (int window = 0; window < 100000; ++window)
    text += R"(, {"kinds": {"decode_batch": {"steps": 0, "prompt_tokens": 0, "decode_tokens": 0}}})";
  text += "]}";
  auto tokens = parse_step_tokens(text, "step_tokens.json");
  REQUIRE(tokens);
  REQUIRE(tokens->windows.size() == 100002);
  auto windows = testing::h100_serving_windows();
  attach_step_tokens(windows, tokens.value());
  REQUIRE(windows[0].token_notes.size() == 1);  // not one per kind: 2,000 before
  REQUIRE(windows[1].token_notes.size() == 1);  // not one per window: 100,000 before
  CHECK(windows[0].token_notes ==
        std::vector<std::string>{"the workload counted steps of 2000 kinds in window 1 that the timeline has none of "
                                 "(1 `extra_0_batch`, 1 `extra_1000_batch`, 1 `extra_1001_batch`, ...)"});
  CHECK(windows[1].token_notes == std::vector<std::string>{"the workload's step tokens have 100000 windows (3 to "
                                                           "100002) that the capture does not"});
  // The figures of the windows both sides have still stand (82.3 µs per decode token in window 1).
  REQUIRE(kind_named(windows[0], "decode_batch").tokens->time_per_token_ns);
  CHECK(step_kinds_markdown(windows).size() < 8000);
}

namespace {

// The recorded workload's own count (tests/data/serving), as text to doctor.
std::string recorded_tokens_text() { return read_file(data_path("serving/serving_h100_step_tokens.json")); }

Error load_error_of(const TempDir& directory, const std::string& text) {
  const auto file = directory / "step_tokens.json";
  llmprof::testing::write_file(file, text);
  auto loaded = load_step_tokens(file);
  REQUIRE_FALSE(loaded.has_value());
  CHECK(loaded.error().code == ErrorCode::parse_error);
  return loaded.error();
}

}  // namespace

TEST_CASE("a step tokens file cut short says it was cut short, not only 'not valid JSON'", "[step_tokens]") {
  TempDir directory;
  const std::string text = recorded_tokens_text();
  // Cut in the second window's decode_batch: what a workload killed while writing leaves.
  const auto cut = text.find("\"decode_tokens\": 336");
  REQUIRE(cut != std::string::npos);
  const Error error = load_error_of(directory, text.substr(0, cut));
  CHECK(error.message == (directory / "step_tokens.json").string() + " ends in the middle of its JSON (" +
                             std::to_string(cut) + " bytes): the file is cut short, e.g. the workload was stopped "
                             "while writing it");
  CHECK_THAT(error.hint, Catch::Contains("write a temporary file, then rename it into place"));
  CHECK(load_error_of(directory, "").message == (directory / "step_tokens.json").string() + " is empty");
  // A syntax error is named with where it is.
  CHECK_THAT(load_error_of(directory, "{\"schema\": }").message, Catch::Contains("is not valid JSON at byte 11"));
}

TEST_CASE("a step tokens file with a UTF-8 byte order mark reads as the same counts", "[step_tokens]") {
  auto plain = parse_step_tokens(recorded_tokens_text(), "t");
  auto marked = parse_step_tokens("\xEF\xBB\xBF" + recorded_tokens_text(), "t");
  REQUIRE(plain);
  REQUIRE(marked);
  REQUIRE(marked->windows.size() == 2);
  CHECK(marked->windows[1].kinds.at("mixed_batch").prompt_tokens == 4018);
  CHECK(marked->windows[0].kinds.at("decode_batch").decode_tokens == plain->windows[0].kinds.at("decode_batch").decode_tokens);
}

TEST_CASE("a step tokens count past 2^63 - 1 is named as too large, not as 'not an integer'", "[step_tokens]") {
  TempDir directory;
  std::string text = recorded_tokens_text();
  const std::string count = "\"decode_tokens\": 352";
  for (const auto& [value, shown] : {std::pair{"9223372036854775808", "9223372036854775808"},
                                     std::pair{"18446744073709551616", "1.8446744073709552E19"},
                                     std::pair{"1e19", "1E19"}}) {
    std::string doctored = text;
    doctored.replace(doctored.find(count), count.size(), std::string("\"decode_tokens\": ") + value);
    INFO(value);
    CHECK(load_error_of(directory, doctored).message ==
          (directory / "step_tokens.json").string() + ": windows[0].kinds.decode_batch.decode_tokens is " + shown +
              ", past the largest count it can hold exactly (9223372036854775807 as an integer, 9007199254740992 "
              "written as a decimal or with an exponent)");
  }
  // A fraction is still "not an integer".
  std::string fraction = text;
  fraction.replace(fraction.find(count), count.size(), "\"decode_tokens\": 352.5");
  CHECK_THAT(load_error_of(directory, fraction).message, Catch::Contains("must be an integer, not the number 3.525E2"));
}

TEST_CASE("a step kind counted twice in one window is an error, not the last count silently", "[step_tokens]") {
  TempDir directory;
  std::string text = recorded_tokens_text();
  // The second window's decode_batch written twice (a writer that appends per step): Boost.JSON kept the last.
  const std::string second = "\"decode_batch\": {\n     \"steps\": 21";
  const auto at = text.find(second);
  REQUIRE(at != std::string::npos);
  text.insert(at, "\"decode_batch\": {\"steps\": 1, \"prompt_tokens\": 0, \"decode_tokens\": 16},\n    ");
  const Error error = load_error_of(directory, text);
  CHECK(error.message == (directory / "step_tokens.json").string() +
                             ": windows[1].kinds.decode_batch appears twice in its object: JSON readers keep one of "
                             "the two (Boost.JSON the last) and the other count would be lost; merge them into one "
                             "entry");
  // A key repeated inside a kind too.
  std::string inner = recorded_tokens_text();
  inner.replace(inner.find("\"steps\": 18"), 11, "\"steps\": 18, \"steps\": 9");
  CHECK_THAT(load_error_of(directory, inner).message, Catch::Contains("windows[0].kinds.mixed_batch.steps appears twice"));
}
