// Every string that reaches JSON is valid UTF-8 (core/utf8 + the one JSON writer), and the original
// bytes of what reproduces a command (argv, cwd, env, the command line) survive in base64.
#include "core/utf8.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "core/json_pretty.hpp"
#include "llmprof/run_directory.hpp"
#include "rundir/run_records.hpp"

using namespace llmprof;
using namespace llmprof::detail;

namespace {

// What any strict reader (Python's json, jq, Boost.JSON's default) accepts.
bool strictly_parses(const std::string& text) {
  boost::system::error_code error;
  (void)boost::json::parse(text, error);
  return !error;
}

// The UTF-8 encoding of code point `cp` (RFC 3629), by the bit layout alone: the oracle below checks the validator's
// table of lead bytes against it.
std::string encoded(std::uint32_t cp) {
  std::string bytes;
  auto put = [&](std::uint32_t byte) { bytes += static_cast<char>(byte); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xC0 | (cp >> 6)), put(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    put(0xE0 | (cp >> 12)), put(0x80 | ((cp >> 6) & 0x3F)), put(0x80 | (cp & 0x3F));
  } else {
    put(0xF0 | (cp >> 18)), put(0x80 | ((cp >> 12) & 0x3F)), put(0x80 | ((cp >> 6) & 0x3F)), put(0x80 | (cp & 0x3F));
  }
  return bytes;
}

// Well-formed exactly when the bytes decode to a Unicode scalar value (not a surrogate, at most U+10FFFF) whose own
// encoding they are: overlong forms re-encode shorter.
bool well_formed(const std::string& bytes) {
  const auto lead = static_cast<unsigned char>(bytes[0]);
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  if (lead < 0xC0 || lead >= 0xF8 || bytes.size() != length) return false;
  std::uint32_t cp = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    if ((byte & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (byte & 0x3F);
  }
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  return encoded(cp) == bytes;
}

}  // namespace

TEST_CASE("UTF-8 validation agrees with decoding and re-encoding for every lead byte and second byte") {
  int checked = 0;
  for (int lead = 0x80; lead <= 0xFF; ++lead) {
    const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    for (int second = 0x00; second <= 0xFF; ++second) {
      for (const int rest : {0x80, 0xBF, 0x41}) {  // later bytes at both ends of 80..BF, and one outside
        std::string bytes{static_cast<char>(lead), static_cast<char>(second)};
        while (bytes.size() < length) bytes += static_cast<char>(rest);
        INFO("bytes " << std::hex << lead << " " << second << " " << rest);
        CHECK(is_valid_utf8(bytes) == well_formed(bytes));
        ++checked;
      }
    }
  }
  CHECK(checked == 128 * 256 * 3);
}

TEST_CASE("UTF-8 validation follows Unicode's well-formed table") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // é € 😀
  CHECK_FALSE(is_valid_utf8("x\xE9"));                                // Latin-1 é
  CHECK_FALSE(is_valid_utf8("\xC0\x80"));                             // overlong NUL
  CHECK_FALSE(is_valid_utf8("\xE0\x80\xAF"));                         // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));                         // a UTF-16 surrogate
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));                     // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xE2\x82"));                             // truncated
  CHECK(to_valid_utf8("x\xE9y") == "x\xEF\xBF\xBDy");
  CHECK(to_valid_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // one U+FFFD per bad byte
  CHECK(to_valid_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
}

TEST_CASE("base64 matches RFC 4648's test vectors and rejects what is not canonical") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    CHECK(encode_base64(bytes) == text);
    CHECK(decode_base64(text) == std::optional<std::string>(bytes));
  }
  const std::string all_bytes = [] {
    std::string s;
    for (int i = 0; i < 256; ++i) s += static_cast<char>(i);
    return s;
  }();
  CHECK(decode_base64(encode_base64(all_bytes)) == all_bytes);
  CHECK_FALSE(decode_base64("Zg=").has_value());
  CHECK_FALSE(decode_base64("Z=g=").has_value());
  CHECK_FALSE(decode_base64("Zh==").has_value());  // non-zero trailing bits
  CHECK_FALSE(decode_base64("Zm9v!A==").has_value());
}

TEST_CASE("the JSON writer repairs invalid UTF-8 in keys and values; the reader accepts old raw files") {
  const boost::json::object value = {{"range \xE9", "prefill\xFF"}, {"list", boost::json::array{"ok", "x\xE9"}}};
  const std::string text = pretty_json(value);
  CHECK(is_valid_utf8(text));
  CHECK(strictly_parses(text));  // before: the bytes went out raw and no strict reader took the file
  CHECK(text.find("prefill\xEF\xBF\xBD") != std::string::npos);
  CHECK(text.find("\"range \xEF\xBF\xBD\"") != std::string::npos);

  boost::system::error_code error;
  const auto old_file = parse_json_text("{\"name\": \"x\xE9\"}", error);
  REQUIRE_FALSE(error);
  CHECK(old_file.at("name").as_string() == "x\xE9");
}

TEST_CASE("run.json and inputs.json keep argv, cwd, env and commands byte for byte beside readable text") {
  RunManifest manifest;
  manifest.run_id = "r1";
  manifest.workload.argv = {"/bin/sh", "-c", "echo \xE9t\xE9", "plain"};
  manifest.workload.working_directory = "/tmp/x\xE9";
  manifest.workload.environment = {{"LANG", "C"}, {"NAME", "Jos\xE9"}};
  StageRecord stage;
  stage.name = "stage1";
  stage.command = "/bin/sh -c 'echo \xE9t\xE9'";
  manifest.stages.push_back(stage);

  const std::string text = manifest_to_json(manifest);
  CHECK(is_valid_utf8(text));
  CHECK(strictly_parses(text));
  CHECK(text.find("\"argv_base64\"") != std::string::npos);
  CHECK(text.find("\"cwd_base64\": \"" + encode_base64("/tmp/x\xE9") + "\"") != std::string::npos);
  CHECK(text.find("\"command_base64\"") != std::string::npos);
  CHECK(text.find("\"LANG\": \"Qw==\"") == std::string::npos);  // valid values need no copy

  const auto read = manifest_from_json(text);
  REQUIRE(read.has_value());
  CHECK(read->workload.argv == manifest.workload.argv);
  CHECK(read->workload.working_directory == manifest.workload.working_directory);
  CHECK(read->workload.environment == manifest.workload.environment);
  CHECK(read->stages.at(0).command == stage.command);

  const std::string inputs = inputs_to_json(manifest.workload);
  CHECK(strictly_parses(inputs));
  CHECK(inputs.find("\"argv_base64\"") != std::string::npos);

  // A plain UTF-8 workload gets no base64 copies at all.
  RunManifest plain;
  plain.run_id = "r2";
  plain.workload.argv = {"caf\xC3\xA9"};
  CHECK(manifest_to_json(plain).find("_base64") == std::string::npos);
}

TEST_CASE("a run.json written raw by an older llmprof is still readable") {
  const std::string old =
      "{\"schema\":\"llmprof.run/1\",\"run_id\":\"r\",\"status\":\"ok\",\"workload\":{\"argv\":[\"a\xE9\"],\"cwd\":\"/"
      "x\xE9\"},"
      "\"stages\":[]}";
  const auto read = manifest_from_json(old);
  REQUIRE(read.has_value());  // before: "run.json is not valid JSON"
  CHECK(read->workload.argv == std::vector<std::string>{"a\xE9"});
}
