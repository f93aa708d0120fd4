// Flag parsing for llmprof-decode (hand-written: the example must build where no Boost is installed).
#include "run_options.hpp"

#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>

namespace decode_workload {
namespace {

bool parse_integer(const std::string& text, std::int64_t& value) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(first, last, value);
  return error == std::errc() && end == last;
}

// A flag and its value, from "--name value" or "--name=value".
struct FlagValue {
  std::string name;
  std::optional<std::string> value;
};

using Setter = std::function<std::string(RunOptions&, const std::string&)>;

template <typename Accessor>
Setter integer_flag(const char* flag, Accessor accessor) {
  return [flag, accessor](RunOptions& options, const std::string& text) -> std::string {
    std::int64_t value = 0;
    if (!parse_integer(text, value)) {
      return std::string("--") + flag + " expects an integer, got '" + text + "'";
    }
    accessor(options) = value;
    return {};
  };
}

const std::map<std::string, Setter>& value_flags() {
  static const std::map<std::string, Setter> flags = {
      {"layers", integer_flag("layers", [](RunOptions& o) -> std::int64_t& { return o.model.layers; })},
      {"hidden", integer_flag("hidden", [](RunOptions& o) -> std::int64_t& { return o.model.hidden; })},
      {"heads", integer_flag("heads", [](RunOptions& o) -> std::int64_t& { return o.model.heads; })},
      {"kv-heads", integer_flag("kv-heads", [](RunOptions& o) -> std::int64_t& { return o.model.kv_heads; })},
      {"intermediate",
       integer_flag("intermediate", [](RunOptions& o) -> std::int64_t& { return o.model.intermediate; })},
      {"vocab", integer_flag("vocab", [](RunOptions& o) -> std::int64_t& { return o.model.vocab; })},
      {"batch", integer_flag("batch", [](RunOptions& o) -> std::int64_t& { return o.run.batch; })},
      {"prompt-len", integer_flag("prompt-len", [](RunOptions& o) -> std::int64_t& { return o.run.prompt_tokens; })},
      {"new-tokens", integer_flag("new-tokens", [](RunOptions& o) -> std::int64_t& { return o.run.new_tokens; })},
      {"warmup", integer_flag("warmup", [](RunOptions& o) -> std::int64_t& { return o.warmup; })},
      {"threads", integer_flag("threads", [](RunOptions& o) -> std::int64_t& { return o.threads; })},
      {"straggler-ms",
       integer_flag("straggler-ms", [](RunOptions& o) -> std::int64_t& { return o.straggler_ms; })},
      {"straggler-rank",
       integer_flag("straggler-rank", [](RunOptions& o) -> std::int64_t& { return o.straggler_rank; })},
      {"seed",
       [](RunOptions& o, const std::string& text) -> std::string {
         std::int64_t value = 0;
         if (!parse_integer(text, value) || value < 0)
           return "--seed expects a non-negative integer, got '" + text + "'";
         o.seed = static_cast<std::uint64_t>(value);
         return {};
       }},
      {"dtype",
       [](RunOptions& o, const std::string& text) {
         o.dtype = text;
         return std::string();
       }},
      {"device",
       [](RunOptions& o, const std::string& text) {
         o.device = text;
         return std::string();
       }},
      {"metrics-out",
       [](RunOptions& o, const std::string& text) {
         o.metrics_out = text;
         return std::string();
       }},
      {"tokens-out",
       [](RunOptions& o, const std::string& text) {
         o.tokens_out = text;
         return std::string();
       }},
      {"nvtx-domain",
       [](RunOptions& o, const std::string& text) {
         o.nvtx_domain = text;
         return std::string();
       }},
      {"preset", [](RunOptions&, const std::string&) { return std::string(); }},  // applied first
  };
  return flags;
}

// Splits the arguments into flags; an error names the offending argument.
std::string split_flags(const std::vector<std::string>& arguments, std::vector<FlagValue>& flags) {
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    const std::string& argument = arguments[index];
    if (argument == "-h" || argument == "--help") {
      flags.push_back({"help", std::nullopt});
      continue;
    }
    if (argument.rfind("--", 0) != 0) return "unexpected argument '" + argument + "' (flags start with --)";
    FlagValue flag;
    const std::size_t equals = argument.find('=');
    flag.name = argument.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const bool takes_value = value_flags().count(flag.name) != 0;
    if (!takes_value && flag.name != "torch-nvtx" && flag.name != "cuda-graphs" && flag.name != "tensor-parallel")
      return "unknown flag '--" + flag.name + "' (see --help)";
    if (equals != std::string::npos) {
      flag.value = argument.substr(equals + 1);
    } else if (takes_value) {
      if (index + 1 >= arguments.size() || arguments[index + 1].rfind("--", 0) == 0) {
        return "--" + flag.name + " needs a value";
      }
      flag.value = arguments[++index];
    }
    flags.push_back(std::move(flag));
  }
  return {};
}

std::string preset_names() {
  std::string names;
  for (const Preset& preset : presets()) names += (names.empty() ? "" : ", ") + preset.name;
  return names;
}

}  // namespace

ParseOutcome parse_run_options(const std::vector<std::string>& arguments) {
  std::vector<FlagValue> flags;
  if (std::string error = split_flags(arguments, flags); !error.empty()) return {std::nullopt, error};

  RunOptions options;
  for (const FlagValue& flag : flags) {
    if (flag.name != "preset") continue;
    const std::optional<Preset> preset = find_preset(*flag.value);
    if (!preset) return {std::nullopt, "unknown --preset '" + *flag.value + "' (known: " + preset_names() + ")"};
    options.preset = preset->name;
    options.model = preset->model;
    options.run = preset->run;
    options.dtype = preset->dtype;
    options.device = preset->device;
  }
  for (const FlagValue& flag : flags) {
    if (flag.name == "help") {
      options.show_help = true;
    } else if (flag.name == "torch-nvtx") {
      if (flag.value) return {std::nullopt, "--torch-nvtx takes no value"};
      options.torch_nvtx = true;
    } else if (flag.name == "cuda-graphs") {
      if (flag.value) return {std::nullopt, "--cuda-graphs takes no value"};
      options.cuda_graphs = true;
    } else if (flag.name == "tensor-parallel") {
      if (flag.value) return {std::nullopt, "--tensor-parallel takes no value (the launcher sets the world size)"};
      options.tensor_parallel = true;
    } else if (const auto setter = value_flags().find(flag.name); setter != value_flags().end()) {
      if (std::string error = setter->second(options, *flag.value); !error.empty()) return {std::nullopt, error};
    } else {
      return {std::nullopt, "unknown flag '--" + flag.name + "' (see --help)"};
    }
  }
  return {options, {}};
}

std::string check_run_options(const RunOptions& options) {
  const ModelConfig& model = options.model;
  const std::pair<const char*, std::int64_t> positive[] = {{"--layers", model.layers},
                                                           {"--hidden", model.hidden},
                                                           {"--heads", model.heads},
                                                           {"--kv-heads", model.kv_heads},
                                                           {"--intermediate", model.intermediate},
                                                           {"--vocab", model.vocab},
                                                           {"--batch", options.run.batch},
                                                           {"--prompt-len", options.run.prompt_tokens},
                                                           {"--new-tokens", options.run.new_tokens}};
  for (const auto& [flag, value] : positive) {
    if (value <= 0) return std::string(flag) + " must be positive, got " + std::to_string(value);
  }
  if (options.warmup < 0) return "--warmup must be 0 or more, got " + std::to_string(options.warmup);
  if (options.threads < 0) return "--threads must be 0 or more, got " + std::to_string(options.threads);
  if (options.straggler_ms < 0 || options.straggler_ms > 10000)
    return "--straggler-ms must be between 0 and 10000, got " + std::to_string(options.straggler_ms);
  if (options.straggler_rank < -1)
    return "--straggler-rank must be a rank (0 or more), or -1 for the last rank; got " +
           std::to_string(options.straggler_rank);
  if (options.straggler_ms > 0 && !options.tensor_parallel)
    return "--straggler-ms delays one rank of a --tensor-parallel run; add --tensor-parallel (and a launcher), "
           "or drop --straggler-ms";
  if (model.hidden % model.heads != 0) {
    return "--hidden " + std::to_string(model.hidden) + " is not divisible by --heads " + std::to_string(model.heads) +
           " (each head gets hidden/heads dimensions)";
  }
  if (model.heads % model.kv_heads != 0) {
    return "--heads " + std::to_string(model.heads) + " is not divisible by --kv-heads " +
           std::to_string(model.kv_heads) +
           " (grouped-query attention shares each KV head among heads/kv-heads "
           "query heads)";
  }
  if (model.head_dim() % 2 != 0) {
    return "head dimension hidden/heads = " + std::to_string(model.head_dim()) +
           " is odd; rotary embeddings rotate pairs of dimensions, so choose --hidden and --heads to make it even";
  }
  if (options.dtype != "fp32" && options.dtype != "fp16" && options.dtype != "bf16") {
    return "--dtype must be fp32, fp16 or bf16, got '" + options.dtype + "'";
  }
  const std::string& device = options.device;
  std::int64_t index = 0;
  if (device != "cpu" && device != "cuda" &&
      !(device.rfind("cuda:", 0) == 0 && parse_integer(device.substr(5), index) && index >= 0)) {
    return "--device must be cpu, cuda or cuda:N, got '" + device + "'";
  }
  if (options.cuda_graphs && device == "cpu") {
    return "--cuda-graphs replays decode steps from a captured CUDA graph, which needs a GPU: add --device cuda "
           "(with a LibTorch built with CUDA), or drop --cuda-graphs on CPU";
  }
  if (options.cuda_graphs && options.tensor_parallel) {
    return "--cuda-graphs and --tensor-parallel together are not supported (the all-reduces would have to be "
           "captured into the graph); drop one of them";
  }
  return {};
}

std::string check_tensor_parallel(const RunOptions& options, std::int64_t world_size) {
  const ModelConfig& model = options.model;
  if (options.straggler_rank >= world_size) {
    return "--straggler-rank " + std::to_string(options.straggler_rank) + " is not a rank of this launch (world size " +
           std::to_string(world_size) + "); choose 0 to " + std::to_string(world_size - 1) + ", or -1 for the last";
  }
  const std::pair<const char*, std::int64_t> split[] = {
      {"--heads", model.heads}, {"--kv-heads", model.kv_heads}, {"--intermediate", model.intermediate}};
  for (const auto& [flag, value] : split) {
    if (value % world_size != 0) {
      return "--tensor-parallel over " + std::to_string(world_size) + " ranks: " + flag + " " + std::to_string(value) +
             " is not divisible by the world size " + std::to_string(world_size) +
             " (each rank takes an equal share of the query heads, the KV heads and the MLP's intermediate "
             "columns); choose sizes divisible by " +
             std::to_string(world_size) + " or launch fewer ranks";
    }
  }
  return {};
}

std::string resolve_metrics_path(const RunOptions& options) {
  if (!options.metrics_out.empty()) return options.metrics_out;
  const char* from_environment = std::getenv("LLMPROF_METRICS_FILE");
  return from_environment != nullptr ? std::string(from_environment) : std::string();
}

std::string help_text() {
  std::ostringstream text;
  text << "llmprof-decode: a Llama-style decoder (random weights) run through prefill and greedy decode with a\n"
          "KV cache, instrumented with NVTX ranges for Nsight Systems / Nsight Compute.\n\n"
          "Usage: llmprof-decode [--preset NAME] [flags]\n\n"
          "Model and run (defaults come from the preset; flags override it):\n"
          "  --preset NAME         "
       << preset_names() << " (default tiny)\n";
  for (const Preset& preset : presets()) {
    const ModelConfig& m = preset.model;
    text << "      " << preset.name << ": " << preset.description << "; layers " << m.layers << ", hidden " << m.hidden
         << ", heads " << m.heads << ", kv-heads " << m.kv_heads << ", intermediate " << m.intermediate << ", vocab "
         << m.vocab << ", batch " << preset.run.batch << ", prompt-len " << preset.run.prompt_tokens << ", new-tokens "
         << preset.run.new_tokens << ", " << preset.dtype << " on " << preset.device << ", " << parameter_count(m)
         << " parameters\n";
  }
  text << "  --layers N            decoder blocks\n"
          "  --hidden N            model width (divisible by --heads; hidden/heads even)\n"
          "  --heads N             query heads\n"
          "  --kv-heads N          key/value heads (divides --heads; fewer than heads = grouped-query attention)\n"
          "  --intermediate N      SwiGLU MLP width\n"
          "  --vocab N             vocabulary size\n"
          "  --batch N             sequences decoded together\n"
          "  --prompt-len N        prompt tokens per sequence (prefill)\n"
          "  --new-tokens N        decode steps; each generates one token per sequence\n"
          "  --dtype T             fp32 | fp16 | bf16\n"
          "  --device D            cpu | cuda | cuda:N\n"
          "  --seed N              seed for weights and prompt (default 1234)\n"
          "  --warmup N            untimed, un-instrumented warm-up runs before the measured one (default 1;\n"
          "                        none under ncu, LLMPROF_PROFILER=ncu: its replays flush caches and lock clocks)\n"
          "  --threads N           CPU threads for LibTorch (default 0: LibTorch's choice)\n"
          "  --straggler-ms MS     with --tensor-parallel: one rank sleeps MS before each decode step, a known\n"
          "                        straggler for checking a profiler's cross-rank view (default 0: none)\n"
          "  --straggler-rank R    the rank that sleeps (default -1: the last rank)\n\n"
          "Output:\n"
          "  --metrics-out FILE    write the llmprof.workload_metrics/1 JSON here (default: $LLMPROF_METRICS_FILE\n"
          "                        when set; the flag wins)\n"
          "  --tokens-out FILE     write the generated token ids here, one line per sequence (prefill's token\n"
          "                        first); with --tensor-parallel rank 0 writes it (and --metrics-out)\n"
          "  --nvtx-domain NAME    put the NVTX ranges in this domain instead of the default domain\n"
          "  --torch-nvtx          also emit LibTorch's per-operator NVTX ranges (aten::...); needs a LibTorch\n"
          "                        built with CUDA, and is an error otherwise\n"
          "  --cuda-graphs         capture one decode step (static KV cache, position on the device) as a CUDA\n"
          "                        graph and replay it for every step; needs --device cuda and a CUDA LibTorch\n"
          "  --tensor-parallel     split the model across the ranks of a launcher (torchrun, mpirun, srun: the\n"
          "                        rank and world size come from its variables): query/KV heads and MLP columns\n"
          "                        per rank, an all-reduce after each block's attention and MLP (Gloo on CPU,\n"
          "                        NCCL on CUDA); the ranks meet at MASTER_ADDR:MASTER_PORT, which must be set.\n"
          "                        --device cuda means cuda:<local rank>. Every rank writes\n"
          "                        $LLMPROF_METRICS_FILE (deep-profile gives each rank its own)\n"
          "  -h, --help            this text\n\n"
          "NVTX ranges (push/pop): generate > prefill, decode > decode_step; inside them attention and mlp per\n"
          "block (all_reduce inside them with --tensor-parallel, on every rank), lm_head, sample. With\n"
          "--cuda-graphs the decode_step ranges enclose each graph replay and nothing is pushed inside the graph\n"
          "(ranges inside a graph would exist only while it is captured).\n"
          "Exit status: 0 success, 1 the run failed, 2 invalid flags or configuration (nothing was run).\n";
  return text.str();
}

}  // namespace decode_workload
