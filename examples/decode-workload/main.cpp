// llmprof-decode: runs the Llama-style decoder through warm-up, then one measured prefill + greedy decode
// inside NVTX ranges, prints a summary and writes the stage-1 metrics JSON.
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if LLMPROF_DECODE_CUDART
#include <cuda_runtime_api.h>
#endif
#if LLMPROF_DECODE_CUDA_GRAPHS
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include "model.hpp"
#include "run_options.hpp"
#include "tensor_parallel.hpp"
#include "workload_metrics.hpp"

namespace dw = decode_workload;

namespace {

using Seconds = std::chrono::duration<double>;

torch::Dtype torch_dtype(const std::string& name) {
  if (name == "fp16") return torch::kFloat16;
  if (name == "bf16") return torch::kBFloat16;
  return torch::kFloat32;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Checks that need LibTorch: the CUDA device exists, and the dtype's kernels exist on the device (LibTorch
// 1.13's CPU build, for one, has no fp16 matmul). A two-token run of a minute model answers the latter.
std::string check_device_and_dtype(const dw::RunOptions& options, torch::Device& device) {
  if (options.device != "cpu") {
    const std::int64_t count = torch::cuda::is_available() ? static_cast<std::int64_t>(torch::cuda::device_count()) : 0;
    const std::int64_t index = options.device == "cuda" ? 0 : std::stoll(options.device.substr(5));
    if (count == 0) {
      return "--device " + options.device + ": no CUDA device is usable (this LibTorch " +
             std::string(torch::cuda::is_available() ? "sees none" : "was built without CUDA or finds no driver") +
             "); use --device cpu, or build against a CUDA LibTorch on a GPU machine";
    }
    if (index >= count) {
      return "--device " + options.device + ": only " + std::to_string(count) +
             " CUDA device(s) (cuda:0 .. cuda:" + std::to_string(count - 1) + ")";
    }
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  try {
    dw::ModelConfig probe_config{1, 8, 2, 1, 8, 8, 10000.0, 1e-5};
    dw::DecoderModel probe(probe_config, torch_dtype(options.dtype), device, 4);
    dw::KvCache cache = probe.make_cache(1, 4);
    dw::StageTracer silent;
    silent.set_active(false);
    const auto tokens = torch::zeros({1, 2}, torch::TensorOptions().dtype(torch::kInt64).device(device));
    dw::sample_greedy(probe.forward(tokens, cache, silent));
    dw::synchronize(device);
  } catch (const c10::Error& error) {
    return "--dtype " + options.dtype + " is not supported on " + options.device + " by this LibTorch " +
           TORCH_VERSION + " build (it says: " + first_line(error.what_without_backtrace()) +
           "); use --dtype fp32 on CPU, or a GPU";
  }
  return {};
}

// LibTorch's per-operator NVTX ranges are the autograd profiler in NVTX mode (what Python's
// torch.autograd.profiler.emit_nvtx turns on). It needs LibTorch's CUDA stubs, so CPU-only builds refuse it.
std::string start_torch_nvtx() {
  using namespace torch::autograd::profiler;
  try {
    enableProfiler(ProfilerConfig(ProfilerState::NVTX), {ActivityType::CPU});
  } catch (const c10::Error& error) {
    return "--torch-nvtx: this LibTorch " + std::string(TORCH_VERSION) +
           " build cannot emit per-operator NVTX ranges (it says: " + first_line(error.what_without_backtrace()) +
           "); it needs a LibTorch built with CUDA (e.g. the one in a CUDA PyTorch install). Drop --torch-nvtx.";
  }
  return {};
}

void stop_torch_nvtx() { torch::autograd::profiler::disableProfiler(); }

std::string device_name(const torch::Device& device) {
  if (device.is_cuda()) {
#if LLMPROF_DECODE_CUDART
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, device.index()) == cudaSuccess) return properties.name;
#endif
    return "CUDA device " + std::to_string(device.index()) + " (name unknown: built without the CUDA runtime)";
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      return line.substr(line.find(':') + 2);
    }
  }
  return "cpu";
}

#if LLMPROF_DECODE_CUDA_GRAPHS
// One decode step captured as a CUDA graph and replayed per step. The graph reads the step's token from
// token_ and the position from position_, writes the next token back into token_ and advances position_, so
// a replay needs no host-side input: the step's GPU work is one graph launch.
class GraphDecoder {
 public:
  GraphDecoder(const dw::DecoderModel& model, dw::KvCache& cache, const torch::Tensor& token) {
    torch::NoGradGuard no_grad;
    token_ = token.clone();
    position_ = torch::full({1}, cache.length, torch::TensorOptions().dtype(torch::kInt64).device(model.device()));
    dw::synchronize(model.device());
    // Capturing from the default stream is illegal; warm up on the capture stream first so cuBLAS handles
    // and the allocator's blocks exist before capture. The warm-up writes the same key/value at the same
    // position that the first replay writes again, and moves neither the token nor the position.
    c10::cuda::CUDAStreamGuard on_side_stream(at::cuda::getStreamFromPool());
    for (int warmup = 0; warmup < 2; ++warmup) model.forward_static_step(token_, position_, cache);
    at::cuda::getCurrentCUDAStream().synchronize();
    graph_.capture_begin();
    const torch::Tensor next = dw::sample_greedy(model.forward_static_step(token_, position_, cache));
    token_.copy_(next);
    position_.add_(1);
    graph_.capture_end();
    at::cuda::getCurrentCUDAStream().synchronize();
  }

  // Replays one step on the current stream and returns a copy of its token (the buffer is reused).
  torch::Tensor step() {
    graph_.replay();
    return token_.clone();
  }

 private:
  at::cuda::CUDAGraph graph_;
  torch::Tensor token_;
  torch::Tensor position_;
};
#endif

// deep-profile names the profiler a run is under (README: "What deep-profile tells the workload").
bool under_ncu() {
  const char* profiler = std::getenv("LLMPROF_PROFILER");
  return profiler != nullptr && std::string_view(profiler) == "ncu";
}

struct Generation {
  double prefill_s = 0.0;
  double decode_s = 0.0;
  torch::Tensor tokens;  // [batch, new_tokens + 1]: the prefill's token, then one per decode step
};

// One prefill + greedy decode. Synchronises the device at the end of each stage, inside its range, so the
// range and the measured time both cover the stage's device work.
// `step_delay` (a --straggler-ms rank) is slept before each decode step's range opens, so the step starts
// late on this rank the way a rank slowed by its host would, and its peers wait in the step's all-reduces.
Generation generate(const dw::DecoderModel& model, const torch::Tensor& prompt, std::int64_t new_tokens,
                    dw::StageTracer& tracer, bool cuda_graphs,
                    std::chrono::milliseconds step_delay = std::chrono::milliseconds(0)) {
  torch::NoGradGuard no_grad;
  const torch::Device device = model.device();
  dw::KvCache cache = model.make_cache(prompt.size(0), prompt.size(1) + new_tokens);
  std::vector<torch::Tensor> generated;
  Generation result;
  dw::synchronize(device);
  auto whole = tracer.range("generate");
  const auto prefill_start = std::chrono::steady_clock::now();
  {
    auto range = tracer.range("prefill");
    const torch::Tensor logits = model.forward(prompt, cache, tracer);
    {
      auto sample = tracer.range("sample");
      generated.push_back(dw::sample_greedy(logits));
    }
    dw::synchronize(device);
  }
  const auto prefill_end = std::chrono::steady_clock::now();
#if LLMPROF_DECODE_CUDA_GRAPHS
  // Captured after the prefill clock stops and before the decode clock starts: capture is set-up, neither
  // prefill nor decode work (on the H100 it took 25-45 ms, which would have tripled the prefill time).
  std::optional<GraphDecoder> graph;
  if (cuda_graphs) graph.emplace(model, cache, generated.back());
#else
  (void)cuda_graphs;  // refused before any run by main()
#endif
  const auto decode_start = std::chrono::steady_clock::now();
  {
    auto range = tracer.range("decode");
    for (std::int64_t step = 0; step < new_tokens; ++step) {
      if (step_delay.count() > 0) std::this_thread::sleep_for(step_delay);
      auto step_range = tracer.range("decode_step");
#if LLMPROF_DECODE_CUDA_GRAPHS
      if (graph) {
        generated.push_back(graph->step());
        continue;
      }
#endif
      const torch::Tensor logits = model.forward(generated.back(), cache, tracer);
      auto sample = tracer.range("sample");
      generated.push_back(dw::sample_greedy(logits));
    }
    dw::synchronize(device);
  }
  const auto decode_end = std::chrono::steady_clock::now();
  result.prefill_s = Seconds(prefill_end - prefill_start).count();
  result.decode_s = Seconds(decode_end - decode_start).count();
  result.tokens = torch::cat(generated, 1).to(torch::kCPU);
  return result;
}

// One line per sequence: its token ids, space-separated.
std::string tokens_text(const torch::Tensor& tokens) {
  std::ostringstream text;
  for (std::int64_t sequence = 0; sequence < tokens.size(0); ++sequence) {
    for (std::int64_t index = 0; index < tokens.size(1); ++index) {
      text << (index == 0 ? "" : " ") << tokens[sequence][index].item<std::int64_t>();
    }
    text << "\n";
  }
  return text.str();
}

// How long a rank waits for the others at the rendezvous and in a collective: long enough for a slow start
// of LibTorch on a loaded machine, short enough that a rank that never comes ends the run with an error.
constexpr std::chrono::seconds kTensorParallelTimeout{120};

int run(dw::RunOptions options, const torch::Device& device, const std::optional<dw::RankPlacement>& placement) {
  if (options.threads > 0) torch::set_num_threads(static_cast<int>(options.threads));
  dw::TensorParallelShard shard;
  std::chrono::milliseconds step_delay(0);
  if (placement) {
    const dw::TensorParallelGroup group = dw::connect_tensor_parallel(*placement, device, kTensorParallelTimeout);
    shard = {placement->rank, placement->world_size, group.all_reduce};
    std::cout << "llmprof-decode: tensor parallel, rank " << placement->rank << " of " << placement->world_size << " ("
              << placement->evidence << "), " << group.backend << " process group via " << placement->master_address
              << ":" << placement->master_port << "\n";
    // The ranks compute the same tokens; one writes the files the user named (each rank still writes the
    // LLMPROF_METRICS_FILE that deep-profile gives it).
    if (placement->rank != 0) {
      options.metrics_out.clear();
      options.tokens_out.clear();
    }
    const std::int64_t straggler = options.straggler_rank < 0 ? placement->world_size - 1 : options.straggler_rank;
    if (options.straggler_ms > 0 && placement->rank == straggler) {
      step_delay = std::chrono::milliseconds(options.straggler_ms);
      std::cout << "llmprof-decode: rank " << placement->rank << " is the straggler: it sleeps " << options.straggler_ms
                << " ms before each decode step\n";
    }
  }
  torch::manual_seed(options.seed);
  const dw::RunShape& shape = options.run;
  const dw::DecoderModel model(options.model, torch_dtype(options.dtype), device,
                               shape.prompt_tokens + shape.new_tokens, shard);
  const torch::Tensor prompt = torch::randint(0, options.model.vocab, {shape.batch, shape.prompt_tokens},
                                              torch::TensorOptions().dtype(torch::kInt64).device(device));

  dw::StageTracer tracer(options.nvtx_domain);
  tracer.set_active(false);  // warm-up stays outside every range
  // Under ncu a warm-up changes nothing ncu measures (deep-profile's passes replay each profiled kernel with
  // --cache-control all --clock-control base) and costs much: ncu intercepts every launch, and on the H100
  // (ncu 2025.3.1, 2026-12-07) a 1b decode token took 107 ms under ncu against 12.7 ms bare, so the 128-token
  // warm-up was about 13 s of a 23 s pass. The decode kernels and grids are the same without it: the CUDA
  // graph is captured per generation, outside the decode range.
  const std::int64_t warmup_runs = under_ncu() ? 0 : options.warmup;
  if (warmup_runs < options.warmup)
    std::cout << "llmprof-decode: under ncu (LLMPROF_PROFILER=ncu), so the " << options.warmup
              << " warm-up run(s) are skipped: ncu replays each kernel with caches flushed and clocks locked\n";
  for (std::int64_t index = 0; index < warmup_runs; ++index)
    generate(model, prompt, shape.new_tokens, tracer, options.cuda_graphs);
  tracer.set_active(true);

  if (options.torch_nvtx) start_torch_nvtx();  // checked before, so it starts
  const Generation measured = generate(model, prompt, shape.new_tokens, tracer, options.cuda_graphs, step_delay);
  if (options.torch_nvtx) stop_torch_nvtx();

  dw::MeasuredRun metrics{device.is_cuda() ? "cuda:" + std::to_string(device.index()) : "cpu",
                          device_name(device),
                          options.dtype,
                          measured.prefill_s,
                          measured.decode_s,
                          options.nvtx_domain,
                          tracer.emitted_names()};
  const double tokens_per_s = static_cast<double>(shape.batch * shape.new_tokens) / measured.decode_s;
  std::cout << "llmprof-decode: " << dw::parameter_count(options.model) << " parameters, " << options.dtype << " on "
            << metrics.device << " (" << metrics.device_name << "), batch " << shape.batch << ", prompt "
            << shape.prompt_tokens << ", new tokens " << shape.new_tokens
            << (options.cuda_graphs ? ", decode steps replayed from one CUDA graph" : "") << "\n"
            << "prefill " << measured.prefill_s * 1e3 << " ms, decode " << measured.decode_s * 1e3 << " ms, "
            << measured.decode_s / static_cast<double>(shape.new_tokens) * 1e3 << " ms per output token, "
            << tokens_per_s << " tokens/s\n";
  const auto first = measured.tokens[0];
  std::cout << "sequence 0 tokens:";
  for (std::int64_t index = 0; index < first.size(0) && index < 16; ++index)
    std::cout << ' ' << first[index].item<std::int64_t>();
  std::cout << (first.size(0) > 16 ? " ...\n" : "\n");

  if (!options.tokens_out.empty()) {
    const std::string error = dw::write_text_file(options.tokens_out, tokens_text(measured.tokens));
    if (!error.empty()) {
      std::cerr << "llmprof-decode: error: tokens: " << error << "\n";
      return dw::exit_runtime_failure;
    }
  }
  const std::string metrics_path = dw::resolve_metrics_path(options);
  if (!metrics_path.empty()) {
    const std::string error =
        dw::write_text_file(metrics_path, dw::workload_metrics_json(options.model, shape, metrics));
    if (!error.empty()) {
      std::cerr << "llmprof-decode: error: metrics: " << error << "\n";
      return dw::exit_runtime_failure;
    }
    std::cout << "metrics written to " << metrics_path << "\n";
  }
  return dw::exit_success;
}

}  // namespace

int main(int argc, char** argv) {
  const dw::ParseOutcome parsed = dw::parse_run_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.options) {
    std::cerr << "llmprof-decode: error: " << parsed.error << "\n";
    return dw::exit_usage;
  }
  dw::RunOptions options = *parsed.options;
  if (options.show_help) {
    std::cout << dw::help_text();
    return dw::exit_success;
  }
  torch::Device device(torch::kCPU);
  std::string error = dw::check_run_options(options);
#if !LLMPROF_DECODE_CUDA_GRAPHS
  if (error.empty() && options.cuda_graphs) {
    error = "--cuda-graphs: this llmprof-decode was built against a LibTorch without CUDA (" +
            std::string(TORCH_VERSION) + "), so it cannot capture CUDA graphs; rebuild it against a CUDA LibTorch";
  }
#endif
  std::optional<dw::RankPlacement> placement;
  if (error.empty() && options.tensor_parallel) {
    dw::RankPlacement resolved;
    error = dw::resolve_placement(resolved);
    if (error.empty()) error = dw::check_tensor_parallel(options, resolved.world_size);
    if (error.empty()) placement = resolved;
    // One GPU per rank, the one the launcher's local rank names (cuda:N stays as given).
    if (error.empty() && options.device == "cuda") options.device = "cuda:" + std::to_string(resolved.local_rank);
  }
  if (error.empty()) error = check_device_and_dtype(options, device);
  if (error.empty() && options.torch_nvtx) {
    error = start_torch_nvtx();
    if (error.empty()) stop_torch_nvtx();
  }
  if (!error.empty()) {
    std::cerr << "llmprof-decode: error: " << error << "\n";
    return dw::exit_usage;
  }
  try {
    return run(options, device, placement);
  } catch (const std::exception& failure) {
    std::cerr << "llmprof-decode: error: the run failed: " << failure.what() << "\n";
    return dw::exit_runtime_failure;
  }
}
