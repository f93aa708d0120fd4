// Sizes of the Llama-style decoder, its named presets, and the analytic parameter and FLOP counts.
// Deliberately free of LibTorch so that the arithmetic can be read (and tested) on its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace decode_workload {

struct ModelConfig {
  std::int64_t layers = 4;
  std::int64_t hidden = 256;
  std::int64_t heads = 8;
  std::int64_t kv_heads = 2;
  std::int64_t intermediate = 688;
  std::int64_t vocab = 4096;
  double rope_theta = 10000.0;
  double rms_epsilon = 1e-5;

  std::int64_t head_dim() const { return hidden / heads; }
  // Width of all query heads together ("hidden_q"); equals `hidden` for Llama-style models.
  std::int64_t query_width() const { return heads * head_dim(); }
  // Width of the key (and of the value) projection: GQA shares each KV head among heads/kv_heads query heads.
  std::int64_t kv_width() const { return kv_heads * head_dim(); }
};

// The run around the model: how many sequences, how long a prompt, how many decode steps.
struct RunShape {
  std::int64_t batch = 1;
  std::int64_t prompt_tokens = 64;
  std::int64_t new_tokens = 32;  // decode steps; each appends one token to every sequence
};

struct Preset {
  std::string name;
  std::string description;
  ModelConfig model;
  RunShape run;
  std::string dtype;   // "fp32" | "fp16" | "bf16"
  std::string device;  // "cpu" | "cuda" | "cuda:N"
};

// "tiny": the default, seconds on a laptop CPU. "1b": Llama-3.2-1B-like shapes (hidden 2048, 16 layers,
// 32 heads, 8 KV heads, intermediate 8192) with a 32000-token vocabulary and an untied LM head:
// 1.10e9 parameters (Llama 3.2's 128256-token vocabulary would add 0.5e9 in embedding + LM head and make
// the LM head, not the blocks, dominate decode).
inline std::vector<Preset> presets() {
  Preset tiny{"tiny", "CPU default, runs in about a second", ModelConfig{}, RunShape{}, "fp32", "cpu"};
  Preset one_b{"1b",
               "~1.1B parameters, Llama-3.2-1B-like shapes, bf16 on the GPU",
               ModelConfig{16, 2048, 32, 8, 8192, 32000, 500000.0, 1e-5},
               RunShape{1, 512, 128},
               "bf16",
               "cuda"};
  return {tiny, one_b};
}

inline std::optional<Preset> find_preset(std::string_view name) {
  for (const Preset& preset : presets()) {
    if (preset.name == name) return preset;
  }
  return std::nullopt;
}

// Weights of the linear layers of one block: q, k, v, o projections and the SwiGLU gate, up, down.
inline std::int64_t block_linear_parameters(const ModelConfig& config) {
  const std::int64_t attention = config.hidden * config.query_width()     // q
                                 + 2 * config.hidden * config.kv_width()  // k, v
                                 + config.query_width() * config.hidden;  // o
  const std::int64_t mlp = 3 * config.hidden * config.intermediate;       // gate, up, down
  return attention + mlp;
}

inline std::int64_t lm_head_parameters(const ModelConfig& config) { return config.vocab * config.hidden; }

// Every parameter the model holds: embedding, blocks (linears + two RMSNorm weights), final norm, LM head
// (untied from the embedding).
inline std::int64_t parameter_count(const ModelConfig& config) {
  const std::int64_t embedding = config.vocab * config.hidden;
  const std::int64_t per_block = block_linear_parameters(config) + 2 * config.hidden;
  return embedding + config.layers * per_block + config.hidden + lm_head_parameters(config);
}

// Analytic model FLOP (multiply-add = 2 FLOP; norms, RoPE, softmax, SiLU ignored as they are O(hidden)).
//
// One token at a position whose attention sees `context` tokens (itself included) costs
//   2 * P_linear                               every linear weight once (blocks + LM head; not the embedding,
//                                              which is a lookup)
//   + 2 * 2 * layers * hidden_q * context      QK^T and PV: hidden_q multiply-adds per context token, each
// where P_linear = layers * block_linear_parameters + vocab * hidden and hidden_q = heads * head_dim.
inline double flop_per_token(const ModelConfig& config, std::int64_t context, bool with_lm_head = true) {
  const double linear = static_cast<double>(config.layers * block_linear_parameters(config)) +
                        (with_lm_head ? static_cast<double>(lm_head_parameters(config)) : 0.0);
  const double attention =
      4.0 * static_cast<double>(config.layers * config.query_width()) * static_cast<double>(context);
  return 2.0 * linear + attention;
}

// A prefill of `prompt_tokens` tokens (one sequence): the sum over prompt positions p = 1..P of the
// per-token cost with context p (causal attention), where the LM head runs on the last position only
// (the program computes logits only there, as inference engines do):
//   P * 2 * layers * block_linear + 2 * vocab * hidden + 4 * layers * hidden_q * P(P+1)/2
inline double flop_per_prefill(const ModelConfig& config, std::int64_t prompt_tokens) {
  double total = 0.0;
  for (std::int64_t position = 1; position <= prompt_tokens; ++position) {
    total += flop_per_token(config, position, /*with_lm_head=*/false);
  }
  return total + 2.0 * static_cast<double>(lm_head_parameters(config));
}

// Decode step i (0-based) feeds the token at position prompt+i, so it attends to prompt+i+1 tokens.
// Returns the mean over the steps, per sequence.
inline double mean_decode_flop_per_token(const ModelConfig& config, const RunShape& run) {
  if (run.new_tokens <= 0) return 0.0;
  double total = 0.0;
  for (std::int64_t step = 0; step < run.new_tokens; ++step) {
    total += flop_per_token(config, run.prompt_tokens + step + 1);
  }
  return total / static_cast<double>(run.new_tokens);
}

// The bytes one decode step must read from DRAM for the whole batch, mean over the steps: every weight
// once (the LM head and all blocks; of the embedding only the batch's rows, it is a lookup) and, per
// sequence, the K and V of every token the step attends to (the new token's included). Activations are
// left out: at decode they are O(batch x hidden) per layer, under 0.1% of the weights for the presets.
inline double mean_decode_bytes_per_step(const ModelConfig& config, const RunShape& run, double bytes_per_element) {
  if (run.new_tokens <= 0) return 0.0;
  const double embedding_rows = static_cast<double>(run.batch * config.hidden);
  const double weights =
      static_cast<double>(parameter_count(config) - config.vocab * config.hidden) + embedding_rows;
  double kv_elements = 0.0;
  for (std::int64_t step = 0; step < run.new_tokens; ++step) {
    kv_elements += 2.0 * static_cast<double>(config.layers * config.kv_width()) *
                   static_cast<double>(run.prompt_tokens + step + 1);
  }
  const double kv_per_step = kv_elements / static_cast<double>(run.new_tokens) * static_cast<double>(run.batch);
  return (weights + kv_per_step) * bytes_per_element;
}

// Everything the decode loop computes: all steps, all sequences of the batch.
inline double decode_flop_total(const ModelConfig& config, const RunShape& run) {
  return mean_decode_flop_per_token(config, run) * static_cast<double>(run.new_tokens * run.batch);
}

}  // namespace decode_workload
