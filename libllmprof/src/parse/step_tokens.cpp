// Reading llmprof.step_tokens/1 files strictly: a count that is missing, fractional or negative, or counts whose
// sum overflows, is an error naming the key, never a zero or a wrapped sum that would turn into a time per token.
#include "llmprof/step_tokens.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <cmath>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "core/text.hpp"

namespace llmprof {
namespace {

constexpr const char* kHint =
    "write {\"schema\": \"llmprof.step_tokens/1\", \"windows\": [{\"kinds\": {\"<kind>\": {\"steps\": N, "
    "\"prompt_tokens\": N, \"decode_tokens\": N}}}]} (llmprof/step_tokens.hpp), or leave the file out";

Error malformed(const std::string& source, const std::string& key, const std::string& what) {
  return make_error(ErrorCode::parse_error, source + ": " + key + " " + what, kHint, key);
}

Result<std::int64_t> count_of(const boost::json::object& object, const char* key, const std::string& where,
                              const std::string& source) {
  const std::string name = where + "." + key;
  const auto* value = object.if_contains(key);
  if (value == nullptr) return malformed(source, name, "is missing");
  const auto count = detail::json_to_int64(*value);
  // A whole number too large to count with: Boost.JSON reads 2^63 .. 2^64 - 1 as uint64 and larger ones as double
  // (which is exact only up to 2^53), so "not an integer" would name the wrong fault.
  const bool too_large = value->is_uint64() || (value->is_double() && std::isfinite(value->get_double()) &&
                                                value->get_double() == std::floor(value->get_double()) &&
                                                std::fabs(value->get_double()) > 9007199254740992.0);
  if (!count && too_large)
    return malformed(source, name,
                     "is " + boost::json::serialize(*value) +
                         ", past the largest count it can hold exactly (9223372036854775807 as an integer, "
                         "9007199254740992 written as a decimal or with an exponent)");
  if (!count) return malformed(source, name, "must be an integer, not " + detail::describe_json_value(*value));
  if (*count < 0) return malformed(source, name, "must not be negative (got " + std::to_string(*count) + ")");
  return *count;
}

Result<WindowTokens> window_of(const boost::json::value& value, const std::string& where, const std::string& source) {
  if (!value.is_object()) return malformed(source, where, "must be an object, not " + detail::describe_json_value(value));
  const auto* kinds = value.get_object().if_contains("kinds");
  if (kinds == nullptr) return malformed(source, where + ".kinds", "is missing");
  if (!kinds->is_object())
    return malformed(source, where + ".kinds", "must be an object, not " + detail::describe_json_value(*kinds));
  WindowTokens window;
  for (const auto& [name, entry] : kinds->get_object()) {
    const std::string kind_key = where + ".kinds." + std::string(name);
    if (name.empty()) return malformed(source, kind_key, "names no step kind (an empty key)");
    if (!entry.is_object())
      return malformed(source, kind_key, "must be an object, not " + detail::describe_json_value(entry));
    KindTokens tokens;
    for (auto [key, out] : {std::pair{"steps", &tokens.steps}, std::pair{"prompt_tokens", &tokens.prompt_tokens},
                            std::pair{"decode_tokens", &tokens.decode_tokens}}) {
      auto count = count_of(entry.get_object(), key, kind_key, source);
      if (!count) return count.error();
      *out = *count;
    }
    // The time per token divides by their sum: a sum past 2^63 - 1 would wrap into a negative count.
    if (std::int64_t carried = 0; __builtin_add_overflow(tokens.prompt_tokens, tokens.decode_tokens, &carried))
      return malformed(source, kind_key,
                       "carries more tokens than a 64-bit count holds (prompt_tokens " +
                           std::to_string(tokens.prompt_tokens) + " + decode_tokens " +
                           std::to_string(tokens.decode_tokens) + ")");
    window.kinds[std::string(name)] = tokens;
  }
  return window;
}

// Finds the first key an object holds twice (Boost.JSON 1.81 keeps the last one silently, so a file with two
// "decode_batch" entries lost the first window's count without a word). A basic_parser handler over the text, so
// the path of the duplicate ("windows[0].kinds.decode_batch") can be named.
class DuplicateKeyFinder {
 public:
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  using error_code = boost::system::error_code;
  using string_view = boost::json::string_view;

  std::optional<std::string> duplicate;  // the path of the first duplicate key

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) { return open(true); }
  bool on_object_end(std::size_t, error_code&) { return close(); }
  bool on_array_begin(error_code&) { return open(false); }
  bool on_array_end(std::size_t, error_code&) { return close(); }
  bool on_key_part(string_view part, std::size_t, error_code&) {
    key_.append(part.data(), part.size());
    return true;
  }
  bool on_key(string_view part, std::size_t, error_code&) {
    key_.append(part.data(), part.size());
    Frame& frame = frames_.back();
    frame.key = std::move(key_);
    key_.clear();
    if (!frame.keys.insert(frame.key).second && !duplicate) duplicate = path();
    return true;
  }
  bool on_string_part(string_view, std::size_t, error_code&) { return true; }
  bool on_string(string_view, std::size_t, error_code&) { return value(); }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(std::int64_t, string_view, error_code&) { return value(); }
  bool on_uint64(std::uint64_t, string_view, error_code&) { return value(); }
  bool on_double(double, string_view, error_code&) { return value(); }
  bool on_bool(bool, error_code&) { return value(); }
  bool on_null(error_code&) { return value(); }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;         // the object's current key
    std::size_t index = 0;   // the array's current element
  };
  bool open(bool object) {
    frames_.push_back(Frame{object, {}, {}, 0});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return value();
  }
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  std::string path() const {
    std::string text;
    for (const Frame& frame : frames_) {
      if (frame.object)
        text += (text.empty() ? "" : ".") + frame.key;
      else
        text += "[" + std::to_string(frame.index) + "]";
    }
    return text;
  }
  std::vector<Frame> frames_;
  std::string key_;
};

// Parses the file's JSON: a file cut short is said to be cut short (the workload stopped while writing it), not
// "not valid JSON" with advice about another file; a syntax error gives its byte offset.
Result<boost::json::object> parse_document(std::string_view text, const std::string& source) {
  constexpr std::string_view bom = "\xEF\xBB\xBF";  // a UTF-8 byte order mark: some editors write one, JSON allows
                                                   // a reader to skip it (RFC 8259, 8.1)
  if (text.substr(0, bom.size()) == bom) text.remove_prefix(bom.size());
  const auto rewrite = [&](const std::string& what) {
    return make_error(ErrorCode::parse_error, source + " " + what,
                      "have the workload write the whole file before it exits (write a temporary file, then rename "
                      "it into place), or leave the file out",
                      source);
  };
  if (detail::is_blank(text)) return rewrite("is empty");
  boost::json::parse_options options;
  options.allow_invalid_utf8 = true;
  boost::json::stream_parser parser({}, options);
  boost::system::error_code error;
  const std::size_t read = parser.write_some(text.data(), text.size(), error);
  if (!error && read == text.size()) parser.finish(error);
  if (error == boost::json::error::incomplete || (!error && !parser.done()))
    return rewrite("ends in the middle of its JSON (" + std::to_string(text.size()) +
                   " bytes): the file is cut short, e.g. the workload was stopped while writing it");
  if (error)
    return make_error(ErrorCode::parse_error,
                      source + " is not valid JSON at byte " + std::to_string(read) + ": " + error.message(), kHint,
                      source);
  if (read < text.size() && !detail::is_blank(text.substr(read)))
    return make_error(ErrorCode::parse_error,
                      source + " has more after its JSON ends (at byte " + std::to_string(read) + ")", kHint, source);
  boost::json::value root = parser.release();
  if (!root.is_object())
    return make_error(ErrorCode::parse_error,
                      source + " is not a JSON object (it holds " + detail::describe_json_value(root) + ")", kHint,
                      source);
  boost::json::basic_parser<DuplicateKeyFinder> finder(options);
  finder.write_some(false, text.data(), text.size(), error);
  if (const auto& duplicate = finder.handler().duplicate)
    return malformed(source, *duplicate,
                     "appears twice in its object: JSON readers keep one of the two (Boost.JSON the last) and the "
                     "other count would be lost; merge them into one entry");
  return std::move(root.get_object());
}

}  // namespace

Result<StepTokens> parse_step_tokens(std::string_view json_text, const std::string& source_name) {
  auto object = parse_document(json_text, source_name);
  if (!object) return object.error();
  const auto* schema = object->if_contains("schema");
  if (schema == nullptr || !schema->is_string() || schema->get_string() != step_tokens_schema)
    return malformed(source_name, "schema",
                     "must be \"" + std::string(step_tokens_schema) + "\", not " +
                         (schema ? detail::describe_json_value(*schema) : std::string("missing")));
  const auto* windows = object->if_contains("windows");
  if (windows == nullptr) return malformed(source_name, "windows", "is missing");
  if (!windows->is_array())
    return malformed(source_name, "windows", "must be an array, not " + detail::describe_json_value(*windows));
  StepTokens tokens;
  for (std::size_t i = 0; i < windows->get_array().size(); ++i) {
    auto window = window_of(windows->get_array()[i], "windows[" + std::to_string(i) + "]", source_name);
    if (!window) return window.error();
    tokens.windows.push_back(std::move(*window));
  }
  return tokens;
}

Result<StepTokens> load_step_tokens(const std::filesystem::path& path) {
  auto text = detail::read_input_file(path, "step tokens file", "have the workload write it where LLMPROF_STEP_TOKENS_FILE says");
  if (!text) return text.error();
  return parse_step_tokens(*text, path.string());
}

}  // namespace llmprof
