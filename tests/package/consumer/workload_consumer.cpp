// A workload that wants NVTX ranges and its launcher rank: links llmprof::nvtx and llmprof::rank, needs no
// Boost, builds as C++17 (as LibTorch programs are).
#include <llmprof/nvtx.hpp>
#include <llmprof/rank.hpp>

#include <cstdio>

int main() {
  llmprof::nvtx::Domain domain{"consumer"};
  {
    llmprof::nvtx::ScopedRange outer{"prefill"};
    llmprof::nvtx::ScopedRange inner{domain, "decode_step"};
  }
  std::printf("nvtx enabled=%d\n", llmprof::nvtx::enabled() ? 1 : 0);
  const llmprof::Result<llmprof::RankIdentity> identity = llmprof::resolve_rank_from_process_environment();
  if (!identity) {
    std::printf("no rank: %s\n", identity.error().describe().c_str());
    return 1;
  }
  std::printf("rank %d of %d, local %d, from %s\n", identity->rank, identity->world_size, identity->local_rank,
              llmprof::to_string(identity->source));
  return 0;
}
