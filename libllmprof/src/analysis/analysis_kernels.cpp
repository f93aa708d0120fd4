// Per-kernel figures: ncu launches joined to the nsys kernel rows (exact name, join key, function
// name), their times, FLOP, DRAM traffic and percent of peak, and the FLOP per launch the stages use.
#include <algorithm>
#include <optional>
#include <set>

#include "analysis/analysis_model.hpp"

namespace llmprof {
namespace {

// Finds the nsys row of an ncu kernel name: exact, then the spelling-independent join key, then
// the bare function name when only one nsys kernel has it.
class NsysKernelIndex {
 public:
  explicit NsysKernelIndex(const std::vector<KernelSummaryRow>& rows) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      exact_.emplace(rows[i].name, i);
      by_key_[kernel_name_join_key(rows[i].name)].push_back(i);
      by_function_[kernel_function_name(rows[i].name)].push_back(i);
    }
  }
  std::optional<std::pair<std::size_t, std::string>> find(const std::string& ncu_name) const {
    if (auto it = exact_.find(ncu_name); it != exact_.end()) return std::pair{it->second, std::string("exact")};
    if (auto it = by_key_.find(kernel_name_join_key(ncu_name)); it != by_key_.end() && it->second.size() == 1) {
      return std::pair{it->second.front(), std::string("join key")};
    }
    if (auto it = by_function_.find(kernel_function_name(ncu_name));
        it != by_function_.end() && it->second.size() == 1) {
      return std::pair{it->second.front(), std::string("function name")};
    }
    return std::nullopt;
  }

 private:
  std::map<std::string, std::size_t> exact_;
  std::map<std::string, std::vector<std::size_t>> by_key_;
  std::map<std::string, std::vector<std::size_t>> by_function_;
};

struct LaunchTotals {
  std::int64_t launches = 0;
  double duration_ns = 0;
  double flop = 0;
  std::int64_t flop_launches = 0;
  double dram_bytes = 0;
  std::int64_t dram_launches = 0;
  double compute_weighted = 0, compute_weight = 0;
  double dram_weighted = 0, dram_weight = 0;
  std::map<std::string, double> flop_by_precision;
  std::set<std::string> stages;
  std::string ncu_name;
  std::string join;
};

void add_launch(LaunchTotals& totals, const LaunchRoofline& launch) {
  ++totals.launches;
  const double duration = launch.duration_ns.value_or(0);
  totals.duration_ns += duration;
  if (launch.flop) {
    totals.flop += *launch.flop;
    ++totals.flop_launches;
    for (const auto& [key, flop] : launch.flop_by_precision) totals.flop_by_precision[key] += flop;
  }
  if (launch.dram_bytes) {
    totals.dram_bytes += *launch.dram_bytes;
    ++totals.dram_launches;
  }
  if (launch.pct_peak_compute) {
    totals.compute_weighted += *launch.pct_peak_compute * duration;
    totals.compute_weight += duration;
  }
  if (launch.pct_peak_dram) {
    totals.dram_weighted += *launch.pct_peak_dram * duration;
    totals.dram_weight += duration;
  }
  for (const auto& range : launch.nvtx_stack) totals.stages.insert(detail::qualified_range(range));
  if (totals.ncu_name.empty()) totals.ncu_name = launch.kernel_name;
}

void fill_efficiency(KernelAnalysis& kernel, const LaunchTotals& totals, const AnalysisOptions& options) {
  kernel.profiled_launches = totals.launches;
  kernel.ncu_name = totals.ncu_name;
  kernel.ncu_name_join = totals.join;
  if (totals.flop_launches > 0) kernel.flop_per_launch = totals.flop / static_cast<double>(totals.flop_launches);
  if (totals.dram_launches > 0) {
    kernel.dram_bytes_per_launch = totals.dram_bytes / static_cast<double>(totals.dram_launches);
  }
  if (totals.flop_launches > 0 && totals.dram_launches > 0 && totals.dram_bytes > 0) {
    kernel.arithmetic_intensity = totals.flop / totals.dram_bytes;
  }
  if (totals.flop_launches > 0 && totals.duration_ns > 0) {
    kernel.achieved_flop_per_s = totals.flop / (totals.duration_ns * 1e-9);
  }
  if (totals.compute_weight > 0) kernel.pct_peak_compute = totals.compute_weighted / totals.compute_weight;
  if (totals.dram_weight > 0) kernel.pct_peak_dram = totals.dram_weighted / totals.dram_weight;
  if (const auto bound = classify_bound(kernel.pct_peak_compute, kernel.pct_peak_dram, options.thresholds))
    kernel.bound = to_string(*bound);
  double most = 0;
  for (const auto& [key, flop] : totals.flop_by_precision) {
    if (flop > most) {
      most = flop;
      kernel.precision = key;
    }
  }
  kernel.stages.insert(kernel.stages.end(), totals.stages.begin(), totals.stages.end());
}

detail::FlopPerLaunch mean_flop_per_launch(const std::map<std::string, LaunchTotals>& totals) {
  detail::FlopPerLaunch means;
  for (const auto& [name, entry] : totals) {
    if (entry.flop_launches == 0) continue;
    auto& mean = means[name];  // a profiled kernel with no FLOP still has a (zero) FLOP figure
    for (const auto& [key, flop] : entry.flop_by_precision) mean[key] = flop / static_cast<double>(entry.flop_launches);
  }
  return means;
}

std::map<std::string, double> mean_dram_bytes_per_launch(const std::map<std::string, LaunchTotals>& totals) {
  std::map<std::string, double> means;
  for (const auto& [name, entry] : totals) {
    if (entry.dram_launches > 0) means[name] = entry.dram_bytes / static_cast<double>(entry.dram_launches);
  }
  return means;
}

// Every ncu launch added to the totals of the kernel it joins in nsys (or of its own name when nsys
// has no row for it); `joined_name` gets each launch's kernel name, in file order.
struct JoinedLaunches {
  std::map<std::string, LaunchTotals> totals;  // by KernelAnalysis name
  std::vector<std::string> joined_name;
  std::vector<std::string> unmatched;  // ncu names with no nsys row, once each
};

JoinedLaunches join_launches(const AnalysisInputs& inputs) {
  JoinedLaunches joined;
  if (!inputs.ncu_launches) return joined;
  std::optional<NsysKernelIndex> index;
  if (inputs.nsys && inputs.nsys->kernels) index.emplace(*inputs.nsys->kernels);
  for (const auto& launch : *inputs.ncu_launches) {
    std::string name = launch.kernel_name;
    std::string join;
    if (index) {
      if (auto found = index->find(launch.kernel_name)) {
        name = (*inputs.nsys->kernels)[found->first].name;
        join = found->second;
      } else if (std::find(joined.unmatched.begin(), joined.unmatched.end(), launch.kernel_name) ==
                 joined.unmatched.end()) {
        joined.unmatched.push_back(launch.kernel_name);
      }
    }
    joined.joined_name.push_back(name);
    auto& entry = joined.totals[name];
    entry.join = join;
    add_launch(entry, launch);
  }
  return joined;
}

// One kernel per nsys cuda_gpu_kern_sum row (times from nsys), with the efficiency of its ncu
// launches where it has some; the names of those kernels go into `done`.
void add_nsys_kernels(const AnalysisInputs& inputs, const AnalysisOptions& options,
                      const std::map<std::string, LaunchTotals>& totals, AnalysisReport& report,
                      std::set<std::string>& done) {
  std::map<std::string, std::set<std::string>> nsys_stages;
  if (inputs.nsys->range_kernels) {
    for (const auto& row : *inputs.nsys->range_kernels) {
      if (row.range) nsys_stages[row.kernel_name].insert(detail::qualified_range(*row.range));
    }
  }
  for (const auto& row : *inputs.nsys->kernels) {
    KernelAnalysis kernel;
    kernel.name = row.name;
    kernel.instances = row.time.count;
    kernel.total_time_ns = row.time.total_time_ns;
    kernel.avg_time_ns = row.time.average_ns;
    kernel.time_source = "nsys cuda_gpu_kern_sum";
    kernel.precision = std::string();  // "" until ncu's FLOP name one (report.json has always written "")
    kernel.profiled_launches = 0;       // none until fill_efficiency counts its ncu launches
    auto& stages = nsys_stages[row.name];
    if (auto it = totals.find(row.name); it != totals.end()) {
      stages.insert(it->second.stages.begin(), it->second.stages.end());
      auto copy = it->second;
      copy.stages = stages;
      fill_efficiency(kernel, copy, options);
      done.insert(row.name);
    } else {
      kernel.stages.assign(stages.begin(), stages.end());
    }
    report.kernels.push_back(std::move(kernel));
  }
}

// A kernel that only ncu saw: its times are the sum of its launches' durations.
KernelAnalysis ncu_only_kernel(const std::string& name, const LaunchTotals& entry, const AnalysisOptions& options) {
  KernelAnalysis kernel;
  kernel.name = name;
  kernel.instances = entry.launches;
  kernel.total_time_ns = static_cast<std::int64_t>(entry.duration_ns + 0.5);
  kernel.avg_time_ns = entry.launches ? entry.duration_ns / static_cast<double>(entry.launches) : 0;
  kernel.time_source = "ncu gpu__time_duration.sum";
  kernel.precision = std::string();
  fill_efficiency(kernel, entry, options);
  return kernel;
}

void fill_flop_per_launch(const AnalysisInputs& inputs, const JoinedLaunches& joined,
                          detail::PerLaunchMeans& flop_per_launch) {
  flop_per_launch.any_stage = mean_flop_per_launch(joined.totals);
  flop_per_launch.dram_bytes_any_stage = mean_dram_bytes_per_launch(joined.totals);
  if (!inputs.ncu_launches) return;
  std::map<std::string, std::map<std::string, LaunchTotals>> by_stage;
  for (std::size_t i = 0; i < inputs.ncu_launches->size(); ++i) {
    const auto& launch = (*inputs.ncu_launches)[i];
    const auto& name = joined.joined_name.at(i);
    if (!launch.nvtx_stack.empty()) flop_per_launch.kernels_with_stacks.insert(name);
    for (const auto& range : launch.nvtx_stack) {
      const std::string stage = detail::qualified_range(range);
      add_launch(by_stage[stage][name], launch);
      flop_per_launch.launches_by_stage[stage][name].push_back(i);
    }
  }
  detail::fill_config_bytes(inputs, flop_per_launch);
  for (const auto& [stage, stage_totals] : by_stage) {
    flop_per_launch.by_stage[stage] = mean_flop_per_launch(stage_totals);
    flop_per_launch.dram_bytes_by_stage[stage] = mean_dram_bytes_per_launch(stage_totals);
  }
}

// Each kernel's share of the kernels' total time; the longest first.
void rank_by_time(std::vector<KernelAnalysis>& kernels) {
  // Every kernel the analysis builds has a time (nsys's, or its ncu launches' sum); value_or is for the type.
  std::int64_t total = 0;
  for (const auto& kernel : kernels) total += kernel.total_time_ns.value_or(0);
  for (auto& kernel : kernels) {
    const auto time = static_cast<double>(kernel.total_time_ns.value_or(0));
    kernel.share_of_total = total > 0 ? time / static_cast<double>(total) : 0;
  }
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    return a.total_time_ns.value_or(0) > b.total_time_ns.value_or(0);
  });
}

}  // namespace

namespace detail {

void build_kernels(const AnalysisInputs& inputs, const AnalysisOptions& options, AnalysisReport& report,
                   PerLaunchMeans& flop_per_launch) {
  const JoinedLaunches joined = join_launches(inputs);
  for (const auto& name : joined.unmatched) {
    report.warnings.push_back("ncu kernel '" + name +
                              "' has no row in nsys cuda_gpu_kern_sum; its times come from "
                              "the ncu launches alone");
  }
  std::set<std::string> done;
  if (inputs.nsys && inputs.nsys->kernels) add_nsys_kernels(inputs, options, joined.totals, report, done);
  for (const auto& [name, entry] : joined.totals) {
    if (!done.count(name)) report.kernels.push_back(ncu_only_kernel(name, entry, options));
  }
  fill_flop_per_launch(inputs, joined, flop_per_launch);
  rank_by_time(report.kernels);
}

}  // namespace detail
}  // namespace llmprof
