// --tensor-parallel: which rank this process is (from the launcher's variables, through llmprof's own
// resolver), where the ranks meet (MASTER_ADDR/MASTER_PORT), and the process group whose all-reduce sums
// each block's partial outputs: Gloo on CPU, NCCL on CUDA (where this LibTorch has them).
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace decode_workload {

struct RankPlacement {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string evidence;  // the launcher variables that named the rank
  std::string master_address;
  std::uint16_t master_port = 0;
};

// Fills `placement` from this process's environment. Returns an empty string, or what is missing and how to
// set it (no launcher variables, no MASTER_ADDR/MASTER_PORT, a port that is not one).
std::string resolve_placement(RankPlacement& placement);

struct TensorParallelGroup {
  std::string backend;                             // "gloo" | "nccl"
  std::function<void(torch::Tensor&)> all_reduce;  // in-place sum over every rank
};

// Meets the other ranks at MASTER_ADDR:MASTER_PORT (rank 0 serves the store) and builds the process group
// for `device`. Throws std::runtime_error when this build has no backend for the device or the rendezvous
// fails (a rank that never comes ends it after `timeout`).
TensorParallelGroup connect_tensor_parallel(const RankPlacement& placement, const torch::Device& device,
                                            std::chrono::milliseconds timeout);

}  // namespace decode_workload
