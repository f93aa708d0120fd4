// The Llama-style decoder: RMSNorm, RoPE, grouped-query attention over a KV cache, SwiGLU MLP.
#include "model.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace decode_workload {

// ---- StageTracer ----------------------------------------------------------------------------------------

StageTracer::StageTracer(const std::string& domain_name)
    : domain_name_(domain_name), domain_(domain_name.empty() ? nullptr : domain_name_.c_str()) {}

void StageTracer::note_emitted(const char* name) {
  for (const std::string& known : emitted_) {
    if (known == name) return;
  }
  emitted_.emplace_back(name);
}

StageTracer::Range::Range(StageTracer& tracer, const char* name) : tracer_(nullptr) {
  // With NVTX compiled out nothing is emitted, so nothing is listed as emitted either.
  if (!tracer.active_ || !llmprof::nvtx::enabled()) return;
  tracer.domain_.push(name);
  tracer.note_emitted(name);
  tracer_ = &tracer;
}

StageTracer::Range::~Range() {
  if (tracer_ != nullptr) tracer_->domain_.pop();
}

// ---- building blocks ------------------------------------------------------------------------------------

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double epsilon) {
  const torch::Tensor x32 = x.to(torch::kFloat32);
  const torch::Tensor inverse_rms = torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + epsilon);
  return (x32 * inverse_rms).to(x.scalar_type()) * weight;
}

RotaryTable make_rotary_table(std::int64_t head_dim, std::int64_t max_positions, double theta,
                              const torch::Device& device) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  // theta^(-2i/D) for i = 0 .. D/2-1, computed in fp64 so that long contexts keep accurate angles.
  const torch::Tensor exponents =
      torch::arange(0, head_dim, 2, options.dtype(torch::kFloat64)) / static_cast<double>(head_dim);
  const torch::Tensor inverse_frequency = torch::pow(theta, -exponents);
  const torch::Tensor positions = torch::arange(max_positions, options.dtype(torch::kFloat64));
  const torch::Tensor angles = torch::outer(positions, inverse_frequency);  // [P, D/2]
  const torch::Tensor doubled = torch::cat({angles, angles}, -1);           // [P, D]
  return RotaryTable{doubled.cos().to(options), doubled.sin().to(options)};
}

torch::Tensor apply_rope(const torch::Tensor& x, const RotaryTable& table, std::int64_t start) {
  const std::int64_t tokens = x.size(2);
  const std::int64_t half = x.size(3) / 2;
  const torch::Tensor cos = table.cos.narrow(0, start, tokens).to(x.scalar_type());  // [T, D] broadcasts
  const torch::Tensor sin = table.sin.narrow(0, start, tokens).to(x.scalar_type());
  const torch::Tensor rotated_half = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated_half * sin;
}

torch::Tensor sample_greedy(const torch::Tensor& logits) { return logits.argmax(-1, /*keepdim=*/true); }

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

// ---- the model ------------------------------------------------------------------------------------------

struct BlockWeights {
  torch::Tensor attention_norm, query, key, value, output;  // projections are [out, in] like nn.Linear
  torch::Tensor mlp_norm, gate, up, down;
};

struct Weights {
  torch::Tensor embedding;  // [vocab, hidden]
  std::vector<BlockWeights> blocks;
  torch::Tensor final_norm;
  torch::Tensor lm_head;  // [vocab, hidden], untied from the embedding
};

namespace {

torch::Tensor random_weight(std::int64_t rows, std::int64_t columns, torch::Dtype dtype, const torch::Device& device) {
  // Drawn in fp32 on the target device (no host round trip for a 1B model), then cast.
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  return (torch::randn({rows, columns}, options) * 0.02).to(dtype);
}

torch::Tensor unit_norm_weight(std::int64_t width, torch::Dtype dtype, const torch::Device& device) {
  return torch::ones({width}, torch::TensorOptions().dtype(dtype).device(device));
}

}  // namespace

DecoderModel::DecoderModel(const ModelConfig& config, torch::Dtype dtype, const torch::Device& device,
                           std::int64_t max_positions, TensorParallelShard shard)
    : config_(config),
      shard_(std::move(shard)),
      local_heads_(config.heads / shard_.world_size),
      local_kv_heads_(config.kv_heads / shard_.world_size),
      dtype_(dtype),
      device_(device),
      rotary_(make_rotary_table(config.head_dim(), max_positions, config.rope_theta, device)),
      weights_(std::make_unique<Weights>()) {
  const std::int64_t world = shard_.world_size;
  if (world < 1 || shard_.rank < 0 || shard_.rank >= world) {
    throw std::invalid_argument("tensor-parallel rank " + std::to_string(shard_.rank) + " is outside world size " +
                                std::to_string(world));
  }
  if (config.heads % world != 0 || config.kv_heads % world != 0 || config.intermediate % world != 0) {
    throw std::invalid_argument("heads, kv_heads and intermediate must be divisible by the world size " +
                                std::to_string(world));
  }
  if (world > 1 && !shard_.all_reduce) throw std::invalid_argument("a tensor-parallel shard needs an all_reduce");
  torch::NoGradGuard no_grad;
  Weights& w = *weights_;
  const std::int64_t head_dim = config.head_dim();
  const std::int64_t local_intermediate = config.intermediate / world;
  // This rank's slice along `dimension` (rows of a column-parallel weight, columns of a row-parallel one);
  // cloned so the full tensor drawn for the shared random stream is freed at once.
  const auto slice = [&](const torch::Tensor& full, std::int64_t dimension, std::int64_t width) {
    if (world == 1) return full;
    return full.narrow(dimension, shard_.rank * width, width).clone();
  };
  w.embedding = random_weight(config.vocab, config.hidden, dtype, device);
  for (std::int64_t layer = 0; layer < config.layers; ++layer) {
    BlockWeights block;
    block.attention_norm = unit_norm_weight(config.hidden, dtype, device);
    block.query = slice(random_weight(config.query_width(), config.hidden, dtype, device), 0, local_heads_ * head_dim);
    block.key = slice(random_weight(config.kv_width(), config.hidden, dtype, device), 0, local_kv_heads_ * head_dim);
    block.value = slice(random_weight(config.kv_width(), config.hidden, dtype, device), 0, local_kv_heads_ * head_dim);
    block.output = slice(random_weight(config.hidden, config.query_width(), dtype, device), 1, local_heads_ * head_dim);
    block.mlp_norm = unit_norm_weight(config.hidden, dtype, device);
    block.gate = slice(random_weight(config.intermediate, config.hidden, dtype, device), 0, local_intermediate);
    block.up = slice(random_weight(config.intermediate, config.hidden, dtype, device), 0, local_intermediate);
    block.down = slice(random_weight(config.hidden, config.intermediate, dtype, device), 1, local_intermediate);
    w.blocks.push_back(std::move(block));
  }
  w.final_norm = unit_norm_weight(config.hidden, dtype, device);
  w.lm_head = random_weight(config.vocab, config.hidden, dtype, device);
}

DecoderModel::~DecoderModel() = default;

KvCache DecoderModel::make_cache(std::int64_t batch, std::int64_t capacity) const {
  if (capacity > rotary_.cos.size(0)) {
    throw std::invalid_argument("KV cache capacity exceeds the model's rotary table (max_positions)");
  }
  KvCache cache;
  cache.capacity = capacity;
  const auto options = torch::TensorOptions().dtype(dtype_).device(device_);
  for (std::int64_t layer = 0; layer < config_.layers; ++layer) {
    cache.keys.push_back(torch::zeros({batch, local_kv_heads_, capacity, config_.head_dim()}, options));
    cache.values.push_back(torch::zeros({batch, local_kv_heads_, capacity, config_.head_dim()}, options));
  }
  return cache;
}

torch::Tensor DecoderModel::attention(std::int64_t layer, const torch::Tensor& x, KvCache& cache) const {
  const BlockWeights& w = weights_->blocks[static_cast<std::size_t>(layer)];
  const std::int64_t batch = x.size(0);
  const std::int64_t tokens = x.size(1);
  const std::int64_t start = cache.length;
  const std::int64_t context = start + tokens;
  const std::int64_t head_dim = config_.head_dim();
  const std::int64_t kv_heads = local_kv_heads_;
  const std::int64_t group = local_heads_ / kv_heads;  // query heads per KV head

  // [B, T, width] -> [B, heads, T, D]
  const torch::Tensor query = apply_rope(
      torch::linear(x, w.query).view({batch, tokens, local_heads_, head_dim}).transpose(1, 2), rotary_, start);
  const torch::Tensor key =
      apply_rope(torch::linear(x, w.key).view({batch, tokens, kv_heads, head_dim}).transpose(1, 2), rotary_, start);
  const torch::Tensor value = torch::linear(x, w.value).view({batch, tokens, kv_heads, head_dim}).transpose(1, 2);

  // Append to the preallocated cache; attend over the filled part only.
  cache.keys[static_cast<std::size_t>(layer)].narrow(2, start, tokens).copy_(key);
  cache.values[static_cast<std::size_t>(layer)].narrow(2, start, tokens).copy_(value);
  const torch::Tensor keys = cache.keys[static_cast<std::size_t>(layer)].narrow(2, 0, context);
  const torch::Tensor values = cache.values[static_cast<std::size_t>(layer)].narrow(2, 0, context);

  torch::Tensor hidden_keys;  // undefined: every key is visible (a single decode token)
  if (tokens > 1) {
    // Causal mask: query t (absolute position start+t) sees keys 0 .. start+t.
    const auto index_options = torch::TensorOptions().dtype(torch::kInt64).device(device_);
    const torch::Tensor query_positions = torch::arange(start, context, index_options).unsqueeze(1);  // [T,1]
    const torch::Tensor key_positions = torch::arange(0, context, index_options).unsqueeze(0);        // [1,S]
    hidden_keys = (key_positions > query_positions).repeat({group, 1});                               // [gT,S]
  }
  return torch::linear(attend(query, keys, values, hidden_keys), w.output);
}

// Grouped-query attention without copying the cache per query head: query head h = k*group + g uses
// KV head k, so fold the group into the row dimension: [B, kv_heads, group*T, D], rows ordered (g, t).
// `hidden_keys` ([group*T, S] bool, or undefined) marks the keys each query row must not see.
torch::Tensor DecoderModel::attend(const torch::Tensor& query, const torch::Tensor& keys, const torch::Tensor& values,
                                   const torch::Tensor& hidden_keys) const {
  const std::int64_t batch = query.size(0);
  const std::int64_t tokens = query.size(2);
  const std::int64_t head_dim = config_.head_dim();
  const std::int64_t kv_heads = local_kv_heads_;
  const std::int64_t group = local_heads_ / kv_heads;
  const torch::Tensor grouped_query = query.reshape({batch, kv_heads, group * tokens, head_dim});
  torch::Tensor scores = torch::matmul(grouped_query, keys.transpose(-1, -2)) / std::sqrt(double(head_dim));
  if (hidden_keys.defined()) scores = scores.masked_fill(hidden_keys, -std::numeric_limits<float>::infinity());
  // Softmax in fp32 (as Llama does) so fp16/bf16 runs do not lose the small probabilities.
  const torch::Tensor probabilities = torch::softmax(scores.to(torch::kFloat32), -1).to(dtype_);
  const torch::Tensor mixed = torch::matmul(probabilities, values);  // [B, kv_heads, group*T, D]
  return mixed.view({batch, kv_heads * group, tokens, head_dim}).transpose(1, 2).reshape({batch, tokens, -1});
}

// Computed once per step, not per layer: inside a CUDA graph every small op is a kernel of a few
// microseconds, and the step's time is mostly such kernels (measured on the H100: 2.6 ms per 1b step).
struct DecoderModel::StaticStepInputs {
  torch::Tensor cos, sin;     // RoPE rows for the position, [1, D], in the model's dtype
  torch::Tensor hidden_keys;  // [1, capacity]: positions after the current one
};

torch::Tensor DecoderModel::attention_static(std::int64_t layer, const torch::Tensor& x, const torch::Tensor& position,
                                             const StaticStepInputs& inputs, KvCache& cache) const {
  const BlockWeights& w = weights_->blocks[static_cast<std::size_t>(layer)];
  const std::int64_t batch = x.size(0);
  const std::int64_t head_dim = config_.head_dim();
  const std::int64_t kv_heads = local_kv_heads_;
  const torch::Tensor& cos = inputs.cos;
  const torch::Tensor& sin = inputs.sin;
  const auto rotate = [&](const torch::Tensor& heads) {
    const std::int64_t half = head_dim / 2;
    return heads * cos + torch::cat({-heads.narrow(-1, half, half), heads.narrow(-1, 0, half)}, -1) * sin;
  };
  const torch::Tensor query =
      rotate(torch::linear(x, w.query).view({batch, 1, local_heads_, head_dim}).transpose(1, 2));
  const torch::Tensor key = rotate(torch::linear(x, w.key).view({batch, 1, kv_heads, head_dim}).transpose(1, 2));
  const torch::Tensor value = torch::linear(x, w.value).view({batch, 1, kv_heads, head_dim}).transpose(1, 2);
  torch::Tensor& keys = cache.keys[static_cast<std::size_t>(layer)];
  torch::Tensor& values = cache.values[static_cast<std::size_t>(layer)];
  keys.index_copy_(2, position, key);
  values.index_copy_(2, position, value);
  return torch::linear(attend(query, keys, values, inputs.hidden_keys), w.output);
}

torch::Tensor DecoderModel::mlp(std::int64_t layer, const torch::Tensor& x) const {
  const BlockWeights& w = weights_->blocks[static_cast<std::size_t>(layer)];
  return torch::linear(torch::silu(torch::linear(x, w.gate)) * torch::linear(x, w.up), w.down);
}

torch::Tensor DecoderModel::reduced(torch::Tensor partial, StageTracer* tracer) const {
  if (shard_.world_size == 1) return partial;
  std::optional<StageTracer::Range> range;
  if (tracer != nullptr) range.emplace(*tracer, "all_reduce");
  shard_.all_reduce(partial);
  return partial;
}

torch::Tensor DecoderModel::forward(const torch::Tensor& tokens, KvCache& cache, StageTracer& tracer,
                                    bool all_positions) const {
  torch::NoGradGuard no_grad;
  const std::int64_t count = tokens.size(1);
  if (cache.length + count > cache.capacity) {
    throw std::invalid_argument("KV cache is full: " + std::to_string(cache.length) + " + " + std::to_string(count) +
                                " tokens exceed its capacity " + std::to_string(cache.capacity));
  }
  const Weights& w = *weights_;
  torch::Tensor hidden = torch::embedding(w.embedding, tokens);  // [B, T, hidden]
  for (std::int64_t layer = 0; layer < config_.layers; ++layer) {
    const BlockWeights& block = w.blocks[static_cast<std::size_t>(layer)];
    {
      auto range = tracer.range("attention");
      hidden = hidden +
               reduced(attention(layer, rms_norm(hidden, block.attention_norm, config_.rms_epsilon), cache), &tracer);
    }
    {
      auto range = tracer.range("mlp");
      hidden = hidden + reduced(mlp(layer, rms_norm(hidden, block.mlp_norm, config_.rms_epsilon)), &tracer);
    }
  }
  cache.length += count;

  auto range = tracer.range("lm_head");
  // Logits only where they are used: the last position (inference engines do the same).
  const torch::Tensor last = all_positions ? hidden : hidden.select(1, count - 1);
  return torch::linear(rms_norm(last, w.final_norm, config_.rms_epsilon), w.lm_head);
}

torch::Tensor DecoderModel::forward_static_step(const torch::Tensor& token, const torch::Tensor& position,
                                                KvCache& cache) const {
  torch::NoGradGuard no_grad;
  const Weights& w = *weights_;
  // RoPE rows picked on the device (index_select), never through a host-side start position.
  const auto index_options = torch::TensorOptions().dtype(torch::kInt64).device(device_);
  const StaticStepInputs inputs{rotary_.cos.index_select(0, position).to(dtype_),
                                rotary_.sin.index_select(0, position).to(dtype_),
                                (torch::arange(0, cache.capacity, index_options) > position).unsqueeze(0)};
  torch::Tensor hidden = torch::embedding(w.embedding, token);  // [B, 1, hidden]
  for (std::int64_t layer = 0; layer < config_.layers; ++layer) {
    const BlockWeights& block = w.blocks[static_cast<std::size_t>(layer)];
    hidden = hidden + reduced(attention_static(layer, rms_norm(hidden, block.attention_norm, config_.rms_epsilon),
                                               position, inputs, cache),
                              nullptr);
    hidden = hidden + reduced(mlp(layer, rms_norm(hidden, block.mlp_norm, config_.rms_epsilon)), nullptr);
  }
  return torch::linear(rms_norm(hidden.select(1, 0), w.final_norm, config_.rms_epsilon), w.lm_head);
}

}  // namespace decode_workload
