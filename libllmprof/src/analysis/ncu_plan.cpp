// The per-kernel ncu plan and its check against ncu's rows (see llmprof/ncu_plan.hpp for the design).
#include "llmprof/ncu_plan.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/ncu_plan_counting.hpp"
#include "analysis/ncu_plan_packing.hpp"

namespace llmprof {
namespace {

using detail::Group;
using detail::GroupKey;
using detail::merge_ordinals;
using detail::pass_seconds;
using detail::PassResult;
using detail::PlannedOrdinals;
using detail::Planner;

double planned_mean_ns(const Group& group, const std::vector<std::int64_t>& ordinals) {
  if (ordinals.empty()) return 0;
  double total = 0;
  for (const std::int64_t ordinal : ordinals) total += double(group.durations.at(std::size_t(ordinal - 1)));
  return total / double(ordinals.size());
}

// The pass for `kernels`: the --launch-count of least estimated cost among those that give at least one
// open group its launches. A higher count reaches later launches of a (kernel, configuration) counted together
// with others (namesakes without mangled names, launches_per_config > 1), but profiles more launches of every configuration; a group it leaves open costs another pass (a
// whole replay of the workload under ncu) plus its own launches. None when no count up to the cap makes
// progress: ncu's count of a shared configuration goes to the launches of kernels whose group is done.
std::optional<std::pair<std::int64_t, PassResult>> choose_count(const Planner& planner,
                                                                const std::vector<std::string>& kernels,
                                                                const PlannedOrdinals& planned,
                                                                const NcuPlanOptions& options) {
  const std::set<std::string> set(kernels.begin(), kernels.end());
  const std::size_t open_before = planner.open_groups(kernels, planned).size();
  const std::int64_t base_count = std::max<std::int64_t>(options.launches_per_config, 1);
  std::optional<std::pair<std::int64_t, PassResult>> best;
  double best_cost = 0;
  for (std::int64_t count = base_count; count <= std::max(options.max_launch_count, base_count); ++count) {
    PassResult result = planner.simulate(set, count, planned);
    PlannedOrdinals after = planned;
    merge_ordinals(after, result);
    const auto open = planner.open_groups(kernels, after);
    double cost = pass_seconds(options, result.replayed, planner.stage_launches()) +
                  double(result.profiled) * options.seconds_per_launch;
    if (!open.empty())
      cost += options.seconds_per_pass + double(planner.wanted_launches(open, after)) * options.seconds_per_launch;
    if (open.size() < open_before && (!best || cost < best_cost)) {
      best_cost = cost;
      best.emplace(count, std::move(result));
    }
    if (open.empty()) break;  // higher counts only profile more
  }
  return best;
}

void plan_without_launch_table(const KernelSelection& selection, const NcuPlanOptions& options, NcuPlan& plan) {
  NcuPlanPass pass;
  pass.launch_skip = options.launch_skip;
  pass.launch_count = std::max<std::int64_t>(options.launches_per_config, 1);
  for (const auto& kernel : selection.kernels) {
    PlannedConfig config;
    config.kernel = kernel.name;
    config.stage_launches = kernel.instances;
    config.stage_time_ns = kernel.total_time_ns;
    for (std::int64_t i = options.launch_skip + 1;
         i <= std::min(kernel.instances, options.launch_skip + pass.launch_count); ++i)
      config.ordinals.push_back(i);
    if (config.ordinals.empty()) plan.kernels_unreached.push_back(kernel.name);
    pass.profiled_launches += std::int64_t(config.ordinals.size());
    pass.kernels.push_back(kernel.name);
    plan.configs.push_back(std::move(config));
  }
  plan.passes.push_back(std::move(pass));
}

// Passes planned so far: the passes, the planned ordinals per group, the pass that first profiles each
// group, and the kernels no pass reaches.
struct PlannedPasses {
  std::vector<NcuPlanPass> passes;
  PlannedOrdinals ordinals;
  std::map<GroupKey, std::size_t> first_pass;
  std::vector<std::string> unreached;

  void add(std::vector<std::string> kernels, std::int64_t count, const PassResult& result,
           const NcuPlanOptions& options, std::int64_t stage_launches) {
    NcuPlanPass pass;
    pass.kernels = std::move(kernels);
    pass.launch_skip = options.launch_skip;
    pass.launch_count = count;
    pass.profiled_launches = result.profiled;
    pass.replayed_launches = result.replayed;
    pass.estimated_seconds = double(result.profiled) * options.seconds_per_launch +
                             pass_seconds(options, result.replayed, stage_launches);
    for (const auto& [key, got] : result.ordinals)
      if (!got.empty()) first_pass.emplace(key, passes.size());
    merge_ordinals(ordinals, result);
    passes.push_back(std::move(pass));
  }

  std::vector<std::string> still_open(const Planner& planner, const std::vector<std::string>& kernels) const {
    std::vector<std::string> open;
    for (const auto& kernel : kernels)
      if (!planner.open_groups({kernel}, ordinals).empty()) open.push_back(kernel);
    return open;
  }

  double estimated_seconds() const {
    double seconds = 0;
    for (const auto& pass : passes) seconds += pass.estimated_seconds;
    return seconds;
  }
};

// Passes of the remaining kernels at the cheapest count that makes progress, until no group is open.
void add_progress_passes(const Planner& planner, std::vector<std::string> remaining, const NcuPlanOptions& options,
                         PlannedPasses& planned) {
  while (!remaining.empty()) {
    std::vector<std::string> kernels = remaining;
    auto choice = choose_count(planner, kernels, planned.ordinals, options);
    if (!choice) {
      // The kernels cross each other's configurations (A's first launch of a shared configuration comes first
      // there, B's in another) so that together they reach nothing new: the heaviest one alone does.
      kernels = {remaining.front()};
      choice = choose_count(planner, kernels, planned.ordinals, options);
    }
    if (!choice) {  // namesakes under --kernel-name-base function share its configurations past the cap
      planned.unreached.push_back(remaining.front());
      remaining.erase(remaining.begin());
      continue;
    }
    planned.add(std::move(kernels), choice->first, choice->second, options, planner.stage_launches());
    remaining = planned.still_open(planner, remaining);
  }
}

// Two ways to the same groups, the one of least estimated time kept (fewer kernels left unreached first).
// Progress passes alone keep the remaining kernels together and raise the count: cheapest where collisions
// are few and early (the 1b batch-8 decode: 2 passes, 62 launches, against 168 launches packed). Packing
// first (ncu_plan_packing.hpp), each packed pass's counting replayed and progress passes for what it leaves
// open, wins where kernels block each other (the 1b decode with a 32-token prompt and 192 new tokens:
// 2 passes against 11). Packing assumes --launch-skip 0 and known configurations.
std::string passes_text(const PlannedPasses& planned) {
  std::int64_t launches = 0;
  for (const auto& pass : planned.passes) launches += pass.profiled_launches;
  std::ostringstream text;
  text.precision(3);
  text << planned.passes.size() << " pass(es), " << launches << " launches, estimated " << planned.estimated_seconds()
       << " s";
  return text.str();
}

PlannedPasses plan_passes(const Planner& planner, const std::vector<StageKernelLaunch>& launches,
                          const std::vector<std::string>& remaining, const NcuPlanOptions& options,
                          std::string& choice) {
  PlannedPasses progressive;
  add_progress_passes(planner, remaining, options, progressive);
  if (!planner.configs_known() || options.launch_skip != 0) return progressive;
  // Groups left to extrapolation want no launch: the packer does not raise counts for them.
  std::vector<StageKernelLaunch> packable;
  for (std::size_t i = 0; i < launches.size(); ++i)
    if (!planner.extrapolated_launch(i)) packable.push_back(launches[i]);
  PlannedPasses packed;
  for (const auto& pass : detail::pack_ncu_passes(packable, remaining, options)) {
    const PassResult result = planner.simulate(std::set<std::string>(pass.kernels.begin(), pass.kernels.end()),
                                               pass.launch_count, packed.ordinals);
    packed.add(pass.kernels, pass.launch_count, result, options, planner.stage_launches());
  }
  add_progress_passes(planner, packed.still_open(planner, remaining), options, packed);
  const auto rank = [](const PlannedPasses& candidate) {
    return std::pair{candidate.unreached.size(), candidate.estimated_seconds()};
  };
  const bool packed_wins = rank(packed) < rank(progressive);
  if (passes_text(packed) == passes_text(progressive)) {  // the common case under ncu 2025.3.1's counting
    choice = passes_text(progressive) + " (raising --launch-count and packing kernels into passes agree)";
    return progressive;
  }
  choice = (packed_wins ? "kernels packed into passes where they do not block each other: " + passes_text(packed) +
                              "; chosen over raising --launch-count: " + passes_text(progressive)
                        : "raising --launch-count where counts are shared: " + passes_text(progressive) +
                              "; chosen over kernels packed into passes: " + passes_text(packed));
  return packed_wins ? std::move(packed) : std::move(progressive);
}

// The selected kernels' groups that first appear after every selected kernel has appeared (the horizon):
// profiling one costs the replay up to its first appearance (the copies of a growing-context decode: a new
// grid every few thousand launches). The latest are left to extrapolation while their kernel time stays
// within options.extrapolated_share_limit of the stage's; the others are profiled. Returns the horizon.
std::size_t choose_extrapolated_groups(Planner& planner, const std::vector<std::string>& kernels,
                                       std::int64_t stage_kernel_time_ns, const NcuPlanOptions& options) {
  std::size_t horizon = 0;
  std::vector<std::pair<std::size_t, GroupKey>> candidates;  // (first appearance, group)
  for (const auto& kernel : kernels) {
    std::optional<std::size_t> earliest;
    for (auto it = planner.groups().lower_bound({kernel, ""});
         it != planner.groups().end() && it->first.first == kernel; ++it) {
      earliest = std::min(earliest.value_or(it->second.first_seen), it->second.first_seen);
      candidates.emplace_back(it->second.first_seen, it->first);
    }
    horizon = std::max(horizon, earliest.value_or(0));
  }
  if (!planner.configs_known()) return horizon;
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  const double budget_ns = options.extrapolated_share_limit * double(stage_kernel_time_ns);
  double extrapolated_ns = 0;
  for (const auto& [first_seen, key] : candidates) {
    if (first_seen <= horizon) break;
    const double time_ns = double(planner.groups().at(key).time_ns);
    if (extrapolated_ns + time_ns > budget_ns) continue;
    extrapolated_ns += time_ns;
    planner.extrapolate(key);
  }
  return horizon;
}

void plan_from_launch_table(const KernelSelection& selection, const std::vector<StageKernelLaunch>& launches,
                            const NcuPlanOptions& options, NcuPlan& plan) {
  Planner planner(launches, options);
  plan.stage_launches = planner.stage_launches();
  plan.configs_known = planner.configs_known();
  std::vector<std::string> remaining;
  for (const auto& kernel : selection.kernels) {
    const bool present = planner.groups().lower_bound({kernel.name, ""}) != planner.groups().end() &&
                         planner.groups().lower_bound({kernel.name, ""})->first.first == kernel.name;
    if (!present)
      plan.kernels_without_launches.push_back(kernel.name);
    else if (!planner.reachable(kernel.name))
      plan.kernels_unreached.push_back(kernel.name);
    else
      remaining.push_back(kernel.name);
  }
  const std::size_t horizon = choose_extrapolated_groups(planner, remaining, selection.stage_kernel_time_ns, options);
  PlannedPasses planned = plan_passes(planner, launches, remaining, options, plan.pass_choice);
  plan.passes = std::move(planned.passes);
  plan.kernels_unreached.insert(plan.kernels_unreached.end(), planned.unreached.begin(), planned.unreached.end());
  for (const auto& kernel : selection.kernels) {
    std::vector<std::pair<const GroupKey*, const Group*>> groups;
    for (auto it = planner.groups().lower_bound({kernel.name, ""});
         it != planner.groups().end() && it->first.first == kernel.name; ++it)
      groups.emplace_back(&it->first, &it->second);
    std::sort(groups.begin(), groups.end(),
              [](const auto& a, const auto& b) { return a.second->first_seen < b.second->first_seen; });
    for (const auto& [key, group] : groups) {
      PlannedConfig config;
      config.kernel = kernel.name;
      config.config = group->config;
      config.group = key->second;
      config.group_configs = std::max<std::int64_t>(std::int64_t(group->configs.size()), 1);
      config.first_launch = std::int64_t(group->first_seen);
      config.late = group->first_seen > horizon;
      config.grid = group->grid;
      config.block = group->block;
      config.stage_launches = group->launches;
      config.stage_time_ns = group->time_ns;
      if (const auto found = planned.ordinals.find(*key); found != planned.ordinals.end())
        config.ordinals.assign(found->second.begin(), found->second.end());
      config.planned_mean_ns = planned_mean_ns(*group, config.ordinals);
      if (const auto found = planned.first_pass.find(*key); found != planned.first_pass.end())
        config.pass = found->second;
      plan.configs.push_back(std::move(config));
    }
  }
}

}  // namespace

NcuPlan plan_ncu_launches(const KernelSelection& selection, const std::vector<StageKernelLaunch>& launches,
                          const NcuPlanOptions& options) {
  // The plan records the selection and the costs it was made with, field by field, for ncu/plan.json
  // (copies between two types look alike to the duplicates tool by shape only).
  NcuPlan plan;
  plan.stage = selection.stage;
  plan.stage_kernel_time_ns = selection.stage_kernel_time_ns;
  plan.selection_coverage = selection.coverage;
  plan.seconds_per_launch = options.seconds_per_launch;
  plan.seconds_per_launch_source = options.seconds_per_launch_source;
  plan.seconds_per_pass = options.seconds_per_pass;
  plan.seconds_per_pass_source = options.seconds_per_pass_source;
  plan.seconds_per_intercepted_launch = options.seconds_per_intercepted_launch;
  plan.start_up_seconds = options.start_up_seconds;
  if (launches.empty()) {
    plan.configs_known = false;
    plan_without_launch_table(selection, options, plan);
  } else {
    plan_from_launch_table(selection, launches, options, plan);
  }
  for (const auto& launch : launches) {
    if (launch.mangled.empty()) continue;
    auto& names = plan.mangled_names[launch.kernel];
    if (std::find(names.begin(), names.end(), launch.mangled) == names.end()) names.push_back(launch.mangled);
  }
  // Each pass's regex matches exactly its kernels (and, by function name, their namesakes).
  for (auto& pass : plan.passes) {
    NcuKernelFilter filter = ncu_kernel_filter(plan, pass.kernels, options.name_base);
    pass.kernel_regex = std::move(filter.kernel_regex);
    pass.by_mangled_name = filter.by_mangled_name;
    if (launches.empty())
      pass.estimated_seconds = double(pass.profiled_launches) * plan.seconds_per_launch + plan.seconds_per_pass;
    plan.planned_launches += pass.profiled_launches;
    plan.estimated_seconds += pass.estimated_seconds;
  }
  detail::assign_extrapolation_sources(plan);
  std::int64_t measured_ns = 0, extrapolated_ns = 0;
  for (const auto& config : plan.configs) {
    if (!config.ordinals.empty()) measured_ns += config.stage_time_ns;
    if (!config.extrapolated_from.empty()) extrapolated_ns += config.stage_time_ns;
  }
  const auto share = [&plan](std::int64_t ns) {
    return plan.stage_kernel_time_ns > 0 ? double(ns) / double(plan.stage_kernel_time_ns) : 0.0;
  };
  plan.expected_coverage = share(measured_ns);
  plan.expected_coverage_extrapolated = share(extrapolated_ns);
  detail::judge_representativeness(plan);
  return plan;
}

}  // namespace llmprof

namespace llmprof {

std::vector<std::size_t> fit_candidates(const KernelSelection& selection, const NcuPlan& plan) {
  std::map<std::string, std::int64_t> planned;
  for (const auto& config : plan.configs) planned[config.kernel] += std::int64_t(config.ordinals.size());
  std::vector<std::pair<double, std::size_t>> by_value;  // kernel time per planned launch, index
  for (std::size_t i = 0; i < selection.kernels.size(); ++i) {
    const auto found = planned.find(selection.kernels[i].name);
    if (found == planned.end() || found->second == 0) continue;
    by_value.emplace_back(double(selection.kernels[i].total_time_ns) / double(found->second), i);
  }
  std::sort(by_value.begin(), by_value.end());
  std::set<std::size_t> candidates;
  for (std::size_t i = 0; i < by_value.size() && i < kFitCandidatesByLaunch; ++i) candidates.insert(by_value[i].second);
  for (const auto& pass : plan.passes) {
    if (pass.kernels.size() != 1) continue;
    for (std::size_t i = 0; i < selection.kernels.size(); ++i)
      if (selection.kernels[i].name == pass.kernels.front()) candidates.insert(i);
  }
  return {candidates.begin(), candidates.end()};
}

NcuPlan fit_ncu_plan(const KernelSelection& selection, const std::vector<StageKernelLaunch>& launches,
                     const NcuPlanOptions& options, double max_seconds) {
  NcuPlan plan = plan_ncu_launches(selection, launches, options);
  if (max_seconds <= 0 || plan.estimated_seconds <= max_seconds) return plan;
  const double unbounded_seconds = plan.estimated_seconds;
  const double unbounded_coverage = plan.expected_coverage;
  KernelSelection kept = selection;
  std::vector<std::string> left_out;
  while (plan.estimated_seconds > max_seconds && kept.kernels.size() > 1) {
    // The kernel whose leaving out gives up the least kernel time per second of estimate saved: a kernel alone
    // in a pass saves the pass's replay too (the flat serving decode's second pass: 1 launch, 10.8 s), which a
    // rule by launches alone would not see. The plan is made again only for the candidates
    // (fit_candidates): ~40 ms a plan of the 3,640-launch serving window in a debug build.
    std::optional<std::pair<std::size_t, NcuPlan>> best;
    double best_cost = 0;
    for (const std::size_t i : fit_candidates(kept, plan)) {
      KernelSelection without = kept;
      without.coverage -= without.kernels[i].share;
      without.kernels.erase(without.kernels.begin() + std::ptrdiff_t(i));
      NcuPlan candidate = plan_ncu_launches(without, launches, options);
      const double saved = plan.estimated_seconds - candidate.estimated_seconds;
      if (saved <= 0) continue;
      const double cost = double(kept.kernels[i].total_time_ns) / saved;
      if (!best || cost < best_cost) {
        best_cost = cost;
        best.emplace(i, std::move(candidate));
      }
    }
    if (!best) break;  // no kernel's leaving out saves time
    left_out.push_back(kept.kernels[best->first].name);
    kept.coverage -= kept.kernels[best->first].share;
    kept.kernels.erase(kept.kernels.begin() + std::ptrdiff_t(best->first));
    plan = std::move(best->second);
  }
  plan.max_seconds = max_seconds;
  plan.left_out_for_time = std::move(left_out);
  plan.unbounded_estimated_seconds = unbounded_seconds;
  plan.unbounded_expected_coverage = unbounded_coverage;
  return plan;
}

}  // namespace llmprof
