// Packing selected kernels into ncu passes (see ncu_plan_packing.hpp).
#include "analysis/ncu_plan_packing.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace llmprof::detail {
namespace {

// One kernel in one configuration: how many launches it has there, how many the plan wants, and how many
// launches of each other selected kernel ncu counts in that configuration before the wanted ones are in.
struct KernelInConfig {
  std::size_t kernel = 0;
  std::size_t config = 0;
  std::int64_t want = 0;
  std::vector<std::int64_t> ahead;  // per selected kernel; its own entry is 0
};

class Packer {
 public:
  Packer(const std::vector<StageKernelLaunch>& launches, const std::vector<std::string>& kernels,
         const NcuPlanOptions& options)
      : kernel_count_(kernels.size()), options_(options) {
    std::map<std::string, std::size_t> kernel_index, config_index;
    for (std::size_t i = 0; i < kernels.size(); ++i) kernel_index.emplace(kernels[i], i);
    // Per counted configuration (ncu_counting_key), the selected kernels' launches in order: with ncu 2025.3.1
    // one kernel each, except namesakes that share a recorded name.
    std::vector<std::vector<std::size_t>> sequences;
    for (const auto& launch : launches) {
      const auto kernel = kernel_index.find(launch.kernel);
      if (kernel == kernel_index.end()) continue;
      const auto [config, added] = config_index.try_emplace(ncu_counting_key(launch), sequences.size());
      if (added) sequences.emplace_back();
      sequences[config->second].push_back(kernel->second);
    }
    totals_.assign(sequences.size(), std::vector<std::int64_t>(kernel_count_, 0));
    for (std::size_t config = 0; config < sequences.size(); ++config) index_config(config, sequences[config]);
  }

  // The --launch-count that reaches every wanted launch of `pass`'s kernels: the latest position, among the
  // pass's launches in a configuration, of a kernel's last wanted launch there.
  std::int64_t needed_count(const std::vector<bool>& pass) const {
    std::int64_t needed = 0;
    for (const auto& entry : entries_) {
      if (!pass[entry.kernel]) continue;
      std::int64_t position = entry.want;
      for (std::size_t other = 0; other < kernel_count_; ++other)
        if (pass[other]) position += entry.ahead[other];
      needed = std::max(needed, position);
    }
    return needed;
  }

  // Launches a pass profiles at `count`: the first `count` of each configuration among its kernels' launches.
  std::int64_t profiled(const std::vector<bool>& pass, std::int64_t count) const {
    std::int64_t total = 0;
    for (const auto& per_kernel : totals_) {
      std::int64_t launches = 0;
      for (std::size_t kernel = 0; kernel < kernel_count_; ++kernel)
        if (pass[kernel]) launches += per_kernel[kernel];
      total += std::min(count, launches);
    }
    return total;
  }

 private:
  void index_config(std::size_t config, const std::vector<std::size_t>& sequence) {
    for (const std::size_t kernel : sequence) ++totals_[config][kernel];
    std::vector<std::int64_t> seen(kernel_count_, 0);
    std::map<std::size_t, std::size_t> entry_of;  // kernel -> its entry for this configuration
    for (std::size_t kernel = 0; kernel < kernel_count_; ++kernel) {
      if (totals_[config][kernel] == 0) continue;
      entry_of.emplace(kernel, entries_.size());
      const std::int64_t wanted = std::max<std::int64_t>(options_.launches_per_config, 1);
      entries_.push_back({kernel, config, std::min(wanted, totals_[config][kernel]), {}});
    }
    for (const std::size_t kernel : sequence) {
      KernelInConfig& entry = entries_[entry_of.at(kernel)];
      if (++seen[kernel] != entry.want) continue;
      entry.ahead = seen;
      entry.ahead[kernel] = 0;
    }
  }

  std::size_t kernel_count_;
  const NcuPlanOptions& options_;
  std::vector<std::vector<std::int64_t>> totals_;  // [configuration][kernel] launches
  std::vector<KernelInConfig> entries_;
};

struct OpenPass {
  std::vector<bool> members;
  std::int64_t count = 0;
  std::int64_t profiled = 0;
};

}  // namespace

std::vector<PackedPass> pack_ncu_passes(const std::vector<StageKernelLaunch>& launches,
                                        const std::vector<std::string>& kernels, const NcuPlanOptions& options) {
  const Packer packer(launches, kernels, options);
  const std::int64_t base_count = std::max<std::int64_t>(options.launches_per_config, 1);
  const std::int64_t cap = std::max(options.max_launch_count, base_count);
  std::vector<OpenPass> passes;
  for (std::size_t kernel = 0; kernel < kernels.size(); ++kernel) {
    OpenPass alone{std::vector<bool>(kernels.size(), false), 0, 0};
    alone.members[kernel] = true;
    alone.count = std::max(base_count, packer.needed_count(alone.members));
    alone.profiled = packer.profiled(alone.members, alone.count);
    double best_cost = options.seconds_per_pass + double(alone.profiled) * options.seconds_per_launch;
    std::optional<std::pair<std::size_t, OpenPass>> best_join;
    for (std::size_t i = 0; i < passes.size(); ++i) {
      OpenPass joined = passes[i];
      joined.members[kernel] = true;
      joined.count = std::max(base_count, packer.needed_count(joined.members));
      if (joined.count > cap) continue;
      joined.profiled = packer.profiled(joined.members, joined.count);
      // Ties join: one pass fewer for the same launches.
      const double cost = double(joined.profiled - passes[i].profiled) * options.seconds_per_launch;
      if (cost <= best_cost) {
        best_cost = cost;
        best_join.emplace(i, std::move(joined));
      }
    }
    if (best_join)
      passes[best_join->first] = std::move(best_join->second);
    else
      passes.push_back(std::move(alone));
  }
  std::vector<PackedPass> packed;
  for (const auto& pass : passes) {
    PackedPass out;
    for (std::size_t kernel = 0; kernel < kernels.size(); ++kernel)
      if (pass.members[kernel]) out.kernels.push_back(kernels[kernel]);
    out.launch_count = pass.count;
    packed.push_back(std::move(out));
  }
  return packed;
}

}  // namespace llmprof::detail
