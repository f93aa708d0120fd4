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
  return "rank " + std::to_string(claim.rank) + " samples this GPU (" + claim.gpu + ")";
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
  while (in >> claim.rank >> claim.gpu) claims.push_back(claim);
  return claims;
}

}  // namespace

GpuMetricsDecision decide_gpu_metrics_sampling(const std::vector<GpuMetricsClaim>& claims,
                                               const GpuMetricsRequest& request) {
  GpuMetricsDecision decision;
  const std::optional<std::string> visible =
      request.cuda_visible_supported ? single_visible_gpu(request.cuda_visible_devices) : std::nullopt;
  GpuMetricsClaim wanted{request.rank, ""};
  if (!visible && single_visible_gpu(request.cuda_visible_devices)) {
    // It sees one GPU, but this nsys cannot sample by CUDA_VISIBLE_DEVICES (2022.4), and nsys's ids need not be
    // CUDA's: sampling by its local rank could sample another GPU than the one it runs on.
    decision.note = "not sampling: this nsys has no --gpu-metrics-devices=cuda-visible, and CUDA_VISIBLE_DEVICES=" +
                    *single_visible_gpu(request.cuda_visible_devices) + " cannot be mapped to nsys's GPU ids";
    return decision;
  }
  if (visible) {
    wanted.gpu = "visible:" + *visible;
    decision.devices_value = "cuda-visible";
    decision.note = "sampling its one visible GPU (CUDA_VISIBLE_DEVICES=" + *visible + ")";
  } else {
    const std::string id = std::to_string(request.local_rank);
    const auto listed = request.listed.find(id);
    if (listed == request.listed.end()) {
      decision.note = "not sampling: nsys lists no GPU " + id + " for local rank " + id + " (" +
                      std::to_string(request.listed.size()) +
                      " listed); the rank that samples the GPU this rank runs on measures it";
      return decision;
    }
    wanted.gpu = "listed:" + id;
    decision.devices_value = id;
    decision.bus = listed->second;
    decision.note = "sampling GPU " + id + " (" + listed->second + "), the one nsys lists under its local rank";
  }
  // A GPU named by CUDA_VISIBLE_DEVICES and one named by nsys's id cannot be told apart before the run: a claim of
  // the other kind keeps this rank from sampling, as one of the same GPU does.
  for (const auto& claim : claims) {
    if (claim.rank == request.rank) continue;  // its own claim from an earlier run of this rank (cmd.txt run again)
    const bool same_kind = claim.gpu.substr(0, claim.gpu.find(':')) == wanted.gpu.substr(0, wanted.gpu.find(':'));
    if (!same_kind || claim.gpu == wanted.gpu) {
      decision = GpuMetricsDecision{};
      decision.note = "not sampling: " + claimed_by(claim) + (same_kind ? "" : ", maybe the same one") +
                      " (one nsys per GPU may sample)";
      return decision;
    }
  }
  decision.claim = wanted;
  return decision;
}

Result<GpuMetricsDecision> claim_gpu_metrics_sampling(const fs::path& directory, const std::string& host,
                                                      const GpuMetricsRequest& request) {
  if (auto created = ensure_directory(directory, "the GPU-metrics claims folder"); !created) return created.error();
  const std::string name = file_name_of(host);
  const fs::path lock_file = directory / (name + ".lock");
  const int descriptor = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (descriptor < 0) return io_error_from_errno(errno, "could not open the GPU-metrics claims lock", lock_file);
  while (::flock(descriptor, LOCK_EX) != 0) {
    if (errno != EINTR) {
      const int saved = errno;
      ::close(descriptor);
      return io_error_from_errno(saved, "could not lock the GPU-metrics claims", lock_file);
    }
  }
  const fs::path claims_file = directory / (name + ".claims");
  GpuMetricsDecision decision = decide_gpu_metrics_sampling(read_claims(claims_file), request);
  if (decision.claim) {
    std::ofstream out(claims_file, std::ios::app);
    out << decision.claim->rank << " " << decision.claim->gpu << "\n";
    out.close();  // the write reaches the file here: a full disk shows now, not in the destructor
    if (!out) {
      ::close(descriptor);
      return io_error_from_errno(EIO, "could not record the GPU-metrics claim", claims_file);
    }
  }
  ::close(descriptor);  // releases the lock
  return decision;
}

}  // namespace llmprof::detail
