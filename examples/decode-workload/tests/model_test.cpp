// Correctness of the decode workload on CPU in fp32: the KV-cache path against full recomputation (with
// grouped-query attention), RoPE and RMSNorm against their formulas, the analytic counts against hand
// arithmetic, and the llmprof-decode command line (metrics file, documented errors).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "model.hpp"
#include "model_config.hpp"
#include "run_options.hpp"

namespace dw = decode_workload;
namespace fs = std::filesystem;

namespace {

// A small config with GQA (4 query heads share 2 KV heads), used by the hand-computed counts below.
dw::ModelConfig small_config() { return dw::ModelConfig{2, 64, 4, 2, 128, 97, 10000.0, 1e-5}; }

struct CommandResult {
  int exit_status = -1;
  std::string output;  // stdout and stderr together
};

CommandResult run_decode(const std::string& arguments, const std::string& environment = "") {
  const std::string command = environment + " '" + std::string(LLMPROF_DECODE_EXE) + "' " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) result.output += buffer;
  const int status = pclose(pipe);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("llmprof-decode-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  static int& counter() {
    static int value = 0;
    return value;
  }
  fs::path path_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The raw JSON text of a top-level member ("key": <value>), for the flat file llmprof-decode writes.
std::string json_member(const std::string& json, const std::string& key) {
  const std::string marker = "\"" + key + "\": ";
  const std::size_t at = json.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t start = at + marker.size();
  std::size_t end = start;
  if (json[start] == '[') {
    end = json.find(']', start) + 1;
  } else if (json[start] == '"') {
    end = json.find('"', start + 1) + 1;
  } else {
    end = json.find_first_of(",\n}", start);
  }
  return json.substr(start, end - start);
}

double json_number(const std::string& json, const std::string& key) {
  const std::string text = json_member(json, key);
  INFO("member " << key << " = '" << text << "'");
  REQUIRE_FALSE(text.empty());
  return std::stod(text);
}

}  // namespace

TEST_CASE("RMSNorm matches x / sqrt(mean(x^2) + eps) * w") {
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({3, 16});
  const torch::Tensor weight = torch::randn({16});
  const double epsilon = 1e-5;
  const torch::Tensor y = dw::rms_norm(x, weight, epsilon);
  const auto xs = x.accessor<float, 2>();
  const auto ws = weight.accessor<float, 1>();
  const auto ys = y.accessor<float, 2>();
  for (int row = 0; row < 3; ++row) {
    double sum_of_squares = 0.0;
    for (int column = 0; column < 16; ++column) sum_of_squares += double(xs[row][column]) * xs[row][column];
    const double scale = 1.0 / std::sqrt(sum_of_squares / 16.0 + epsilon);
    for (int column = 0; column < 16; ++column) {
      CHECK(ys[row][column] == Approx(xs[row][column] * scale * ws[column]).epsilon(1e-5).margin(1e-6));
    }
  }
}

TEST_CASE("RoPE rotates each pair (i, i + D/2) by position * theta^(-2i/D)") {
  torch::manual_seed(4);
  const std::int64_t head_dim = 8;
  const std::int64_t start = 5;
  const double theta = 10000.0;
  const torch::Tensor x = torch::randn({1, 2, 3, head_dim});  // [batch, heads, tokens, head_dim]
  const dw::RotaryTable table = dw::make_rotary_table(head_dim, 16, theta, torch::kCPU);
  const torch::Tensor y = dw::apply_rope(x, table, start);
  const auto xs = x.accessor<float, 4>();
  const auto ys = y.accessor<float, 4>();
  const std::int64_t half = head_dim / 2;
  for (int head = 0; head < 2; ++head) {
    for (int token = 0; token < 3; ++token) {
      for (int i = 0; i < half; ++i) {
        const double angle = double(start + token) * std::pow(theta, -2.0 * i / double(head_dim));
        const double first = xs[0][head][token][i];
        const double second = xs[0][head][token][i + half];
        CHECK(ys[0][head][token][i] == Approx(first * std::cos(angle) - second * std::sin(angle)).margin(1e-5));
        CHECK(ys[0][head][token][i + half] == Approx(second * std::cos(angle) + first * std::sin(angle)).margin(1e-5));
      }
    }
  }
}

TEST_CASE("Greedy decode with the KV cache equals recomputing the whole sequence (GQA)") {
  const dw::ModelConfig config = small_config();
  REQUIRE(config.kv_heads < config.heads);
  torch::manual_seed(7);
  const std::int64_t prompt_tokens = 5;
  const std::int64_t steps = 6;
  const dw::DecoderModel model(config, torch::kFloat32, torch::kCPU, prompt_tokens + steps + 1);
  const torch::Tensor prompt = torch::randint(0, config.vocab, {2, prompt_tokens}, torch::kInt64);
  dw::StageTracer tracer;

  dw::KvCache cache = model.make_cache(2, prompt_tokens + steps + 1);
  torch::Tensor token = dw::sample_greedy(model.forward(prompt, cache, tracer));
  torch::Tensor sequence = torch::cat({prompt, token}, 1);
  for (std::int64_t step = 0; step < steps; ++step) {
    const torch::Tensor cached_logits = model.forward(token, cache, tracer);
    REQUIRE(cache.length == prompt_tokens + step + 1);

    dw::KvCache fresh = model.make_cache(2, sequence.size(1));
    const torch::Tensor full_logits = model.forward(sequence, fresh, tracer);

    INFO("step " << step);
    CHECK(torch::allclose(cached_logits, full_logits, /*rtol=*/1e-4, /*atol=*/1e-5));
    CHECK((cached_logits - full_logits).abs().max().item<float>() < 1e-4f);
    token = dw::sample_greedy(cached_logits);
    CHECK(torch::equal(token, dw::sample_greedy(full_logits)));
    sequence = torch::cat({sequence, token}, 1);
  }
  // The run is not degenerate: greedy decoding produced more than one distinct token.
  CHECK(std::get<0>(at::_unique(sequence.narrow(1, prompt_tokens, steps + 1))).numel() > 1);
}

TEST_CASE("The static decode step (the CUDA-graph path) gives the same logits and tokens as forward()") {
  const dw::ModelConfig config = small_config();
  torch::manual_seed(11);
  const std::int64_t prompt_tokens = 4;
  const std::int64_t steps = 7;
  const std::int64_t capacity = prompt_tokens + steps + 3;  // spare positions must stay masked out
  const dw::DecoderModel model(config, torch::kFloat32, torch::kCPU, capacity);
  const torch::Tensor prompt = torch::randint(0, config.vocab, {2, prompt_tokens}, torch::kInt64);
  dw::StageTracer tracer;

  dw::KvCache eager = model.make_cache(2, capacity);
  dw::KvCache fixed = model.make_cache(2, capacity);
  torch::Tensor token = dw::sample_greedy(model.forward(prompt, eager, tracer));
  model.forward(prompt, fixed, tracer);
  // The graph keeps the position in a device tensor and advances it itself; here the test advances it.
  torch::Tensor position = torch::full({1}, prompt_tokens, torch::kInt64);
  torch::Tensor static_token = token.clone();
  std::vector<torch::Tensor> eager_tokens{token}, static_tokens{token};
  for (std::int64_t step = 0; step < steps; ++step) {
    const torch::Tensor eager_logits = model.forward(eager_tokens.back(), eager, tracer);
    const torch::Tensor static_logits = model.forward_static_step(static_token, position, fixed);
    INFO("step " << step);
    CHECK((eager_logits - static_logits).abs().max().item<float>() < 1e-4f);
    eager_tokens.push_back(dw::sample_greedy(eager_logits));
    static_token.copy_(dw::sample_greedy(static_logits));
    static_tokens.push_back(static_token.clone());
    position.add_(1);
  }
  CHECK(torch::equal(torch::cat(eager_tokens, 1), torch::cat(static_tokens, 1)));
  // Both caches hold the same keys in the filled positions and nothing after them.
  const std::int64_t filled = prompt_tokens + steps;
  CHECK(torch::allclose(eager.keys[0].narrow(2, 0, filled), fixed.keys[0].narrow(2, 0, filled), 1e-5, 1e-6));
  CHECK(fixed.keys[0].narrow(2, filled, capacity - filled).abs().max().item<float>() == 0.0f);
}

TEST_CASE("The KV cache refuses to run past its capacity") {
  const dw::ModelConfig config = small_config();
  const dw::DecoderModel model(config, torch::kFloat32, torch::kCPU, 8);
  dw::KvCache cache = model.make_cache(1, 4);
  dw::StageTracer tracer;
  const torch::Tensor tokens = torch::zeros({1, 3}, torch::kInt64);
  model.forward(tokens, cache, tracer);
  CHECK_THROWS_WITH(model.forward(tokens, cache, tracer), Catch::Contains("exceed its capacity 4"));
}

TEST_CASE("Parameter and FLOP counts match hand arithmetic for a small config") {
  // hidden 64, heads 4 (head_dim 16), kv_heads 2 (kv width 32), intermediate 128, vocab 97, 2 layers.
  // Block linears: q 64*64 + k,v 2*64*32 + o 64*64 + gate,up,down 3*64*128 = 4096+4096+4096+24576 = 36864.
  const dw::ModelConfig config = small_config();
  CHECK(dw::block_linear_parameters(config) == 36864);
  // embedding 97*64 = 6208, blocks 2*(36864 + 2*64) = 73984, final norm 64, LM head 6208.
  CHECK(dw::parameter_count(config) == 6208 + 73984 + 64 + 6208);
  // Per token: 2*(2*36864 + 6208) = 159872, plus attention 4*2*64 = 512 per context token.
  CHECK(dw::flop_per_token(config, 10) == 159872.0 + 512.0 * 10);
  // Prompt 8, 4 decode steps: contexts 9, 10, 11, 12, mean 10.5 -> 159872 + 5376 = 165248.
  const dw::RunShape run{3, 8, 4};
  CHECK(dw::mean_decode_flop_per_token(config, run) == 165248.0);
  CHECK(dw::decode_flop_total(config, run) == 165248.0 * 4 * 3);
  // Prefill of 8: 8 * 2*73728 (blocks) + 2*6208 (LM head on the last position) + 512 * (1+...+8 = 36).
  CHECK(dw::flop_per_prefill(config, 8) == 8 * 147456.0 + 12416.0 + 512.0 * 36);
}

namespace {
const char* small_run_flags =
    "--layers 2 --hidden 64 --heads 4 --kv-heads 2 --intermediate 128 --vocab 97 --batch 3 --prompt-len 8 "
    "--new-tokens 4 --warmup 1";
}

TEST_CASE("llmprof-decode writes complete, consistent metrics") {
  TempDir directory;
  const fs::path metrics = directory.path() / "metrics.json";
  const CommandResult result = run_decode(std::string(small_run_flags) + " --metrics-out '" + metrics.string() + "'");
  INFO(result.output);
  REQUIRE(result.exit_status == 0);
  const std::string json = read_file(metrics);
  INFO(json);

  for (const char* key : {"schema",
                          "model",
                          "device",
                          "device_name",
                          "dtype",
                          "batch",
                          "prompt_tokens",
                          "new_tokens",
                          "layers",
                          "hidden",
                          "heads",
                          "kv_heads",
                          "intermediate",
                          "vocab",
                          "parameters",
                          "prefill_s",
                          "decode_s",
                          "time_per_output_token_s",
                          "tokens_per_s",
                          "generated_tokens",
                          "flop_per_prefill",
                          "flop_per_token",
                          "decode_flop",
                          "nvtx_domain",
                          "nvtx_ranges"}) {
    INFO("key " << key);
    CHECK_FALSE(json_member(json, key).empty());
  }
  CHECK(json_member(json, "schema") == "\"llmprof.workload_metrics/1\"");
  CHECK(json_member(json, "model") == "\"llama-style\"");
  CHECK(json_member(json, "device") == "\"cpu\"");
  CHECK(json_member(json, "dtype") == "\"fp32\"");
  CHECK(json_member(json, "nvtx_domain") == "\"\"");
  CHECK(json_number(json, "generated_tokens") == 12);  // batch 3 * 4 new tokens
  CHECK(json_number(json, "parameters") == 86464);     // 6208 + 73984 + 64 + 6208, see the test above

  const double decode_s = json_number(json, "decode_s");
  CHECK(decode_s > 0.0);
  CHECK(json_number(json, "prefill_s") > 0.0);
  CHECK(json_number(json, "tokens_per_s") == Approx(12.0 / decode_s).epsilon(1e-12));
  CHECK(json_number(json, "time_per_output_token_s") == Approx(decode_s / 4.0).epsilon(1e-12));
  CHECK(json_number(json, "flop_per_token") == 165248.0);
  CHECK(json_number(json, "decode_flop") == 165248.0 * 12);
  CHECK(json_number(json, "flop_per_prefill") == 8 * 147456.0 + 12416.0 + 512.0 * 36);

  const std::string ranges = json_member(json, "nvtx_ranges");
  if (llmprof::nvtx::enabled()) {
    CHECK(ranges ==
          "[\"generate\", \"prefill\", \"attention\", \"mlp\", \"lm_head\", \"sample\", \"decode\", "
          "\"decode_step\"]");
  } else {
    CHECK(ranges == "[]");
  }
}

TEST_CASE("llmprof-decode takes the metrics path from LLMPROF_METRICS_FILE, and the flag wins over it") {
  TempDir directory;
  const fs::path from_environment = directory.path() / "env.json";
  const fs::path from_flag = directory.path() / "flag.json";
  const std::string environment = "LLMPROF_METRICS_FILE='" + from_environment.string() + "'";

  CommandResult result = run_decode(std::string(small_run_flags) + " --nvtx-domain llm", environment);
  INFO(result.output);
  REQUIRE(result.exit_status == 0);
  REQUIRE(fs::exists(from_environment));
  CHECK(json_member(read_file(from_environment), "nvtx_domain") == "\"llm\"");
  fs::remove(from_environment);

  result = run_decode(std::string(small_run_flags) + " --metrics-out '" + from_flag.string() + "'", environment);
  REQUIRE(result.exit_status == 0);
  CHECK(fs::exists(from_flag));
  CHECK_FALSE(fs::exists(from_environment));
}

TEST_CASE("Invalid flags and configurations are rejected with a message that names the fix") {
  struct Case {
    std::vector<std::string> arguments;
    std::string message;
  };
  const Case cases[] = {
      {{"--hidden", "100", "--heads", "3"}, "--hidden 100 is not divisible by --heads 3"},
      {{"--heads", "8", "--kv-heads", "3"}, "--heads 8 is not divisible by --kv-heads 3"},
      {{"--hidden", "24", "--heads", "8", "--kv-heads", "2"}, "is odd"},
      {{"--dtype", "fp64"}, "--dtype must be fp32, fp16 or bf16"},
      {{"--device", "tpu"}, "--device must be cpu, cuda or cuda:N"},
      {{"--device=cuda:x"}, "--device must be cpu, cuda or cuda:N"},
      {{"--batch", "0"}, "--batch must be positive"},
      {{"--warmup", "-1"}, "--warmup must be 0 or more"},
      {{"--layers", "two"}, "--layers expects an integer, got 'two'"},
      {{"--no-such-flag", "1"}, "unknown flag '--no-such-flag'"},
      {{"--preset", "huge"}, "unknown --preset 'huge' (known: tiny, 1b)"},
      {{"--new-tokens", "--batch", "2"}, "--new-tokens needs a value"},
      {{"--torch-nvtx=yes"}, "--torch-nvtx takes no value"},
      {{"--cuda-graphs=1"}, "--cuda-graphs takes no value"},
      {{"--cuda-graphs", "--device", "cpu"},
       "--cuda-graphs replays decode steps from a captured CUDA graph, which needs a GPU"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"--straggler-ms", "20"}, "--straggler-ms delays one rank of a --tensor-parallel run; add --tensor-parallel"},
      {{"--tensor-parallel", "--straggler-ms", "-5"}, "--straggler-ms must be between 0 and 10000, got -5"},
      {{"--tensor-parallel", "--straggler-rank", "-2"}, "--straggler-rank must be a rank (0 or more), or -1"},
  };
  for (const Case& c : cases) {
    const dw::ParseOutcome parsed = dw::parse_run_options(c.arguments);
    const std::string error = parsed.options ? dw::check_run_options(*parsed.options) : parsed.error;
    INFO(c.message);
    CHECK_THAT(error, Catch::Contains(c.message));
  }
}

TEST_CASE("Presets apply first and flags override them, in any order") {
  const dw::ParseOutcome parsed = dw::parse_run_options({"--batch=8", "--preset", "1b", "--new-tokens", "16"});
  REQUIRE(parsed.options);
  const dw::RunOptions& options = *parsed.options;
  CHECK(options.preset == "1b");
  CHECK(options.model.hidden == 2048);
  CHECK(options.model.layers == 16);
  CHECK(options.model.kv_heads == 8);
  CHECK(options.run.batch == 8);
  CHECK(options.run.new_tokens == 16);
  CHECK(options.dtype == "bf16");
  CHECK(options.device == "cuda");
  CHECK(dw::check_run_options(options).empty());
  // ~1.1B parameters: 2 * 32000 * 2048 + 16 * (60817408 + 4096) + 2048.
  CHECK(dw::parameter_count(options.model) == 1104218112);
  const std::string help = dw::help_text();
  for (const char* flag :
       {"--layers",      "--hidden",     "--heads",       "--kv-heads",   "--intermediate", "--vocab",  "--batch",
        "--prompt-len",  "--new-tokens", "--dtype",       "--device",     "--seed",         "--warmup", "--threads",
        "--metrics-out", "--preset",     "--nvtx-domain", "--torch-nvtx", "--cuda-graphs",  "tiny:",    "1b:"}) {
    CHECK_THAT(help, Catch::Contains(flag));
  }
}

TEST_CASE("llmprof-decode exits with status 2 and writes nothing when the configuration is invalid") {
  TempDir directory;
  const fs::path metrics = directory.path() / "metrics.json";
  const std::string out = " --metrics-out '" + metrics.string() + "'";
  CommandResult result = run_decode("--hidden 100 --heads 3" + out);
  INFO(result.output);
  CHECK(result.exit_status == 2);
  CHECK_THAT(result.output, Catch::Contains("llmprof-decode: error: --hidden 100 is not divisible by --heads 3"));
  CHECK_FALSE(fs::exists(metrics));

  if (!torch::cuda::is_available()) {
    result = run_decode("--device cuda:0" + out);
    INFO(result.output);
    CHECK(result.exit_status == 2);
    CHECK_THAT(result.output, Catch::Contains("no CUDA device is usable"));
    CHECK_FALSE(fs::exists(metrics));

    // A LibTorch without CUDA cannot capture graphs: said before anything runs.
    result = run_decode("--cuda-graphs --device cuda" + out);
    INFO(result.output);
    CHECK(result.exit_status == 2);
    CHECK_THAT(result.output, Catch::Contains("--cuda-graphs"));
    CHECK_FALSE(fs::exists(metrics));
  }
}

TEST_CASE("llmprof-decode --help exits 0") {
  const CommandResult result = run_decode("--help");
  CHECK(result.exit_status == 0);
  CHECK_THAT(result.output, Catch::Contains("Usage: llmprof-decode"));
}
