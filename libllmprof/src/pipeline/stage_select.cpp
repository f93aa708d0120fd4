// Stage "select": the top-N kernels of the chosen NVTX stage from the nsys tables, their coverage,
// and the ncu --kernel-name regex with a launch bound that reaches each of them.
#include <boost/json.hpp>
#include <sstream>

#include "pipeline/deep_profiler_internal.hpp"
#include "core/json_pretty.hpp"
#include "llmprof/kernel_selection.hpp"

namespace llmprof::detail {
namespace {

constexpr const char* kStage = "select";

std::string selection_json(const KernelSelection& selection, std::int64_t launch_count) {
  boost::json::array kernels;
  for (const auto& kernel : selection.kernels) {
    kernels.push_back({{"name", kernel.name}, {"match_name", kernel.match_name}, {"total_time_ns", kernel.total_time_ns},
                       {"instances", kernel.instances}, {"share", kernel.share}});
  }
  boost::json::array also;
  for (const auto& name : selection.also_matched) also.push_back(boost::json::value(name));
  const boost::json::value document = {
      {"schema", "llmprof.kernel_selection/1"}, {"stage", selection.stage}, {"domain", selection.domain},
      {"source", selection.source}, {"name_base", to_string(selection.name_base)}, {"coverage", selection.coverage},
      {"stage_kernel_time_ns", selection.stage_kernel_time_ns}, {"stage_kernel_count", selection.stage_kernel_count},
      {"kernel_regex", selection.kernel_regex}, {"launch_count", launch_count}, {"kernels", kernels}, {"also_matched", also}};
  return boost::json::serialize(document);
}

std::string selection_log(const KernelSelection& selection) {
  std::ostringstream text;
  text.precision(3);
  text << "stage " << selection.stage << " (" << selection.source << "): " << selection.kernels.size() << " of "
       << selection.stage_kernel_count << " kernels, coverage " << selection.coverage * 100 << "% of the stage's kernel time\n";
  for (const auto& kernel : selection.kernels) {
    text << "  " << kernel.share * 100 << "%  x" << kernel.instances << "  " << kernel.name << "\n";
  }
  text << "ncu --kernel-name " << selection.kernel_regex << "\n";
  return text.str();
}

Result<KernelNameBase> name_base(NcuKernelNameBase configured) {
  if (auto base = selection_name_base(configured)) return *base;
  const std::string name(choice_name(configured));
  return make_error(ErrorCode::unsupported, "top-N selection cannot build a kernel regex for ncu.kernel_name_base=" + name,
                    "use ncu.kernel_name_base=demangled or function, or give ncu.kernel_regex yourself", name);
}

// The selection's bound, raised for launches_per_kernel and capped by ncu.max_launches.
std::int64_t launch_bound(PipelineRun& run, const KernelSelection& selection) {
  const auto& ncu = run.config.ncu;
  std::int64_t wanted = selection.launch_count + std::max<std::int64_t>(ncu.launches_per_kernel, 1) - 1;
  if (ncu.max_launches > 0 && wanted > ncu.max_launches) {
    run.warn(kStage, "the selection needs --launch-count " + std::to_string(wanted) + " to reach every kernel; capped at ncu.max_launches=" +
                         std::to_string(ncu.max_launches) + ", so the rarest kernels may not be profiled");
    wanted = ncu.max_launches;
  }
  return wanted;
}

}  // namespace

std::optional<KernelNameBase> selection_name_base(NcuKernelNameBase base) {
  switch (base) {
    case NcuKernelNameBase::demangled: return KernelNameBase::demangled;
    case NcuKernelNameBase::function: return KernelNameBase::function;
    case NcuKernelNameBase::mangled: return std::nullopt;
  }
  return std::nullopt;
}

Staged<SelectOutput> run_select_stage(PipelineRun& run, const NsysOutput& nsys) {
  SelectOutput output;
  if (!run.config.ncu.kernel_regex.empty()) {
    output.kernel_regex = run.config.ncu.kernel_regex;
    return {StageResult::skipped("ncu.kernel_regex is set, so ncu uses it as given"), std::move(output)};
  }
  if (!run.config.run.enable_ncu) return StageResult::skipped("ncu is disabled (run.enable_ncu = false), nothing to select for");
  if (!nsys.stats) return StageResult::skipped("no nsys tables to select from (see the nsys stage)");
  // Not a failure: a machine without a GPU runs no kernel, so there is nothing to select.
  if (nsys.no_kernels_without_gpu) return StageResult::skipped(*nsys.no_kernels_without_gpu);
  auto base = name_base(run.config.ncu.kernel_name_base);
  if (!base) return StageResult::failed(base.error().describe());
  TopKernelRequest request;
  request.stage = run.config.run.stage;
  request.n = static_cast<std::size_t>(std::max(run.config.run.top_n_kernels, 1));
  request.name_base = base.value();
  request.capture_gated_on_stage = nsys.gate && *nsys.gate == run.config.run.stage;
  auto selection = select_top_kernels(nsys.stats.value(), request);
  if (!selection) return StageResult::failed(selection.error().describe());
  const std::int64_t launches = launch_bound(run, selection.value());
  output.kernel_regex = selection->kernel_regex;
  output.launch_bound = launches;
  for (const auto& kernel : selection->kernels) output.selected_kernels.push_back(kernel.name);
  StageRecord& record = run.record(kStage);
  if (auto written = run.directory.write_json(RunLayout::kernel_selection(), selection_json(selection.value(), launches)); written) {
    record.artifacts.push_back(RunLayout::kernel_selection().string());
  } else {
    run.warn(kStage, written.error().describe());
  }
  if (auto written = run.directory.write_text(RunLayout::select_log(), selection_log(selection.value())); written) {
    record.log_file = RunLayout::select_log().string();
  }
  std::ostringstream message;
  message.precision(3);
  message << "top " << selection->kernels.size() << " kernels of " << selection->stage << " cover " << selection->coverage * 100
          << "% of its kernel time";
  run.say(kStage, message.str());
  return {StageResult::ok(), std::move(output)};
}

}  // namespace llmprof::detail
