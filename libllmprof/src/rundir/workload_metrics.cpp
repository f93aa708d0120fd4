// Reading llmprof.workload_metrics/1 files with Boost.JSON, strictly: every contract key must be
// present with its type, so a half-written or foreign file is an error rather than zeros in the MFU.
#include "llmprof/workload_metrics.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "core/json_pretty.hpp"
#include "core/text.hpp"

namespace llmprof {
namespace {

constexpr const char* schema_hint =
    "the file must be the JSON object the workload writes with --metrics-out (schema llmprof.workload_metrics/1)";

class FieldReader {
 public:
  FieldReader(const boost::json::object& object, const std::string& source) : object_(object), source_(source) {}

  const boost::json::value* find(const char* key) {
    if (error_) return nullptr;
    const auto* value = object_.if_contains(key);
    if (!value) fail(key, "is missing");
    return value;
  }
  void text(const char* key, std::string& out) {
    const auto* value = find(key);
    if (!value) return;
    if (!value->is_string()) return fail(key, "must be a string, not " + detail::describe_json_value(*value));
    out = std::string(value->get_string());
  }
  void integer(const char* key, std::int64_t& out) {
    const auto* value = find(key);
    if (!value) return;
    const auto integer = detail::json_to_int64(*value);  // 4.0 written by a Python float is 4
    if (!integer) return fail(key, "must be an integer, not " + detail::describe_json_value(*value));
    out = *integer;
    if (out < 0) fail(key, "must not be negative (got " + std::to_string(out) + ")");
  }
  void number(const char* key, double& out) {
    const auto* value = find(key);
    if (!value) return;
    if (!value->is_number()) return fail(key, "must be a number, not " + detail::describe_json_value(*value));
    out = value->to_number<double>();
    if (!std::isfinite(out) || out < 0)
      fail(key, "must be a finite number >= 0, not " + detail::describe_json_value(*value));
  }
  void text_list(const char* key, std::vector<std::string>& out) {
    const auto* value = find(key);
    if (!value) return;
    if (!value->is_array()) return fail(key, "must be an array of strings, not " + detail::describe_json_value(*value));
    for (const auto& item : value->get_array()) {
      if (!item.is_string()) return fail(key, "must hold only strings, found " + detail::describe_json_value(item));
      out.emplace_back(item.get_string());
    }
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  void fail(const char* key, const std::string& what) {
    if (error_) return;
    error_ = make_error(ErrorCode::parse_error, source_ + ": key \"" + key + "\" " + what, schema_hint, key);
  }
  const boost::json::object& object_;
  const std::string& source_;
  std::optional<Error> error_;
};

}  // namespace

double WorkloadMetrics::decode_model_flop_per_s() const {
  return decode_s > 0 ? flop_per_token * static_cast<double>(generated_tokens) / decode_s : 0.0;
}

double WorkloadMetrics::prefill_model_flop_per_s() const { return prefill_s > 0 ? flop_per_prefill / prefill_s : 0.0; }

namespace {

// The document's top level: JSON, an object, and this schema; an Error says which it is not.
Result<boost::json::object> metrics_object(std::string_view json_text, const std::string& source_name) {
  if (detail::is_blank(json_text)) {
    return make_error(ErrorCode::parse_error, source_name + ": the workload metrics file is empty", schema_hint,
                      source_name);
  }
  boost::system::error_code parse_error;
  boost::json::value document = detail::parse_json_text(json_text, parse_error);
  if (parse_error) {
    return make_error(ErrorCode::parse_error, source_name + ": not valid JSON (" + parse_error.message() + ")",
                      schema_hint, source_name);
  }
  if (!document.is_object()) {
    return make_error(ErrorCode::parse_error,
                      source_name + ": expected a JSON object, found " + detail::describe_json_value(document),
                      schema_hint, source_name);
  }
  const auto* schema = document.get_object().if_contains("schema");
  if (!schema || !schema->is_string() || schema->get_string() != workload_metrics_schema) {
    const std::string found = schema ? detail::describe_json_value(*schema) : std::string("no \"schema\" key");
    return make_error(
        ErrorCode::parse_error,
        source_name + ": expected schema \"" + std::string(workload_metrics_schema) + "\", found " + found, schema_hint,
        "schema");
  }
  return std::move(document.get_object());
}

}  // namespace

// Alike in shape only to parse_step_tokens' start: each file's reader says its own errors (the duplicates tool pairs
// the two by shape).
Result<WorkloadMetrics> parse_workload_metrics(std::string_view json_text, const std::string& source_name) {
  auto document = metrics_object(json_text, source_name);
  if (!document) return document.error();
  const boost::json::object& object = document.value();
  WorkloadMetrics metrics;
  FieldReader read(object, source_name);
  read.text("model", metrics.model);
  read.text("device", metrics.device);
  read.text("device_name", metrics.device_name);
  read.text("dtype", metrics.dtype);
  read.integer("batch", metrics.batch);
  read.integer("prompt_tokens", metrics.prompt_tokens);
  read.integer("new_tokens", metrics.new_tokens);
  read.integer("layers", metrics.layers);
  read.integer("hidden", metrics.hidden);
  read.integer("heads", metrics.heads);
  read.integer("kv_heads", metrics.kv_heads);
  read.integer("intermediate", metrics.intermediate);
  read.integer("vocab", metrics.vocab);
  read.integer("parameters", metrics.parameters);
  read.number("prefill_s", metrics.prefill_s);
  read.number("decode_s", metrics.decode_s);
  read.number("time_per_output_token_s", metrics.time_per_output_token_s);
  read.number("tokens_per_s", metrics.tokens_per_s);
  read.integer("generated_tokens", metrics.generated_tokens);
  read.number("flop_per_prefill", metrics.flop_per_prefill);
  read.number("flop_per_token", metrics.flop_per_token);
  read.number("decode_flop", metrics.decode_flop);
  // Optional (added without a schema change: older files lack it, and readers of /1 ignore unknown keys).
  if (object.if_contains("model_bytes_per_step")) {
    // Its own reader: a bad value leaves this key out with a warning, not the whole file (a negative
    // model_bytes_per_step passed stage 1 silently, then failed the analysis, and the run had no report at all).
    FieldReader optional(object, source_name);
    double bytes = 0;
    optional.number("model_bytes_per_step", bytes);
    if (optional.error()) {
      metrics.warnings.push_back(optional.error()->message +
                                 "; left out: model MBU and the measured-vs-model bytes are not computed");
    } else {
      metrics.model_bytes_per_step = bytes;
    }
  }
  read.text("nvtx_domain", metrics.nvtx_domain);
  read.text_list("nvtx_ranges", metrics.nvtx_ranges);
  if (read.error()) return *read.error();

  if (metrics.dtype != "bf16" && metrics.dtype != "fp16" && metrics.dtype != "fp32") {
    return make_error(
        ErrorCode::parse_error,
        source_name + ": key \"dtype\" must be \"bf16\", \"fp16\" or \"fp32\", not \"" + metrics.dtype + "\"",
        schema_hint, "dtype");
  }
  return metrics;
}

Result<WorkloadMetrics> load_workload_metrics(const std::filesystem::path& path) {
  auto text = detail::read_input_file(path, "workload metrics file",
                                      "run the workload with --metrics-out FILE (or LLMPROF_METRICS_FILE) to write it");
  if (!text) return text.error();
  return parse_workload_metrics(*text, path.string());
}

}  // namespace llmprof
