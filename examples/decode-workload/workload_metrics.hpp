// The stage-1 metrics file of llmprof-decode, schema "llmprof.workload_metrics/1" (contract 2 in the
// team notes; read back by llmprof::load_workload_metrics).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_config.hpp"

namespace decode_workload {

struct MeasuredRun {
  std::string device;       // "cpu" | "cuda:N"
  std::string device_name;  // CPU model name or GPU name
  std::string dtype;        // "fp32" | "fp16" | "bf16"
  double prefill_s = 0.0;   // prompt through the model and the first token sampled, synchronised
  double decode_s = 0.0;    // all decode steps, synchronised
  std::string nvtx_domain;  // "" = default domain
  std::vector<std::string> nvtx_ranges;
};

// Builds the JSON text. Derived fields: generated_tokens = batch * new_tokens, tokens_per_s =
// generated_tokens / decode_s, time_per_output_token_s = decode_s / new_tokens, flop_per_prefill per
// sequence, flop_per_token = mean over decode steps per sequence, decode_flop = over all steps and sequences.
std::string workload_metrics_json(const ModelConfig& model, const RunShape& run, const MeasuredRun& measured);

// Writes the text to `path` through a temporary file and a rename, so a reader never sees half a file.
// Returns an empty string on success, else what went wrong.
std::string write_text_file(const std::string& path, const std::string& text);

}  // namespace decode_workload
