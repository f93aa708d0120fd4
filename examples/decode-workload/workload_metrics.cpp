// JSON writer for the stage-1 metrics (hand-written: the example must build where no Boost is installed).
#include "workload_metrics.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace decode_workload {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Shortest text that reads back as the same double; JSON has no inf/nan, so those become null.
std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

std::string workload_metrics_json(const ModelConfig& model, const RunShape& run, const MeasuredRun& measured) {
  const std::int64_t generated_tokens = run.batch * run.new_tokens;
  std::ostringstream json;
  json << "{\n"
       << "  \"schema\": \"llmprof.workload_metrics/1\",\n"
       << "  \"model\": \"llama-style\",\n"
       << "  \"device\": " << quoted(measured.device) << ",\n"
       << "  \"device_name\": " << quoted(measured.device_name) << ",\n"
       << "  \"dtype\": " << quoted(measured.dtype) << ",\n"
       << "  \"batch\": " << run.batch << ",\n"
       << "  \"prompt_tokens\": " << run.prompt_tokens << ",\n"
       << "  \"new_tokens\": " << run.new_tokens << ",\n"
       << "  \"layers\": " << model.layers << ",\n"
       << "  \"hidden\": " << model.hidden << ",\n"
       << "  \"heads\": " << model.heads << ",\n"
       << "  \"kv_heads\": " << model.kv_heads << ",\n"
       << "  \"intermediate\": " << model.intermediate << ",\n"
       << "  \"vocab\": " << model.vocab << ",\n"
       << "  \"parameters\": " << parameter_count(model) << ",\n"
       << "  \"prefill_s\": " << number(measured.prefill_s) << ",\n"
       << "  \"decode_s\": " << number(measured.decode_s) << ",\n"
       << "  \"time_per_output_token_s\": " << number(measured.decode_s / static_cast<double>(run.new_tokens)) << ",\n"
       << "  \"tokens_per_s\": " << number(static_cast<double>(generated_tokens) / measured.decode_s) << ",\n"
       << "  \"generated_tokens\": " << generated_tokens << ",\n"
       << "  \"flop_per_prefill\": " << number(flop_per_prefill(model, run.prompt_tokens)) << ",\n"
       << "  \"flop_per_token\": " << number(mean_decode_flop_per_token(model, run)) << ",\n"
       << "  \"decode_flop\": " << number(decode_flop_total(model, run)) << ",\n"
       << "  \"model_bytes_per_step\": "
       << number(mean_decode_bytes_per_step(model, run, measured.dtype == "fp32" ? 4.0 : 2.0)) << ",\n"
       << "  \"nvtx_domain\": " << quoted(measured.nvtx_domain) << ",\n"
       << "  \"nvtx_ranges\": [";
  for (std::size_t index = 0; index < measured.nvtx_ranges.size(); ++index) {
    json << (index == 0 ? "" : ", ") << quoted(measured.nvtx_ranges[index]);
  }
  json << "]\n}\n";
  return json.str();
}

std::string write_text_file(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  const std::filesystem::path temporary = target.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      return "cannot create '" + temporary.string() + "': " + std::strerror(errno) +
             " (does the directory exist and is it writable?)";
    }
    out << text;
    out.flush();
    if (!out) return "cannot write '" + temporary.string() + "': " + std::strerror(errno);
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) return "cannot rename '" + temporary.string() + "' to '" + path + "': " + error.message();
  return {};
}

}  // namespace decode_workload
