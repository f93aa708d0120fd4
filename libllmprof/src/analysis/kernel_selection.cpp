// Top-N kernel selection inside a stage from nvtx_kern_sum (or a stage-gated cuda_gpu_kern_sum).
#include "llmprof/kernel_selection.hpp"

#include <algorithm>
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
                      "stage '" + request.stage + "' has no kernels in nvtx_kern_sum; stages with kernels: " +
                          quoted_list(stages_present),
                      "choose one of those stages, or check that the workload emits the NVTX range '" +
                          request.stage + "' around its GPU work",
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
    return make_error(ErrorCode::not_found,
                      "neither nvtx_kern_sum nor cuda_gpu_kern_sum is available to select kernels of stage '" +
                          request.stage + "'",
                      "run nsys stats with --report cuda_gpu_kern_sum,nvtx_kern_sum", request.stage);
  }
  domain = request.domain.value_or("");
  if (stats.ranges) {
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
                        "the capture is said to be gated on stage '" + request.stage +
                            "', but nvtx_sum records only " + quoted_list(present),
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
    return make_error(ErrorCode::not_found, "cuda_gpu_kern_sum holds no kernels for the gated stage '" +
                                                request.stage + "'",
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

}  // namespace

Result<KernelSelection> select_top_kernels(const NsysStats& stats, const TopKernelRequest& request) {
  if (request.n == 0) {
    return make_error(ErrorCode::invalid_argument, "top-kernel selection asked for 0 kernels",
                      "ask for at least one kernel", "n");
  }
  KernelSelection selection;
  selection.stage = request.stage;
  selection.name_base = request.name_base;

  Result<std::vector<StageKernel>> stage_kernels = std::vector<StageKernel>{};
  if (request.capture_gated_on_stage && !has_stage_rows(stats, request)) {
    stage_kernels = kernels_from_gated_capture(stats, request, selection.domain);
    selection.source = "cuda_gpu_kern_sum (capture gated on the stage)";
  } else if (stats.range_kernels) {
    stage_kernels = kernels_from_range_table(stats, request, selection.domain);
    selection.source = "nvtx_kern_sum";
  } else {
    return make_error(ErrorCode::not_found,
                      "nvtx_kern_sum is not available, so the kernels of stage '" + request.stage +
                          "' cannot be told apart from the rest of the run",
                      "run nsys stats with --report nvtx_kern_sum (nsys profile --trace=cuda,nvtx), or, when the "
                      "capture was gated on the stage, say so (capture_gated_on_stage)",
                      request.stage);
  }
  if (!stage_kernels) return stage_kernels.error();
  auto kernels = std::move(stage_kernels).value();

  std::sort(kernels.begin(), kernels.end(), [](const StageKernel& a, const StageKernel& b) {
    return a.total_time_ns != b.total_time_ns ? a.total_time_ns > b.total_time_ns : a.name < b.name;
  });
  for (const auto& kernel : kernels) {
    selection.stage_kernel_time_ns += kernel.total_time_ns;
    selection.stage_kernel_instances += kernel.instances;
  }
  selection.stage_kernel_count = kernels.size();

  const std::size_t count = std::min(request.n, kernels.size());
  std::vector<std::string> names;
  std::int64_t selected_time_ns = 0;
  std::int64_t rarest_selected = INT64_MAX;
  std::set<std::string> selected_forms;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& kernel = kernels[i];
    SelectedKernel selected;
    selected.name = kernel.name;
    selected.match_name = request.name_base == KernelNameBase::function ? kernel_function_name(kernel.name)
                                                                         : kernel.name;
    selected.total_time_ns = kernel.total_time_ns;
    selected.instances = kernel.instances;
    selected.share = selection.stage_kernel_time_ns > 0 ? static_cast<double>(kernel.total_time_ns) /
                                                              static_cast<double>(selection.stage_kernel_time_ns)
                                                        : 0.0;
    selected_time_ns += kernel.total_time_ns;
    rarest_selected = std::min(rarest_selected, kernel.instances);
    selected_forms.insert(match_form(kernel.name, request.name_base));
    names.push_back(kernel.name);
    selection.kernels.push_back(std::move(selected));
  }
  selection.coverage = selection.stage_kernel_time_ns > 0 ? static_cast<double>(selected_time_ns) /
                                                                static_cast<double>(selection.stage_kernel_time_ns)
                                                          : 0.0;
  selection.kernel_regex = kernel_name_regex(names, request.name_base);

  // Every launch the regex lets through counts toward --launch-count, so unselected kernels with
  // the same match form (function base) count too.
  std::int64_t matching_launches = 0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (i >= count && !selected_forms.count(match_form(kernels[i].name, request.name_base))) continue;
    if (i >= count) selection.also_matched.push_back(kernels[i].name);
    matching_launches += kernels[i].instances;
  }
  selection.launch_count = count > 0 ? matching_launches - rarest_selected + 1 : 0;
  return selection;
}

}  // namespace llmprof
