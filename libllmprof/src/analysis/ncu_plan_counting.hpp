// ncu's launch counting replayed over a stage's kernel launches (nsys's launch table): the launch groups of the
// selected kernels and the Planner that says what a candidate pass (kernels, --launch-count) would profile.
// The per-kernel plan (ncu_plan.cpp) searches over passes with it; see llmprof/ncu_plan.hpp for the design.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "llmprof/ncu_plan.hpp"

namespace llmprof::detail {

using GroupKey = std::pair<std::string, std::string>;  // (kernel, configuration key)

struct Group {
  std::int64_t launches = 0;
  std::int64_t time_ns = 0;
  std::string grid, block, config;  // of its first launch
  std::set<std::string> configs;    // exact configurations
  std::size_t first_seen = 0;
  bool extrapolate = false;  // left to extrapolation by choice: wants no launch
  std::vector<std::int64_t> durations;  // nsys durations in launch order: ordinal i is durations[i - 1]
};

struct PassResult {
  std::map<GroupKey, std::vector<std::int64_t>> ordinals;
  std::int64_t profiled = 0;
  std::int64_t replayed = 0;  // stage launches up to the pass's last needed launch, where it ends its workload
};

// Every pass's ordinals so far, per group: the same ordinal in two passes is the same launch.
using PlannedOrdinals = std::map<GroupKey, std::set<std::int64_t>>;

// A pass that ends its workload after `replayed` of the stage's launches spares ncu's interception of the rest.
double pass_seconds(const NcuPlanOptions& options, std::int64_t replayed, std::int64_t stage_launches);
// Adds a pass's ordinals to those planned so far.
void merge_ordinals(PlannedOrdinals& planned, const PassResult& result);

// The stage's launches indexed once, its kernels grouped by configuration, and ncu's counting of a pass
// replayed over them: what the plan's search asks of every candidate pass.
class Planner {
 public:
  Planner(const std::vector<StageKernelLaunch>& launches, const NcuPlanOptions& options);

  bool configs_known() const { return configs_known_; }
  const std::map<GroupKey, Group>& groups() const { return groups_; }
  std::int64_t stage_launches() const { return std::int64_t(launches_.size()); }
  void extrapolate(const GroupKey& key) { groups_.at(key).extrapolate = true; }
  bool extrapolated_launch(std::size_t index) const { return group_of_id_[launches_[index].group]->extrapolate; }

  // Without configurations every kernel counts as its own: collisions cannot be told. With them, a kernel's
  // configurations are grouped by grid bucket (launch_group_key), while ncu counts exact ones.
  std::string config_key(const StageKernelLaunch& launch) const;

  // ncu's counting replayed: launches whose kernel the pass matches, counted per function in each exact
  // configuration (ncu_counting_key; ncu 2025.3.1 --filter-mode per-launch-config), the ones past --launch-skip up to --launch-count profiled, until
  // the launch that gives the last group it helps (of those `planned` leaves open) its last wanted launch: there
  // the pass ends its workload. The whole stage when it helps none.
  PassResult simulate(const std::set<std::string>& kernels, std::int64_t count, const PlannedOrdinals& planned) const;

  // The launches a group can have: launches_per_config, fewer when it has fewer past the skip.
  std::int64_t want(const Group& group) const;

  // The groups of `kernels` that the launches planned so far leave short of what they want.
  std::vector<GroupKey> open_groups(const std::vector<std::string>& kernels, const PlannedOrdinals& planned) const;

  // Launches the open groups still want, were each profiled on its own.
  std::int64_t wanted_launches(const std::vector<GroupKey>& open, const PlannedOrdinals& planned) const;

  // Whether any launch of `kernel` lies past --launch-skip.
  bool reachable(const std::string& kernel) const;

 private:
  struct IndexedLaunch {
    std::size_t kernel, match, config, group;  // indices: kernel_names_, match keys, counted-as keys, group_keys_
  };
  const NcuPlanOptions& options_;
  bool configs_known_ = false;
  std::map<GroupKey, Group> groups_;
  std::vector<IndexedLaunch> launches_;
  std::vector<std::string> kernel_names_;
  std::vector<std::size_t> match_of_kernel_;
  std::vector<GroupKey> group_keys_;
  std::vector<const Group*> group_of_id_;
  std::size_t match_count_ = 0, config_count_ = 0;
};

}  // namespace llmprof::detail
