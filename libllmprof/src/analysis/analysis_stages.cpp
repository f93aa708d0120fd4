// Per-stage figures: wall and GPU projection time, kernel busy time, FLOP, MFU, nesting, verdict.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "analysis/analysis_model.hpp"
#include "core/format.hpp"
#include "llmprof/choice.hpp"

namespace llmprof::detail {
namespace {

using StageKey = std::pair<std::string, std::string>;  // (domain, name)

// The stage's kernel time for arithmetic: unmeasured (outside the capture) counts as none here, and the record
// keeps it null.
double kernel_ns(const StageAnalysis& stage) { return static_cast<double>(stage.kernel_time_ns.value_or(0)); }

// Kernels of one stage: name -> (time, instances).
using StageKernels = std::map<std::string, std::pair<std::int64_t, std::int64_t>>;

StageKernels stage_kernels_from_nsys(const NsysStats& nsys, const StageKey& key) {
  StageKernels kernels;
  for (const auto& row : *nsys.range_kernels) {
    if (!row.range || row.range->domain != key.first || row.range->name != key.second) continue;
    kernels[row.kernel_name].first += row.time.total_time_ns;
    kernels[row.kernel_name].second += row.kernel_instances;
  }
  return kernels;
}

bool stack_contains(const LaunchRoofline& launch, const StageKey& key) {
  return std::any_of(launch.nvtx_stack.begin(), launch.nvtx_stack.end(),
                     [&](const NvtxRangeName& range) { return range.domain == key.first && range.name == key.second; });
}

std::set<StageKey> collect_stages(const AnalysisInputs& inputs) {
  std::set<StageKey> keys;
  if (inputs.nsys) {
    if (inputs.nsys->ranges)
      for (const auto& row : *inputs.nsys->ranges) keys.insert({row.range.domain, row.range.name});
    if (inputs.nsys->range_projections)
      for (const auto& row : *inputs.nsys->range_projections) keys.insert({row.range.domain, row.range.name});
    if (inputs.nsys->range_kernels)
      for (const auto& row : *inputs.nsys->range_kernels)
        if (row.range) keys.insert({row.range->domain, row.range->name});
  }
  if (inputs.ncu_launches)
    for (const auto& launch : *inputs.ncu_launches)
      for (const auto& range : launch.nvtx_stack) keys.insert({range.domain, range.name});
  return keys;
}

void fill_times(const AnalysisInputs& inputs, const StageKey& key, StageAnalysis& stage) {
  if (!inputs.nsys) return;
  if (inputs.nsys->ranges) {
    for (const auto& row : *inputs.nsys->ranges) {
      if (row.range.domain != key.first || row.range.name != key.second) continue;
      stage.wall_ns = stage.wall_ns.value_or(0) + row.time.total_time_ns;
      stage.steps = stage.steps.value_or(0) + static_cast<double>(row.time.count);  // instances; steps later
    }
  }
  if (inputs.nsys->range_projections) {
    for (const auto& row : *inputs.nsys->range_projections) {
      if (row.range.domain != key.first || row.range.name != key.second) continue;
      stage.gpu_projection_ns = stage.gpu_projection_ns.value_or(0) + row.total_projection_ns;
      if (!inputs.nsys->ranges) stage.wall_ns = stage.wall_ns.value_or(0) + row.total_range_ns;
      stage.level = static_cast<int>(std::lround(row.average_range_level));
    }
  }
}

// Without CUDA trace (the sampled preset) no range has a GPU projection or kernels to nest it by: the timeline's
// NVTX nesting is the only one there is.
const TimelineStage* untraced_timeline_stage(const AnalysisInputs& inputs, const StageKey& key) {
  if (!inputs.timeline || !inputs.timeline->cuda_untraced) return nullptr;
  return inputs.timeline->find_stage(key.first.empty() ? key.second : key.first + ":" + key.second);
}

// FLOP of the stage: each kernel's launches in the stage times its mean FLOP per profiled launch.
void fill_flop(const StageKernels& kernels, const PerLaunchMeans& flop_per_launch, StageAnalysis& stage,
               std::map<std::string, double>& by_precision) {
  std::int64_t covered_ns = 0;
  double flop = 0;
  static const FlopPerLaunch none;
  const auto stage_entry = flop_per_launch.by_stage.find(stage.qualified_name());
  const auto& in_stage = stage_entry == flop_per_launch.by_stage.end() ? none : stage_entry->second;
  for (const auto& [name, time_and_count] : kernels) {
    auto it = in_stage.find(name);
    if (it == in_stage.end()) {
      // Launches without NVTX stacks cannot be placed in a stage; only then is the run-wide mean used.
      if (flop_per_launch.kernels_with_stacks.count(name)) continue;
      it = flop_per_launch.any_stage.find(name);
      if (it == flop_per_launch.any_stage.end()) continue;
    }
    covered_ns += time_and_count.first;
    for (const auto& [key, per_launch] : it->second) {
      const double value = per_launch * static_cast<double>(time_and_count.second);
      by_precision[key] += value;
      flop += value;
    }
  }
  if (covered_ns > 0) stage.flop = flop;
  stage.flop_coverage = kernel_ns(stage) > 0 ? static_cast<double>(covered_ns) / kernel_ns(stage) : 0;
}

// The kernel's bytes per launch configuration (the ncu plan's groups) where the stage launched exactly the plan
// stage's launches of it; nullptr otherwise.
const ConfigBytes* config_bytes(const PerLaunchMeans& per_launch, const std::string& stage, const std::string& kernel,
                                std::int64_t launches) {
  const auto found = per_launch.dram_bytes_by_config.find(kernel);
  if (found == per_launch.dram_bytes_by_config.end() || found->second.launches != launches) return nullptr;
  const auto in_stage = per_launch.launches_by_stage.find(stage);
  if (in_stage == per_launch.launches_by_stage.end()) return nullptr;
  const auto profiled = in_stage->second.find(kernel);
  if (profiled == in_stage->second.end() || profiled->second != found->second.launches_profiled) return nullptr;
  return &found->second;
}

// The share of a kernel's stage time that `part` of its groups' time (or launches, without durations) stands for.
double time_share(const ConfigBytes& groups, std::int64_t part_ns, std::int64_t part_launches) {
  if (groups.time_ns > 0) return static_cast<double>(part_ns) / static_cast<double>(groups.time_ns);
  return groups.launches > 0 ? static_cast<double>(part_launches) / static_cast<double>(groups.launches) : 0;
}

// DRAM bytes of the stage: each kernel's launches in the stage times its mean ncu bytes per profiled launch,
// chosen like the FLOP (the stage's own launches; the run-wide mean only for kernels ncu saw without stacks);
// per launch configuration where the ncu plan's groups cover the stage's launches of the kernel.
void fill_dram_bytes(const StageKernels& kernels, const PerLaunchMeans& per_launch, StageAnalysis& stage) {
  static const std::map<std::string, double> none;
  const auto stage_entry = per_launch.dram_bytes_by_stage.find(stage.qualified_name());
  const auto& in_stage = stage_entry == per_launch.dram_bytes_by_stage.end() ? none : stage_entry->second;
  double covered_ns = 0, extrapolated_ns = 0;
  double bytes = 0;
  for (const auto& [name, time_and_count] : kernels) {
    if (const auto* groups = config_bytes(per_launch, stage.qualified_name(), name, time_and_count.second)) {
      const double time = static_cast<double>(time_and_count.first);
      const double measured = time * time_share(*groups, groups->measured_ns, groups->measured_launches);
      const double extrapolated = time * time_share(*groups, groups->extrapolated_ns, groups->extrapolated_launches);
      covered_ns += measured + extrapolated;
      extrapolated_ns += extrapolated;
      bytes += groups->bytes;
      continue;
    }
    auto it = in_stage.find(name);
    if (it == in_stage.end()) {
      if (per_launch.kernels_with_stacks.count(name)) continue;
      it = per_launch.dram_bytes_any_stage.find(name);
      if (it == per_launch.dram_bytes_any_stage.end()) continue;
    }
    covered_ns += static_cast<double>(time_and_count.first);
    bytes += it->second * static_cast<double>(time_and_count.second);
  }
  if (covered_ns > 0) stage.dram_bytes = bytes;
  const double kernel_time = kernel_ns(stage);
  stage.dram_coverage = kernel_time > 0 ? covered_ns / kernel_time : 0;
  stage.dram_coverage_extrapolated = kernel_time > 0 ? extrapolated_ns / kernel_time : 0;
}

void dominant_precision(const std::map<std::string, double>& by_precision, StageAnalysis& stage) {
  double most = 0;
  for (const auto& [key, flop] : by_precision) {
    if (flop > most) {
      most = flop;
      stage.dominant_precision = key;
    }
  }
}

// The rates divide by the wall time only when it can enclose the kernels: under CUDA graphs a range around
// the replay call closes long before the GPU work it launched (recorded graph decode: 19.4 ms of CPU range
// for 283 ms of kernels). The timeline may then supply the GPU-active time (analysis_timeline.cpp).
void choose_rate_time(StageAnalysis& stage) {
  if (!stage.wall_ns || *stage.wall_ns <= 0) return;
  if (kernel_ns(stage) > static_cast<double>(*stage.wall_ns)) {
    stage.rate_time_note = "its CPU range time (" + format_duration_ns(static_cast<double>(*stage.wall_ns)) +
                           ") does not enclose its " + format_duration_ns(kernel_ns(stage)) +
                           " of kernel time (CUDA graphs or asynchronous launches), so FLOP/s, bandwidth, MFU and MBU "
                           "over the stage's time need the GPU-active time from the timeline (nsys/profile.sqlite)";
    return;
  }
  stage.rate_time_ns = stage.wall_ns;
  stage.rate_time_source = "wall time (nsys nvtx_sum)";
}

void fill_workload(const AnalysisReport& report, StageAnalysis& stage) {
  if (!report.workload || stage.domain != report.workload->nvtx_domain) return;
  const auto& workload = *report.workload;
  if (stage.name == "decode" && workload.decode_s > 0) stage.model_flop_per_s = workload.decode_model_flop_per_s();
  if (stage.name == "prefill" && workload.prefill_s > 0) stage.model_flop_per_s = workload.prefill_model_flop_per_s();
  // Its steps are the workload's decode steps unless the timeline shows them (assign_step_units).
  if (stage.name == "decode" && workload.new_tokens > 0 && workload.model_bytes_per_step > 0)
    stage.model_bytes_per_step = workload.model_bytes_per_step;
  if (!stage.model_flop_per_s) return;
  // fp32 models run on CUDA cores unless TF32 is enabled, so their peak is the fp32 one.
  const auto peak = report.device.peak_flop_per_s.find(workload.dtype);
  if (peak != report.device.peak_flop_per_s.end() && peak->second > 0) {
    stage.mfu_workload = *stage.model_flop_per_s / peak->second;
  }
}

std::string bound_advice(KernelBound bound, double threshold_percent) {
  switch (bound) {
    case KernelBound::memory:
      return "memory-bound kernels: cut the bytes moved (fusion, lower-precision weights and KV cache)";
    case KernelBound::compute:
      return "compute-bound kernels: near the math limit, gains need fewer FLOP or a faster precision";
    case KernelBound::latency:
      return "latency-bound kernels (compute and DRAM both below " +
             std::to_string(static_cast<int>(threshold_percent)) +
             "% of peak): too little work per kernel, fuse kernels or batch more";
  }
  return "";
}

// The stage's kernel time by the bound (ncu) of each kernel; kernels without one are left out.
std::map<KernelBound, std::int64_t> time_by_bound(const AnalysisReport& report, const StageKernels& kernels) {
  std::map<KernelBound, std::int64_t> by_bound;
  for (const auto& [name, time_and_count] : kernels) {
    for (const auto& kernel : report.kernels) {
      if (kernel.name != name || !kernel.bound) continue;
      if (const auto bound = parse_choice<KernelBound>(*kernel.bound)) by_bound[*bound] += time_and_count.first;
    }
  }
  return by_bound;
}

// The bound (ncu) of most of the stage's kernel time; nullopt when none of its kernels has one.
std::optional<KernelBound> dominant_bound(const AnalysisReport& report, const StageKernels& kernels) {
  const auto by_bound = time_by_bound(report, kernels);
  if (by_bound.empty()) return std::nullopt;
  return std::max_element(by_bound.begin(), by_bound.end(), [](const auto& a, const auto& b) {
           return a.second < b.second;
         })->first;
}

std::string verdict(const AnalysisReport& report, const AnalysisOptions& options, const StageKernels& kernels,
                    const StageAnalysis& stage) {
  if (!stage.kernel_time_ns) {
    return "outside the nsys capture (it encloses the gated range), so its time is not measured here";
  }
  if (*stage.kernel_time_ns == 0) return "no GPU kernels ran in this stage";
  std::string text;
  if (stage.gpu_busy_fraction && *stage.gpu_busy_fraction < options.host_bound_busy_fraction) {
    return "host/launch-bound: GPU busy " + format_fraction_percent(*stage.gpu_busy_fraction) +
           " of the stage; kernel tuning will not help, cut launch overhead (CUDA graphs, fusion, larger batch)";
  }
  text = stage.gpu_busy_fraction
             ? "GPU-bound: GPU busy " + format_fraction_percent(*stage.gpu_busy_fraction) + " of the stage"
         : stage.gpu_projection_ns ? "GPU busy fraction withheld (its inputs disagree; see the warnings)"
                                   : "GPU busy fraction unknown (no nsys GPU projection)";
  const auto by_bound = time_by_bound(report, kernels);
  if (by_bound.empty()) return text + "; no ncu data for its kernels: profile them to see their limits";
  const auto top = std::max_element(by_bound.begin(), by_bound.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  return text + "; " + format_fraction_percent(static_cast<double>(top->second) / kernel_ns(stage)) +
         " of kernel time in " + bound_advice(top->first, options.thresholds.latency_percent);
}

// The enclosing stage: from ncu's NVTX stacks when a launch shows it, else the shallower nsys
// range (one level up) whose kernels include all of this stage's kernels, the shortest such.
std::optional<std::string> find_parent(const AnalysisInputs& inputs, const StageKey& key, const StageAnalysis& stage,
                                       const std::vector<StageAnalysis>& all,
                                       const std::map<StageKey, StageKernels>& kernels) {
  if (const TimelineStage* untraced = untraced_timeline_stage(inputs, key)) return untraced->parent;
  if (inputs.ncu_launches) {
    for (const auto& launch : *inputs.ncu_launches) {
      for (std::size_t i = 1; i < launch.nvtx_stack.size(); ++i) {
        const auto& range = launch.nvtx_stack[i];
        if (range.domain == key.first && range.name == key.second) return qualified_range(launch.nvtx_stack[i - 1]);
      }
    }
  }
  if (stage.level == 0) return std::nullopt;
  const StageAnalysis* best = nullptr;
  for (const auto& candidate : all) {
    if (candidate.level != stage.level - 1) continue;
    if (candidate.wall_ns && stage.wall_ns && *candidate.wall_ns < *stage.wall_ns) continue;
    const auto& mine = kernels.at(key);
    const auto& theirs = kernels.at({candidate.domain, candidate.name});
    const bool encloses = std::all_of(mine.begin(), mine.end(), [&](const auto& entry) {
      const auto it = theirs.find(entry.first);
      return it != theirs.end() && it->second.second >= entry.second.second;
    });
    if (!encloses) continue;
    if (!best || candidate.wall_ns.value_or(0) < best->wall_ns.value_or(0)) best = &candidate;
  }
  if (best) return best->qualified_name();
  return std::nullopt;
}

// A stage's kernels (name -> total time and launches): nsys's per-range kernel table, else, without nsys, the
// ncu-profiled launches under the range (whose depth in the NVTX stack gives the stage's level).
StageKernels stage_kernels(const AnalysisInputs& inputs, const StageKey& key, StageAnalysis& stage) {
  StageKernels kernels;
  if (inputs.nsys && inputs.nsys->range_kernels) {
    kernels = stage_kernels_from_nsys(*inputs.nsys, key);
    stage.kernel_time_source = "nsys nvtx_kern_sum";
  } else if (inputs.ncu_launches) {
    // Without nsys only the profiled launches are known: time and FLOP are those of the sample.
    for (const auto& launch : *inputs.ncu_launches) {
      if (!stack_contains(launch, key)) continue;
      auto& entry = kernels[launch.kernel_name];
      entry.first += static_cast<std::int64_t>(std::llround(launch.duration_ns.value_or(0)));
      entry.second += 1;
      stage.level = static_cast<int>(std::distance(
          launch.nvtx_stack.begin(),
          std::find_if(launch.nvtx_stack.begin(), launch.nvtx_stack.end(), [&](const NvtxRangeName& range) {
            return range.domain == key.first && range.name == key.second;
          })));
    }
    stage.kernel_time_source = "ncu launches";
  }
  std::int64_t time_ns = 0, instances = 0;
  for (const auto& [name, time_and_count] : kernels) {
    time_ns += time_and_count.first;
    instances += time_and_count.second;
  }
  stage.kernel_time_ns = time_ns;
  stage.kernel_instances = instances;
  return kernels;
}

// Busy over the time the stage took: the larger of its wall time and its GPU projection. nsys's projection
// (2025.3 nvtx_gpu_proj_sum) spans only the GPU work the range launched, so kernel time / projection called the
// H100 sample's `sample` (wall 4.41 ms, GPU work 1.32 ms) "GPU busy 100%". The timeline engine divides by the
// active span the same way; the projection can outlast the wall time (work still queued when the range closed),
// hence the larger of the two. Kernel time past the projection cannot be (the tables are of different
// captures): that ratio is kept so that withhold_impossible_figures withholds it and says why.
void fill_busy_fraction(StageAnalysis& stage) {
  if (!stage.gpu_projection_ns || *stage.gpu_projection_ns <= 0) return;
  const double kernel = kernel_ns(stage);
  const double over_projection = kernel / static_cast<double>(*stage.gpu_projection_ns);
  const std::int64_t span = std::max(*stage.gpu_projection_ns, stage.wall_ns.value_or(0));
  stage.gpu_busy_fraction = over_projection > 1 ? over_projection : kernel / static_cast<double>(span);
}

void fill_top_kernels(const StageKernels& kernels, std::size_t count, StageAnalysis& stage) {
  std::vector<std::pair<std::string, std::int64_t>> ranked;
  for (const auto& [name, time_and_count] : kernels) ranked.emplace_back(name, time_and_count.first);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (std::size_t i = 0; i < ranked.size() && i < count; ++i) {
    const double share = kernel_ns(stage) > 0 ? static_cast<double>(ranked[i].second) / kernel_ns(stage) : 0;
    stage.top_kernels.push_back({ranked[i].first, ranked[i].second, share});
  }
}

// What the report says of a stage's figures' inputs: partial FLOP coverage, no ncu launches, no projection row,
// kernel time from ncu alone.
void note_stage_inputs(const AnalysisInputs& inputs, const StageAnalysis& stage, AnalysisReport& report) {
  if (stage.flop && stage.flop_coverage < 0.999) {
    std::string split;
    if (report.ncu_coverage && report.ncu_coverage->stage == stage.name)
      split = "; of the kernel time, ncu measured " + format_fraction_percent(report.ncu_coverage->measured) +
              ", extrapolated " + format_fraction_percent(report.ncu_coverage->extrapolated) +
              " from the same kernels' profiled configurations";
    report.warnings.push_back("stage '" + stage.qualified_name() + "': FLOP cover only " +
                              format_fraction_percent(stage.flop_coverage) +
                              " of its kernel time (kernels without ncu data count as 0 FLOP" + split + ")");
  }
  if (!stage.flop && inputs.ncu_launches && kernel_ns(stage) > 0) {
    report.skipped.push_back("stage '" + stage.qualified_name() +
                             "': FLOP and MFU need ncu launches of its kernels; none was profiled in this stage");
  }
  if (!stage.gpu_projection_ns) {
    report.skipped.push_back("stage '" + stage.qualified_name() +
                             "': gpu_busy_fraction needs nsys nvtx_gpu_proj_sum, which has no row for it");
  }
  if (stage.kernel_time_source == "ncu launches") {
    report.warnings.push_back("stage '" + stage.qualified_name() +
                              "': kernel time is the sum of the ncu-profiled launches only (no nsys nvtx_kern_sum)");
  }
}

}  // namespace

void build_stages(const AnalysisInputs& inputs, const AnalysisOptions& options,
                  const PerLaunchMeans& flop_per_launch, AnalysisReport& report) {
  std::map<StageKey, StageKernels> kernels_by_stage;
  for (const auto& key : collect_stages(inputs)) {
    StageAnalysis stage;
    stage.domain = key.first;
    stage.name = key.second;
    stage.library = options.library_ranges.library_of(stage.name, stage.domain).value_or("");
    fill_times(inputs, key, stage);
    if (const TimelineStage* untraced = untraced_timeline_stage(inputs, key)) stage.level = untraced->level;
    StageKernels kernels = stage_kernels(inputs, key, stage);
    // No kernel, no wall time, no projection: nsys never saw the range (its time is unknown, which is not
    // the same as idle).
    if (kernel_ns(stage) == 0 && !stage.wall_ns && !stage.gpu_projection_ns) {
      stage.kernel_time_ns.reset();
      stage.kernel_instances.reset();
    }
    fill_busy_fraction(stage);
    std::map<std::string, double> by_precision;
    fill_flop(kernels, flop_per_launch, stage, by_precision);
    dominant_precision(by_precision, stage);
    fill_dram_bytes(kernels, flop_per_launch, stage);
    choose_rate_time(stage);
    if (const auto bound = dominant_bound(report, kernels)) stage.kernel_bound = to_string(*bound);
    fill_workload(report, stage);
    fill_top_kernels(kernels, options.stage_top_kernels, stage);
    FigureChecker check(report.warnings, "stage '" + stage.qualified_name() + "'");
    withhold_impossible_figures(stage, check);
    stage.verdict = verdict(report, options, kernels, stage);
    kernels_by_stage[key] = std::move(kernels);
    report.stages.push_back(std::move(stage));
  }
  for (auto& stage : report.stages) {
    stage.parent = find_parent(inputs, {stage.domain, stage.name}, stage, report.stages, kernels_by_stage);
    note_stage_inputs(inputs, stage, report);
  }
  std::stable_sort(report.stages.begin(), report.stages.end(), [](const auto& a, const auto& b) {
    if (a.level != b.level) return a.level < b.level;
    return a.wall_ns.value_or(0) > b.wall_ns.value_or(0);
  });
}

}  // namespace llmprof::detail
