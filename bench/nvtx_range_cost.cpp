// What one llmprof::nvtx::ScopedRange costs when no profiler is attached, and what that means for the
// example workload's decode step. Timing whole decode runs cannot resolve a sub-1% difference on a
// host-bound workload whose run-to-run spread on the H100 is ~15%, so the
// bound comes from the cost of the ranges themselves.
//
// Usage: bench_nvtx_range_cost [ranges_per_step=35] [step_ms=8.27]
//   35 = 16 blocks x (attention + mlp) + decode_step + lm_head + sample (the 1b preset);
//   8.27 ms = the 1b preset's measured time per output token at batch 1 on the H100.
#include <llmprof/nvtx.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double nanoseconds_per_range(int iterations, const llmprof::nvtx::Domain* domain) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    if (domain != nullptr) {
      llmprof::nvtx::ScopedRange range{*domain, "decode_step"};
    } else {
      llmprof::nvtx::ScopedRange range{"decode_step"};
    }
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / iterations;
}

double median_of_runs(const llmprof::nvtx::Domain* domain) {
  std::vector<double> runs;
  for (int run = 0; run < 7; ++run) runs.push_back(nanoseconds_per_range(2'000'000, domain));
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double ranges_per_step = argc > 1 ? std::atof(argv[1]) : 35.0;
  const double step_ms = argc > 2 ? std::atof(argv[2]) : 8.27;
  if (!llmprof::nvtx::enabled()) {
    std::printf("NVTX is compiled out in this build (no NVTX3 headers): ranges cost nothing by construction\n");
    return 0;
  }
  const llmprof::nvtx::Domain domain{"llm"};
  const double default_ns = median_of_runs(nullptr);
  const double domain_ns = median_of_runs(&domain);
  const double per_step_ns = ranges_per_step * std::max(default_ns, domain_ns);
  std::printf("push+pop, default domain: %.1f ns (median of 7 x 2M)\n", default_ns);
  std::printf("push+pop, named domain:   %.1f ns\n", domain_ns);
  std::printf("%g ranges per decode step: %.2f us per step = %.4f%% of a %.2f ms step\n", ranges_per_step,
              per_step_ns / 1000.0, 100.0 * per_step_ns / (step_ms * 1e6), step_ms);
  return 0;
}
