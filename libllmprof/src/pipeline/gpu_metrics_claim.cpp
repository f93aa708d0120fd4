// decide_gpu_metrics_sampling and claim_gpu_metrics_sampling (pipeline/gpu_metrics_claim.hpp).
#include "pipeline/gpu_metrics_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/text.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

// The one GPU CUDA_VISIBLE_DEVICES names, or nullopt when it is unset, empty or names several.
std::optional<std::string> single_visible_gpu(const std::optional<std::string>& cuda_visible_devices) {
  if (!cuda_visible_devices) return std::nullopt;
  const std::string value = std::string(trim(*cuda_visible_devices));
  if (value.empty() || value.find(',') != std::string::npos) return std::nullopt;
  return value;
}

std::string claimed_by(const GpuMetricsClaim& claim) {
  return "rank " + std::to_string(claim.rank) +
         (claim.devices == "all" ? " samples every GPU of this host" : " samples this GPU (" + claim.devices + ")");
}

// A host name as a file name: anything but letters, digits, '.', '-' and '_' becomes '_'.
std::string file_name_of(const std::string& host) {
  std::string name = host.empty() ? "unknown-host" : host;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return name;
}

std::vector<GpuMetricsClaim> read_claims(const fs::path& file) {
  std::vector<GpuMetricsClaim> claims;
  std::ifstream in(file);
  GpuMetricsClaim claim;
  while (in >> claim.rank >> claim.devices) claims.push_back(claim);
  return claims;
}

}  // namespace

GpuMetricsDecision decide_gpu_metrics_sampling(const std::vector<GpuMetricsClaim>& claims, int rank,
                                               const std::optional<std::string>& cuda_visible_devices,
                                               bool cuda_visible_supported) {
  GpuMetricsDecision decision;
  const std::optional<std::string> gpu = cuda_visible_supported ? single_visible_gpu(cuda_visible_devices) : std::nullopt;
  for (const auto& claim : claims) {
    if (claim.devices == "all" || !gpu || claim.devices == *gpu) {
      decision.note = "not sampling: " + claimed_by(claim) + " (one nsys per GPU may sample)";
      return decision;
    }
  }
  decision.claim = GpuMetricsClaim{rank, gpu.value_or("all")};
  decision.devices_value = gpu ? "cuda-visible" : "all";
  decision.note = gpu ? "sampling its one visible GPU (CUDA_VISIBLE_DEVICES=" + *gpu + ")"
                      : std::string("sampling every GPU of this host, the first rank on it to claim (") +
                            (cuda_visible_supported ? "CUDA_VISIBLE_DEVICES does not name one GPU"
                                                    : "this nsys has no --gpu-metrics-devices=cuda-visible") +
                            ")";
  return decision;
}

Result<GpuMetricsDecision> claim_gpu_metrics_sampling(const fs::path& directory, const std::string& host, int rank,
                                                      const std::optional<std::string>& cuda_visible_devices,
                                                      bool cuda_visible_supported) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) return io_error_from_errno(error.value(), "could not create the GPU-metrics claims folder", directory);
  const std::string name = file_name_of(host);
  const fs::path lock_file = directory / (name + ".lock");
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error_from_errno(errno, "could not open the GPU-metrics claims lock", lock_file);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int saved = errno;
      ::close(fd);
      return io_error_from_errno(saved, "could not lock the GPU-metrics claims", lock_file);
    }
  }
  const fs::path claims_file = directory / (name + ".claims");
  GpuMetricsDecision decision =
      decide_gpu_metrics_sampling(read_claims(claims_file), rank, cuda_visible_devices, cuda_visible_supported);
  if (decision.claim) {
    std::ofstream out(claims_file, std::ios::app);
    out << decision.claim->rank << " " << decision.claim->devices << "\n";
    if (!out) {
      ::close(fd);
      return io_error_from_errno(EIO, "could not record the GPU-metrics claim", claims_file);
    }
  }
  ::close(fd);  // releases the lock
  return decision;
}

}  // namespace llmprof::detail
