// ncu's launch counting replayed over a stage's launches (see ncu_plan_counting.hpp).
#include "analysis/ncu_plan_counting.hpp"

#include <algorithm>
#include <optional>

namespace llmprof::detail {
namespace {

// What a pass's --kernel-name regex matches: the demangled name, or its function name under
// --kernel-name-base function (where unselected kernels sharing the function name match too, and are
// profiled under their own counts).
std::string match_key(const std::string& name, KernelNameBase base) {
  return base == KernelNameBase::function ? kernel_function_name(name) : name;
}

}  // namespace

double pass_seconds(const NcuPlanOptions& options, std::int64_t replayed, std::int64_t stage_launches) {
  const double spared = double(std::max<std::int64_t>(stage_launches - replayed, 0)) * options.seconds_per_intercepted_launch;
  return std::max(options.seconds_per_pass - spared, 0.0);
}

void merge_ordinals(PlannedOrdinals& planned, const PassResult& result) {
  for (const auto& [key, got] : result.ordinals) planned[key].insert(got.begin(), got.end());
}

Planner::Planner(const std::vector<StageKernelLaunch>& launches, const NcuPlanOptions& options)
    : options_(options) {
  configs_known_ = std::any_of(launches.begin(), launches.end(), [](const auto& l) { return !l.grid.empty(); });
  // Names and configurations become indices once: simulate() replays ncu's counting over a stage of
  // 100,000-200,000 launches for every candidate count (a 1b decode on the H100: 155,712 launches).
  std::map<std::string, std::size_t> kernel_ids, match_ids, config_ids;
  std::map<GroupKey, std::size_t> group_ids;
  launches_.reserve(launches.size());
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const StageKernelLaunch& launch = launches[i];
    const std::string key = config_key(launch);
    Group& group = groups_[{launch.kernel, key}];
    if (group.launches++ == 0) {
      group.first_seen = i;
      group.grid = launch.grid;
      group.block = launch.block;
      if (configs_known_) group.config = launch_config_key(launch);
    }
    if (configs_known_ && group.configs.size() < 64) group.configs.insert(launch_config_key(launch));
    group.time_ns += launch.duration_ns;
    group.durations.push_back(launch.duration_ns);
    const auto [kernel_id, new_kernel] = kernel_ids.try_emplace(launch.kernel, kernel_names_.size());
    if (new_kernel) kernel_names_.push_back(launch.kernel);
    const auto match_id =
        match_ids.try_emplace(match_key(launch.kernel, options_.name_base), match_ids.size()).first->second;
    // Unknown configurations: each kernel is counted on its own (the plan cannot do better).
    const std::string counted_as = configs_known_ ? ncu_counting_key(launch) : launch.kernel;
    const auto config_id = config_ids.try_emplace(counted_as, config_ids.size()).first->second;
    const auto [group_id, new_group] = group_ids.try_emplace({launch.kernel, key}, group_keys_.size());
    if (new_group) group_keys_.push_back({launch.kernel, key});
    launches_.push_back({kernel_id->second, match_id, config_id, group_id->second});
  }
  match_of_kernel_.resize(kernel_names_.size());
  for (std::size_t kernel = 0; kernel < kernel_names_.size(); ++kernel)
    match_of_kernel_[kernel] = match_ids.at(match_key(kernel_names_[kernel], options_.name_base));
  match_count_ = match_ids.size();
  config_count_ = config_ids.size();
  for (const auto& key : group_keys_) group_of_id_.push_back(&groups_.at(key));
}

std::string Planner::config_key(const StageKernelLaunch& launch) const {
  return configs_known_ ? launch_group_key(launch) : std::string();
}

PassResult Planner::simulate(const std::set<std::string>& kernels, std::int64_t count, const PlannedOrdinals& planned) const {
  std::vector<bool> in_pass(kernel_names_.size(), false), matching(match_count_, false);
  for (std::size_t kernel = 0; kernel < kernel_names_.size(); ++kernel)
    if (kernels.contains(kernel_names_[kernel])) {
      in_pass[kernel] = true;
      matching[match_of_kernel_[kernel]] = true;
    }
  struct Hit {
    std::size_t index;
    std::size_t group;  // npos: a namesake outside the pass's kernels
    std::int64_t ordinal;
  };
  constexpr std::size_t npos = std::size_t(-1);
  std::vector<Hit> hits;
  std::vector<std::int64_t> per_config(config_count_, 0), per_group(group_keys_.size(), 0);
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    const IndexedLaunch& launch = launches_[i];
    if (!matching[launch.match]) continue;
    const std::int64_t seen = ++per_config[launch.config];
    const std::int64_t ordinal = ++per_group[launch.group];
    if (seen <= options_.launch_skip || seen > options_.launch_skip + count) continue;
    hits.push_back({i, in_pass[launch.kernel] ? launch.group : npos, ordinal});
  }
  std::vector<std::optional<std::int64_t>> missing(group_keys_.size());
  std::optional<std::size_t> last_needed;
  for (const Hit& hit : hits) {
    if (hit.group == npos) continue;
    const auto done = planned.find(group_keys_[hit.group]);
    if (done != planned.end() && done->second.contains(hit.ordinal)) continue;
    auto& left = missing[hit.group];
    if (!left)
      left = want(*group_of_id_[hit.group]) - std::int64_t(done == planned.end() ? 0 : done->second.size());
    if (*left <= 0) continue;
    --*left;
    last_needed = hit.index;
  }
  PassResult result;
  result.replayed = last_needed ? std::int64_t(*last_needed) + 1 : stage_launches();
  for (const Hit& hit : hits) {
    if (std::int64_t(hit.index) >= result.replayed) break;
    ++result.profiled;
    if (hit.group != npos) result.ordinals[group_keys_[hit.group]].push_back(hit.ordinal);
  }
  return result;
}

std::int64_t Planner::want(const Group& group) const {
  if (group.extrapolate) return 0;
  return std::min(options_.launches_per_config, std::max<std::int64_t>(group.launches - options_.launch_skip, 0));
}

std::vector<GroupKey> Planner::open_groups(const std::vector<std::string>& kernels, const PlannedOrdinals& planned) const {
  std::vector<GroupKey> open;
  for (const auto& kernel : kernels)
    for (auto it = groups_.lower_bound({kernel, ""}); it != groups_.end() && it->first.first == kernel; ++it) {
      const auto got = planned.find(it->first);
      if (std::int64_t(got == planned.end() ? 0 : got->second.size()) < want(it->second)) open.push_back(it->first);
    }
  return open;
}

std::int64_t Planner::wanted_launches(const std::vector<GroupKey>& open, const PlannedOrdinals& planned) const {
  std::int64_t total = 0;
  for (const auto& key : open) {
    const auto got = planned.find(key);
    total += want(groups_.at(key)) - std::int64_t(got == planned.end() ? 0 : got->second.size());
  }
  return total;
}

bool Planner::reachable(const std::string& kernel) const {
  for (auto it = groups_.lower_bound({kernel, ""}); it != groups_.end() && it->first.first == kernel; ++it)
    if (it->second.launches > options_.launch_skip) return true;
  return false;
}

}  // namespace llmprof::detail
