// An engine-shaped CPU loop for the serving tests: no GPU, only the NVTX shape of a continuous-batching
// engine (vLLM's proposed step names), so the real nsys 2022.4 can trace it on a machine without a GPU.
//   serve > scheduler_step > prefill_batch | decode_batch | mixed_batch, then scheduler_step > sampling
// The kinds follow a fixed pattern (step i: prefill when i % 10 == 0, mixed when i % 10 == 5, else decode),
// so the counts are known: with 60 steps 6 prefill, 6 mixed, 48 decode, 60 sampling. Each kind busy-waits
// for its own time (prefill 1.5 ms, mixed 0.9 ms, decode 0.3 ms, sampling 0.05 ms).
// The tokens each kind carries are fixed too (prefill 128 prompt tokens, mixed 64 prompt + 8 decode, decode 8),
// and written, as the steps counted, to $LLMPROF_STEP_TOKENS_FILE when it is set (llmprof/step_tokens.hpp).
// Usage: llmprof-engine-loop [steps]   (no "serve" range with --no-outer)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "llmprof/nvtx.hpp"

namespace {

void busy_wait(std::chrono::microseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
  }
}

const char* step_kind(int step) {
  if (step % 10 == 0) return "prefill_batch";
  if (step % 10 == 5) return "mixed_batch";
  return "decode_batch";
}

std::chrono::microseconds kind_time(const char* kind) {
  if (std::strcmp(kind, "prefill_batch") == 0) return std::chrono::microseconds(1500);
  if (std::strcmp(kind, "mixed_batch") == 0) return std::chrono::microseconds(900);
  return std::chrono::microseconds(300);
}

struct KindCount {
  int steps = 0;
  long prompt_tokens = 0;
  long decode_tokens = 0;
};

// One window (the whole run): what a serving engine's scheduler knows of each step it ran.
void write_step_tokens(const char* path, const KindCount counts[3]) {
  std::FILE* out = std::fopen(path, "w");
  if (out == nullptr) {
    std::perror(path);
    return;
  }
  const char* names[3] = {"prefill_batch", "decode_batch", "mixed_batch"};
  std::fprintf(out, "{\"schema\": \"llmprof.step_tokens/1\", \"windows\": [{\"kinds\": {");
  for (int i = 0; i < 3; ++i) {
    std::fprintf(out, "%s\"%s\": {\"steps\": %d, \"prompt_tokens\": %ld, \"decode_tokens\": %ld}", i ? ", " : "",
                 names[i], counts[i].steps, counts[i].prompt_tokens, counts[i].decode_tokens);
  }
  std::fprintf(out, "}}]}\n");
  std::fclose(out);
}

void run_steps(int steps) {
  KindCount counts[3];  // prefill, decode, mixed
  for (int step = 0; step < steps; ++step) {
    llmprof::nvtx::ScopedRange scheduler_step{"scheduler_step"};
    const char* kind = step_kind(step);
    {
      llmprof::nvtx::ScopedRange forward{kind};
      busy_wait(kind_time(kind));
    }
    llmprof::nvtx::ScopedRange sampling{"sampling"};
    busy_wait(std::chrono::microseconds(50));
    const bool prefill = std::strcmp(kind, "prefill_batch") == 0, mixed = std::strcmp(kind, "mixed_batch") == 0;
    KindCount& count = counts[prefill ? 0 : (mixed ? 2 : 1)];
    count.steps += 1;
    count.prompt_tokens += prefill ? 128 : (mixed ? 64 : 0);
    count.decode_tokens += prefill ? 0 : 8;
  }
  if (const char* path = std::getenv("LLMPROF_STEP_TOKENS_FILE"); path != nullptr && *path != '\0')
    write_step_tokens(path, counts);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 60;
  bool outer = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-outer") == 0)
      outer = false;
    else
      steps = std::atoi(argv[i]);
  }
  if (steps < 1) {
    std::fprintf(stderr, "usage: llmprof-engine-loop [steps >= 1] [--no-outer]\n");
    return 2;
  }
  if (outer) {
    llmprof::nvtx::ScopedRange serve{"serve"};
    run_steps(steps);
  } else {
    run_steps(steps);
  }
  std::printf("engine loop: %d steps\n", steps);
  return 0;
}
