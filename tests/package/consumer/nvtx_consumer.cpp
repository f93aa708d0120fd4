// A workload that only wants NVTX ranges: links llmprof::nvtx, needs no Boost.
#include <llmprof/nvtx.hpp>

#include <cstdio>

int main() {
  llmprof::nvtx::Domain domain{"consumer"};
  {
    llmprof::nvtx::ScopedRange outer{"prefill"};
    llmprof::nvtx::ScopedRange inner{domain, "decode_step"};
  }
  std::printf("nvtx enabled=%d\n", llmprof::nvtx::enabled() ? 1 : 0);
  return 0;
}
