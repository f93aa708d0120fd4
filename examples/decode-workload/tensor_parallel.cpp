// Rank resolution and the process group of --tensor-parallel (see tensor_parallel.hpp).
#include "tensor_parallel.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>

#if LLMPROF_DECODE_RANKS
#include <llmprof/rank.hpp>
#endif
#if LLMPROF_DECODE_GLOO || LLMPROF_DECODE_NCCL
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
// The c10d headers compile their classes only under these macros, which LibTorch's own build defines and
// its CMake package does not export; CMakeLists.txt sets them where the headers and libraries exist.
#if LLMPROF_DECODE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if LLMPROF_DECODE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace decode_workload {

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

}  // namespace

std::string resolve_placement(RankPlacement& placement) {
#if LLMPROF_DECODE_RANKS
  // The same resolver deep-profile's rank-exec uses, so the workload and the profiler agree on the rank.
  const llmprof::Result<llmprof::RankIdentity> identity = llmprof::resolve_rank_from_process_environment();
  if (!identity) return "--tensor-parallel: " + identity.error().describe();
  placement.rank = identity->rank;
  placement.local_rank = identity->local_rank;
  placement.world_size = identity->world_size;
  placement.evidence = identity->evidence;
#else
  (void)placement;
  return "--tensor-parallel: this llmprof-decode was built without llmprof's rank resolver (the llmprof::rank "
         "target was not found at build time); rebuild it against an llmprof install that has the rank component "
         "(find_package(llmprof COMPONENTS nvtx rank))";
#endif
  placement.master_address = environment("MASTER_ADDR");
  const std::string port = environment("MASTER_PORT");
  if (placement.master_address.empty() || port.empty()) {
    return "--tensor-parallel: the ranks meet at MASTER_ADDR:MASTER_PORT, and " +
           std::string(placement.master_address.empty() ? "MASTER_ADDR" : "MASTER_PORT") +
           " is not set (torchrun sets both; under mpirun or srun export them, e.g. MASTER_ADDR=<rank 0's host> "
           "MASTER_PORT=29500, or pass them with mpirun -x)";
  }
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (error != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
    return "--tensor-parallel: MASTER_PORT must be a TCP port (1-65535), got '" + port + "'";
  }
  placement.master_port = static_cast<std::uint16_t>(value);
  return {};
}

TensorParallelGroup connect_tensor_parallel(const RankPlacement& placement, const torch::Device& device,
                                            std::chrono::milliseconds timeout) {
#if LLMPROF_DECODE_GLOO || LLMPROF_DECODE_NCCL
  c10d::TCPStoreOptions store_options;
  store_options.port = placement.master_port;
  store_options.isServer = placement.rank == 0;
  store_options.numWorkers = static_cast<std::size_t>(placement.world_size);
  store_options.timeout = timeout;
  const auto store = c10::make_intrusive<c10d::TCPStore>(placement.master_address, store_options);
#endif
  if (device.is_cpu()) {
#if LLMPROF_DECODE_GLOO
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // As torch.distributed does: GLOO_SOCKET_IFNAME names the interface, otherwise the address this host's
    // name resolves to.
    const std::string interface = environment("GLOO_SOCKET_IFNAME");
    options->devices.push_back(interface.empty() ? c10d::ProcessGroupGloo::createDefaultDevice()
                                                 : c10d::ProcessGroupGloo::createDeviceForInterface(interface));
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, placement.rank, placement.world_size, options);
    return {"gloo", [group](torch::Tensor& tensor) {
              std::vector<at::Tensor> tensors{tensor};
              group->allreduce(tensors)->wait();
            }};
#else
    throw std::runtime_error(
        "--tensor-parallel on CPU needs Gloo, and this llmprof-decode was built without it "
        "(LibTorch's c10d Gloo headers or libgloo were not found; on Debian: libgloo-dev)");
#endif
  }
#if LLMPROF_DECODE_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, placement.rank, placement.world_size, options);
  return {"nccl", [group](torch::Tensor& tensor) {
            std::vector<at::Tensor> tensors{tensor};
            group->allreduce(tensors)->wait();
          }};
#else
  throw std::runtime_error("--tensor-parallel on " + device.str() +
                           " needs NCCL, and this llmprof-decode was built without it (a LibTorch built with CUDA "
                           "and NCCL, and nccl.h, are needed)");
#endif
}

}  // namespace decode_workload
