// An engine-shaped CPU loop for the serving tests: no GPU, only the NVTX shape of a continuous-batching
// engine (vLLM's proposed step names), so the real nsys 2022.4 can trace it on a machine without a GPU.
//   serve > scheduler_step > prefill_batch | decode_batch | mixed_batch, then scheduler_step > sampling
// The kinds follow a fixed pattern (step i: prefill when i % 10 == 0, mixed when i % 10 == 5, else decode),
// so the counts are known: with 60 steps 6 prefill, 6 mixed, 48 decode, 60 sampling. Each kind busy-waits
// for its own time (prefill 1.5 ms, mixed 0.9 ms, decode 0.3 ms, sampling 0.05 ms).
// The tokens each kind carries are fixed too (prefill 128 prompt tokens, mixed 64 prompt + 8 decode, decode 8),
// and written, as the steps counted, to $LLMPROF_STEP_TOKENS_FILE when it is set (llmprof/step_tokens.hpp).
// Usage: llmprof-engine-loop [steps] [--no-outer] [--flat] [--names sglang] [--domain NAME] [--library-only | --no-nvtx]
//   --no-outer      no "serve" range
//   --flat          no scheduler_step: each step is only its kind range, sampling inside it (issue 34: engines that
//                   wrap each step only in its kind)
//   --names sglang  SGLang's forward-mode names: extend, decode, mixed (for prefill_batch, decode_batch, mixed_batch)
//   --domain NAME   every range in the NVTX domain NAME
//   --library-only  no range of its own: each step's sampling runs inside `cub::DeviceScan::InclusiveScan` in the
//                   NVTX domain "CCCL", as CUDA 13's CUB marks the scan a Hugging Face generate() samples with
//   --no-nvtx       no NVTX range at all
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

struct Shape {
  bool outer = true;
  bool flat = false;
  bool sglang = false;
  const char* domain = nullptr;
  bool library_only = false;
  bool no_nvtx = false;
};

// 0 prefill, 1 decode, 2 mixed
int step_kind(int step) {
  if (step % 10 == 0) return 0;
  if (step % 10 == 5) return 2;
  return 1;
}

const char* kind_name(int kind, const Shape& shape) {
  static const char* vllm[3] = {"prefill_batch", "decode_batch", "mixed_batch"};
  static const char* sglang[3] = {"extend", "decode", "mixed"};
  return (shape.sglang ? sglang : vllm)[kind];
}

std::chrono::microseconds kind_time(int kind) {
  static const std::chrono::microseconds times[3] = {std::chrono::microseconds(1500), std::chrono::microseconds(300),
                                                     std::chrono::microseconds(900)};
  return times[kind];
}

struct KindCount {
  int steps = 0;
  long prompt_tokens = 0;
  long decode_tokens = 0;
};

// One window (the whole run): what a serving engine's scheduler knows of each step it ran.
void write_step_tokens(const char* path, const KindCount counts[3], const Shape& shape) {
  std::FILE* out = std::fopen(path, "w");
  if (out == nullptr) {
    std::perror(path);
    return;
  }
  std::fprintf(out, "{\"schema\": \"llmprof.step_tokens/1\", \"windows\": [{\"kinds\": {");
  for (int i = 0; i < 3; ++i) {
    std::fprintf(out, "%s\"%s\": {\"steps\": %d, \"prompt_tokens\": %ld, \"decode_tokens\": %ld}", i ? ", " : "",
                 kind_name(i, shape), counts[i].steps, counts[i].prompt_tokens, counts[i].decode_tokens);
  }
  std::fprintf(out, "}}]}\n");
  std::fclose(out);
}

void sample(const llmprof::nvtx::Domain& domain) {
  llmprof::nvtx::ScopedRange sampling{domain, "sampling"};
  busy_wait(std::chrono::microseconds(50));
}

// A step of a workload without ranges of its own; only a library's scan is marked, when `library` is given.
void unmarked_step(int kind, const llmprof::nvtx::Domain* library) {
  busy_wait(kind_time(kind));
  if (library == nullptr) {
    busy_wait(std::chrono::microseconds(50));
    return;
  }
  llmprof::nvtx::ScopedRange scan{*library, "cub::DeviceScan::InclusiveScan"};
  busy_wait(std::chrono::microseconds(50));
}

void run_steps(int steps, const Shape& shape, const llmprof::nvtx::Domain& domain) {
  KindCount counts[3];  // prefill, decode, mixed
  const llmprof::nvtx::Domain cccl{"CCCL"};
  for (int step = 0; step < steps; ++step) {
    const int kind = step_kind(step);
    if (shape.library_only || shape.no_nvtx) {
      unmarked_step(kind, shape.library_only ? &cccl : nullptr);
    } else if (shape.flat) {
      llmprof::nvtx::ScopedRange forward{domain, kind_name(kind, shape)};
      busy_wait(kind_time(kind));
      sample(domain);
    } else {
      llmprof::nvtx::ScopedRange scheduler_step{domain, "scheduler_step"};
      {
        llmprof::nvtx::ScopedRange forward{domain, kind_name(kind, shape)};
        busy_wait(kind_time(kind));
      }
      sample(domain);
    }
    KindCount& count = counts[kind];
    count.steps += 1;
    count.prompt_tokens += kind == 0 ? 128 : (kind == 2 ? 64 : 0);
    count.decode_tokens += kind == 0 ? 0 : 8;
  }
  if (const char* path = std::getenv("LLMPROF_STEP_TOKENS_FILE"); path != nullptr && *path != '\0')
    write_step_tokens(path, counts, shape);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 60;
  Shape shape;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-outer") == 0) {
      shape.outer = false;
    } else if (std::strcmp(argv[i], "--flat") == 0) {
      shape.flat = true;
    } else if (std::strcmp(argv[i], "--names") == 0 && i + 1 < argc) {
      shape.sglang = std::strcmp(argv[++i], "sglang") == 0;
    } else if (std::strcmp(argv[i], "--domain") == 0 && i + 1 < argc) {
      shape.domain = argv[++i];
    } else if (std::strcmp(argv[i], "--library-only") == 0) {
      shape.library_only = true;
    } else if (std::strcmp(argv[i], "--no-nvtx") == 0) {
      shape.no_nvtx = true;
    } else {
      steps = std::atoi(argv[i]);
    }
  }
  if (steps < 1) {
    std::fprintf(stderr,
                 "usage: llmprof-engine-loop [steps >= 1] [--no-outer] [--flat] [--names sglang] [--domain NAME] "
                 "[--library-only | --no-nvtx]\n");
    return 2;
  }
  const llmprof::nvtx::Domain domain{shape.domain};
  if (shape.outer && !shape.library_only && !shape.no_nvtx) {
    llmprof::nvtx::ScopedRange serve{domain, "serve"};
    run_steps(steps, shape, domain);
  } else {
    run_steps(steps, shape, domain);
  }
  std::printf("engine loop: %d steps\n", steps);
  return 0;
}
