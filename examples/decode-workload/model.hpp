// A Llama-style decoder in LibTorch (random weights, fixed seed) with a KV cache, greedy decoding, and
// NVTX ranges through llmprof::nvtx. Shared by llmprof-decode (main.cpp) and the correctness tests.
#pragma once

#include <torch/torch.h>
#include <llmprof/nvtx.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model_config.hpp"

namespace decode_workload {

// Emits the workload's NVTX ranges (default domain, or a named one) and remembers which names it emitted,
// for the metrics file. While inactive (warm-up) it emits nothing.
class StageTracer {
 public:
  explicit StageTracer(const std::string& domain_name = "");
  StageTracer(const StageTracer&) = delete;
  StageTracer& operator=(const StageTracer&) = delete;

  // Returns a range that is pushed now and popped at the end of the caller's scope.
  class Range {
   public:
    Range(StageTracer& tracer, const char* name);
    ~Range();
    Range(const Range&) = delete;
    Range& operator=(const Range&) = delete;

   private:
    const StageTracer* tracer_;  // null when nothing was pushed
  };
  Range range(const char* name) { return Range(*this, name); }

  void set_active(bool active) { active_ = active; }
  const std::string& domain_name() const { return domain_name_; }
  // Names in the order they were first emitted; empty when NVTX is compiled out.
  const std::vector<std::string>& emitted_names() const { return emitted_; }

 private:
  void note_emitted(const char* name);

  std::string domain_name_;
  llmprof::nvtx::Domain domain_;
  bool active_ = true;
  std::vector<std::string> emitted_;
};

// RMSNorm: x / sqrt(mean(x^2) + eps) * weight, computed in fp32 and returned in x's dtype.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double epsilon);

// Rotary position embedding tables (fp32): cos and sin of position * theta^(-2i/head_dim), each
// [max_positions, head_dim] with the half-width table repeated twice (Llama's rotate_half layout).
struct RotaryTable {
  torch::Tensor cos;
  torch::Tensor sin;
};
RotaryTable make_rotary_table(std::int64_t head_dim, std::int64_t max_positions, double theta,
                              const torch::Device& device);

// Rotates x [batch, heads, tokens, head_dim] for positions start .. start+tokens-1:
// x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2]).
torch::Tensor apply_rope(const torch::Tensor& x, const RotaryTable& table, std::int64_t start);

// Per layer key/value buffers [batch, kv_heads, capacity, head_dim], allocated once for the whole run;
// `length` is how many positions are filled and grows by the tokens of each forward call.
struct KvCache {
  std::vector<torch::Tensor> keys;
  std::vector<torch::Tensor> values;
  std::int64_t length = 0;
  std::int64_t capacity = 0;
};

struct Weights;  // defined in model.cpp

// This process's share of a tensor-parallel model (Megatron-style): query and KV heads and the MLP's
// intermediate columns are split evenly across ranks, so the attention output and MLP down projections hold
// only their rows' partial sums; one all-reduce after attention and one after the MLP of every block adds
// them up. The embedding, norms and LM head are replicated. world_size 1 is the whole model.
struct TensorParallelShard {
  std::int64_t rank = 0;
  std::int64_t world_size = 1;
  std::function<void(torch::Tensor&)> all_reduce;  // in-place sum over the ranks; needed when world_size > 1
};

class DecoderModel {
 public:
  // Draws every weight from N(0, 0.02^2) (norm weights are 1) with torch's global generator, which
  // the caller seeds (torch::manual_seed) for reproducible weights. A shard draws the whole model too, in
  // the same order, and keeps its slices: every rank then holds exactly the single-process weights.
  // heads, kv_heads and intermediate must be divisible by shard.world_size (std::invalid_argument).
  DecoderModel(const ModelConfig& config, torch::Dtype dtype, const torch::Device& device, std::int64_t max_positions,
               TensorParallelShard shard = {});
  ~DecoderModel();
  DecoderModel(const DecoderModel&) = delete;
  DecoderModel& operator=(const DecoderModel&) = delete;

  const ModelConfig& config() const { return config_; }
  torch::Dtype dtype() const { return dtype_; }
  const torch::Device& device() const { return device_; }

  KvCache make_cache(std::int64_t batch, std::int64_t capacity) const;

  // Runs tokens [batch, n] at positions cache.length .. cache.length+n-1, appends their keys and values to
  // the cache, and returns logits [batch, vocab] of the last position (or [batch, n, vocab] with
  // all_positions). Emits `attention` and `mlp` per block (with `all_reduce` inside each when sharded) and
  // `lm_head` into the tracer.
  torch::Tensor forward(const torch::Tensor& tokens, KvCache& cache, StageTracer& tracer,
                        bool all_positions = false) const;

  // One decode step whose tensor shapes and host-side values never change from step to step, so it can be
  // captured once as a CUDA graph and replayed: the position lives in a device tensor (`position`, int64
  // [1]), the new key/value go into the cache with index_copy_, and attention runs over the whole cache
  // capacity with the positions after `position` masked out (exp(-inf) is exactly 0, so the result is the
  // same attention as forward()). `token` is [batch, 1]; returns logits [batch, vocab]. cache.length is not
  // read or advanced: the caller advances `position` (inside the graph, for a replayed step).
  torch::Tensor forward_static_step(const torch::Tensor& token, const torch::Tensor& position, KvCache& cache) const;

 private:
  torch::Tensor attention(std::int64_t layer, const torch::Tensor& x, KvCache& cache) const;
  torch::Tensor mlp(std::int64_t layer, const torch::Tensor& x) const;
  // Sums a block's partial output over the ranks (in place); nothing to do for the whole model.
  torch::Tensor reduced(torch::Tensor partial, StageTracer* tracer) const;
  struct StaticStepInputs;  // per-step RoPE rows and attention mask, shared by every layer
  torch::Tensor attention_static(std::int64_t layer, const torch::Tensor& x, const torch::Tensor& position,
                                 const StaticStepInputs& inputs, KvCache& cache) const;
  torch::Tensor attend(const torch::Tensor& query, const torch::Tensor& keys, const torch::Tensor& values,
                       const torch::Tensor& hidden_keys) const;

  ModelConfig config_;
  TensorParallelShard shard_;
  std::int64_t local_heads_;     // query heads of this shard
  std::int64_t local_kv_heads_;  // KV heads of this shard (and of its cache)
  torch::Dtype dtype_;
  torch::Device device_;
  RotaryTable rotary_;
  std::unique_ptr<Weights> weights_;
};

// Greedy argmax over the vocabulary: [batch, vocab] -> [batch, 1] token ids.
torch::Tensor sample_greedy(const torch::Tensor& logits);

// Blocks until the device has finished the work queued so far (no-op on CPU).
void synchronize(const torch::Device& device);

}  // namespace decode_workload
