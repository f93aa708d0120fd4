// Reading llmprof.step_tokens/1 files strictly: a count that is missing, fractional or negative, or counts whose
// sum overflows, is an error naming the key, never a zero or a wrapped sum that would turn into a time per token.
#include "llmprof/step_tokens.hpp"

#include <boost/json/parse.hpp>
#include <utility>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"

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

}  // namespace

Result<StepTokens> parse_step_tokens(std::string_view json_text, const std::string& source_name) {
  auto object = detail::parse_json_object(json_text, source_name);
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
