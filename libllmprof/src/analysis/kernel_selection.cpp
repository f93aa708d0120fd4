// Kernel selection inside a stage from nvtx_kern_sum (or a stage-gated cuda_gpu_kern_sum): top-N or
// by coverage, collectives left out.
#include "llmprof/kernel_selection.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace llmprof {
namespace {

struct StageKernel {
  std::string name;
  std::int64_t total_time_ns = 0;
  std::int64_t instances = 0;
};

std::string quoted_list(const std::set<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + ("'" + name + "'");
  return text.empty() ? "none" : text;
}

std::string stage_label(const NvtxRangeName& range) {
  return range.domain.empty() ? range.name : range.domain + ":" + range.name;
}

bool domain_matches(const TopKernelRequest& request, const std::string& domain) {
  return !request.domain || *request.domain == domain;
}

// The stage's kernels from nvtx_kern_sum, summed over processes and threads.
Result<std::vector<StageKernel>> kernels_from_range_table(const NsysStats& stats, const TopKernelRequest& request,
                                                          std::string& domain) {
  std::map<std::string, StageKernel> by_name;
  std::set<std::string> domains_found;
  std::set<std::string> stages_present;
  for (const auto& row : *stats.range_kernels) {
    if (!row.range) continue;
    stages_present.insert(stage_label(*row.range));
    if (row.range->name != request.stage || !domain_matches(request, row.range->domain)) continue;
    domains_found.insert(row.range->domain);
    auto& kernel = by_name[row.kernel_name];
    kernel.name = row.kernel_name;
    kernel.total_time_ns += row.time.total_time_ns;
    kernel.instances += row.kernel_instances;
  }
  if (domains_found.size() > 1) {
    return make_error(ErrorCode::invalid_argument,
                      "stage '" + request.stage + "' exists in several NVTX domains (" + quoted_list(domains_found) +
                          ") of nvtx_kern_sum",
                      "name the domain of the stage to select from", request.stage);
  }
  if (by_name.empty()) {
    return make_error(ErrorCode::not_found,
                      "stage '" + request.stage +
                          "' has no kernels in nvtx_kern_sum; stages with kernels: " + quoted_list(stages_present),
                      "choose one of those stages, or check that the workload emits the NVTX range '" + request.stage +
                          "' around its GPU work",
                      request.stage);
  }
  domain = *domains_found.begin();
  std::vector<StageKernel> kernels;
  for (auto& [name, kernel] : by_name) kernels.push_back(std::move(kernel));
  return kernels;
}

// The whole capture's kernels, valid as the stage only because the capture was gated on it.
Result<std::vector<StageKernel>> kernels_from_gated_capture(const NsysStats& stats, const TopKernelRequest& request,
                                                            std::string& domain) {
  if (!stats.kernels) {
    // nsys stats writes no kernel table for a capture without CUDA kernels. On the H100 a Python engine whose worker
    // was started with fork and never exec'd left exactly that: nsys 2025.3.1 traces such a child only with
    // --trace-fork-before-exec=true, so the whole-run capture held the front's CPU work and no kernel.
    return make_error(ErrorCode::not_found,
                      "the capture holds no CUDA kernel to select for stage '" + request.stage +
                          "' (nsys stats gave neither nvtx_kern_sum nor cuda_gpu_kern_sum): no traced process ran "
                          "GPU work",
                      "if the workload runs its GPU work in a worker started by fork without exec (Python "
                      "multiprocessing's fork start method), set nsys.extra_args = [\"--trace-fork-before-exec=true\"] "
                      "(the serving preset sets it); otherwise check that the workload uses the GPU, and nsys/stats.log",
                      request.stage);
  }
  domain = request.domain.value_or("");
  if (stats.ranges && !request.whole_capture) {
    // A gated capture still records the gate range; if it is not there, the capture was gated on
    // something else and the whole-run table is not this stage.
    std::set<std::string> present;
    bool found = false;
    for (const auto& row : *stats.ranges) {
      present.insert(stage_label(row.range));
      if (row.range.name == request.stage && domain_matches(request, row.range.domain)) {
        found = true;
        domain = row.range.domain;
      }
    }
    if (!found) {
      return make_error(ErrorCode::invalid_argument,
                        "the capture is said to be gated on stage '" + request.stage + "', but nvtx_sum records only " +
                            quoted_list(present),
                        "check the --nvtx-capture range the nsys capture used", request.stage);
    }
  }
  std::map<std::string, StageKernel> by_name;
  for (const auto& row : *stats.kernels) {
    auto& kernel = by_name[row.name];
    kernel.name = row.name;
    kernel.total_time_ns += row.time.total_time_ns;
    kernel.instances += row.time.count;
  }
  std::vector<StageKernel> kernels;
  for (auto& [name, kernel] : by_name) kernels.push_back(std::move(kernel));
  if (kernels.empty()) {
    return make_error(ErrorCode::not_found,
                      "cuda_gpu_kern_sum holds no kernels for the gated stage '" + request.stage + "'",
                      "check that the gated range encloses GPU work", request.stage);
  }
  return kernels;
}

bool has_stage_rows(const NsysStats& stats, const TopKernelRequest& request) {
  if (!stats.range_kernels) return false;
  return std::any_of(stats.range_kernels->begin(), stats.range_kernels->end(), [&](const NvtxKernelRow& row) {
    return row.range && row.range->name == request.stage && domain_matches(request, row.range->domain);
  });
}

std::string match_form(const std::string& name, KernelNameBase base) {
  return base == KernelNameBase::function ? kernel_function_name(name) : kernel_name_join_key(name);
}

// Kernels of `sorted` (most time first) needed for their time to reach `target` of the stage's
// kernel time; nullopt when even all of them fall short.
std::optional<std::size_t> kernels_to_reach(const std::vector<StageKernel>& sorted, std::int64_t stage_time_ns,
                                            double target) {
  // A relative tolerance so that an exact 90% counts as reaching 0.9 despite the double's rounding.
  const long double needed = static_cast<long double>(target) * static_cast<long double>(stage_time_ns) * (1 - 1e-12L);
  std::int64_t reached = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    reached += sorted[i].total_time_ns;
    if (static_cast<long double>(reached) >= needed) return i + 1;
  }
  return std::nullopt;
}

Result<void> check_rule(const TopKernelRequest& request) {
  if (request.coverage) {
    if (!(*request.coverage > 0 && *request.coverage <= 1)) {
      return make_error(ErrorCode::invalid_argument,
                        "kernel coverage target " + std::to_string(*request.coverage) + " is not in (0, 1]",
                        "give a fraction of the stage's kernel time, e.g. 0.9", "coverage");
    }
    if (request.max_kernels == 0) {
      return make_error(ErrorCode::invalid_argument, "a coverage selection capped at 0 kernels selects nothing",
                        "allow at least one kernel (max_kernels >= 1)", "max_kernels");
    }
  } else if (request.n == 0) {
    return make_error(ErrorCode::invalid_argument, "top-kernel selection asked for 0 kernels",
                      "ask for at least one kernel", "n");
  }
  return {};
}

// How many of `profilable` (most time first) the request's rule selects; sets capped/coverage_target.
std::size_t selected_count(const std::vector<StageKernel>& profilable, const TopKernelRequest& request,
                           KernelSelection& selection) {
  if (!request.coverage) return std::min(request.n, profilable.size());
  selection.coverage_target = *request.coverage;
  selection.max_kernels = request.max_kernels;
  const auto needed = kernels_to_reach(profilable, selection.stage_kernel_time_ns, *request.coverage);
  if (needed && *needed <= request.max_kernels) return *needed;
  const std::size_t count = std::min(request.max_kernels, profilable.size());
  selection.capped =
      count == request.max_kernels && (!needed || *needed > request.max_kernels) && count < profilable.size();
  return count;
}

std::vector<CoverageStep> coverage_steps(const std::vector<StageKernel>& profilable, const KernelSelection& selection) {
  std::vector<CoverageStep> steps;
  for (const double target : coverage_step_targets) {
    if (target <= selection.coverage + 1e-12) continue;
    CoverageStep step;
    step.target = target;
    const auto needed = kernels_to_reach(profilable, selection.stage_kernel_time_ns, target);
    step.reachable = needed.has_value();
    step.kernels = needed.value_or(0);
    step.more_kernels = needed ? *needed - std::min(*needed, selection.kernels.size()) : 0;
    steps.push_back(step);
  }
  return steps;
}

SelectedKernel make_selected(const StageKernel& kernel, const TopKernelRequest& request, std::int64_t stage_time_ns) {
  SelectedKernel selected;
  selected.name = kernel.name;
  selected.match_name = request.name_base == KernelNameBase::function ? kernel_function_name(kernel.name) : kernel.name;
  selected.total_time_ns = kernel.total_time_ns;
  selected.instances = kernel.instances;
  selected.share =
      stage_time_ns > 0 ? static_cast<double>(kernel.total_time_ns) / static_cast<double>(stage_time_ns) : 0.0;
  return selected;
}

Result<std::vector<StageKernel>> stage_kernels_for(const NsysStats& stats, const TopKernelRequest& request,
                                                   KernelSelection& selection) {
  if (request.whole_capture) {
    selection.source = "cuda_gpu_kern_sum (the whole captured window)";
    return kernels_from_gated_capture(stats, request, selection.domain);
  }
  if (request.capture_gated_on_stage && !has_stage_rows(stats, request)) {
    selection.source = "cuda_gpu_kern_sum (capture gated on the stage)";
    return kernels_from_gated_capture(stats, request, selection.domain);
  }
  if (stats.range_kernels) {
    selection.source = "nvtx_kern_sum";
    return kernels_from_range_table(stats, request, selection.domain);
  }
  return make_error(ErrorCode::not_found,
                    "nvtx_kern_sum is not available, so the kernels of stage '" + request.stage +
                        "' cannot be told apart from the rest of the run",
                    "run nsys stats with --report nvtx_kern_sum (nsys profile --trace=cuda,nvtx), or, when the "
                    "capture was gated on the stage, say so (capture_gated_on_stage)",
                    request.stage);
}

}  // namespace

namespace {

// The stage's totals, and its collectives set aside (ncu's serial replay would hang them); returns the
// kernels ncu may profile, by total time.
std::vector<StageKernel> set_collectives_aside(const std::vector<StageKernel>& kernels, const TopKernelRequest& request,
                                               KernelSelection& selection) {
  std::vector<StageKernel> profilable;
  for (const auto& kernel : kernels) {
    selection.stage_kernel_time_ns += kernel.total_time_ns;
    selection.stage_kernel_instances += kernel.instances;
    if (!is_collective_kernel(kernel.name)) profilable.push_back(kernel);
  }
  selection.stage_kernel_count = kernels.size();
  for (const auto& kernel : kernels) {
    if (!is_collective_kernel(kernel.name)) continue;
    selection.collectives_left_out.push_back(make_selected(kernel, request, selection.stage_kernel_time_ns));
    selection.collective_time_ns += kernel.total_time_ns;
  }
  if (selection.stage_kernel_time_ns > 0) {
    selection.collective_share =
        static_cast<double>(selection.collective_time_ns) / static_cast<double>(selection.stage_kernel_time_ns);
  }
  return profilable;
}

// The ncu --launch-count that reaches the rarest selected kernel: every launch the regex lets through
// counts, so unselected kernels with the same match form (function base) count too.
std::int64_t launches_to_reach_all(const std::vector<StageKernel>& kernels, const TopKernelRequest& request,
                                   const std::set<std::string>& selected_names, std::int64_t rarest_selected,
                                   KernelSelection& selection) {
  std::set<std::string> selected_forms;
  for (const auto& name : selected_names) selected_forms.insert(match_form(name, request.name_base));
  std::int64_t matching_launches = 0;
  for (const auto& kernel : kernels) {
    const bool selected = selected_names.count(kernel.name) > 0;
    if (!selected && !selected_forms.count(match_form(kernel.name, request.name_base))) continue;
    if (!selected) selection.also_matched.push_back(kernel.name);
    matching_launches += kernel.instances;
  }
  return matching_launches - rarest_selected + 1;
}

}  // namespace

Result<KernelSelection> select_top_kernels(const NsysStats& stats, const TopKernelRequest& request) {
  if (auto checked = check_rule(request); !checked) return checked.error();
  KernelSelection selection;
  selection.stage = request.stage;
  selection.name_base = request.name_base;
  auto stage_kernels = stage_kernels_for(stats, request, selection);
  if (!stage_kernels) return stage_kernels.error();
  auto kernels = std::move(stage_kernels).value();
  std::sort(kernels.begin(), kernels.end(), [](const StageKernel& a, const StageKernel& b) {
    return a.total_time_ns != b.total_time_ns ? a.total_time_ns > b.total_time_ns : a.name < b.name;
  });
  const std::vector<StageKernel> profilable = set_collectives_aside(kernels, request, selection);
  if (profilable.empty()) {
    return make_error(ErrorCode::not_found,
                      "every kernel of stage '" + request.stage +
                          "' is a collective (NCCL or similar), and ncu "
                          "cannot profile collectives: its serial replay hangs them",
                      "select a stage with compute kernels, or profile collectives with nsys only", request.stage);
  }
  const std::size_t count = selected_count(profilable, request, selection);
  std::vector<std::string> names;
  std::int64_t selected_time_ns = 0;
  std::int64_t rarest_selected = INT64_MAX;
  std::set<std::string> selected_names;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& kernel = profilable[i];
    selected_time_ns += kernel.total_time_ns;
    rarest_selected = std::min(rarest_selected, kernel.instances);
    selected_names.insert(kernel.name);
    names.push_back(kernel.name);
    selection.kernels.push_back(make_selected(kernel, request, selection.stage_kernel_time_ns));
  }
  selection.n = selection.kernels.size();
  selection.coverage = selection.stage_kernel_time_ns > 0
                           ? static_cast<double>(selected_time_ns) / static_cast<double>(selection.stage_kernel_time_ns)
                           : 0.0;
  selection.more_coverage = coverage_steps(profilable, selection);
  selection.kernel_regex = kernel_name_regex(names, request.name_base);
  selection.launch_count =
      count > 0 ? launches_to_reach_all(kernels, request, selected_names, rarest_selected, selection) : 0;
  return selection;
}

}  // namespace llmprof
