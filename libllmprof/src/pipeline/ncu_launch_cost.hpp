// The runs root's record of what ncu cost (runs_root/ncu-launch-cost.json): per ncu set and command, the cost per
// profiled launch and what ncu added to the start-up the nsys capture measured. The next plan of the same command
// estimates with its own figures; a command the runs root has not seen plans with the configuration's
// (ncu.seconds_per_launch, ncu.start_up_overhead_s: a preset's own figures for its workloads). Both figures are the
// workload's: on the H200 a launch cost 0.55-0.59 s for the 1b example and 0.88-0.99 s for the serving example,
// and another command's figure planned the 25 s start-up decode at 0.88 s a launch against its own 0.55.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "llmprof/ncu_plan.hpp"

namespace llmprof::detail {

struct NcuLaunchCost {
  std::string set;       // ncu --set the figures belong to
  std::string workload;  // the command, its argv joined by spaces
  std::string run;       // the run that measured them
  double seconds_per_launch = 0;
  std::optional<double> start_up_overhead_s;
};

struct MeasuredNcuCost {
  double seconds_per_launch = 0;
  std::optional<double> start_up_overhead_s;  // only from a run of the same command
  std::string source;                         // "measured by run <id> of this command"
};

// What the record says for this set and command; nullopt without a usable figure (no file, no entry of this set and
// command, a file this version cannot read: the estimate then uses the configuration's figures, and the next run
// adds its entry).
std::optional<MeasuredNcuCost> find_ncu_launch_cost(const std::filesystem::path& file, const std::string& set,
                                                    const std::string& workload);

// Adds or replaces the entry of (set, workload), keeping the most recent 64 entries. Best effort: a runs root that
// cannot take the file only loses the next estimate's precision, so a failure is returned for a warning.
bool record_ncu_launch_cost(const std::filesystem::path& file, const NcuLaunchCost& cost);

// ncu's cost per profiled launch and what it adds to the start-up the nsys capture measured, from the plan
// passes' timings: a pass's time after its first progress line is its launches' (profiling, the interception
// between them, the workload's end), the time before it the start-up. Additive, not a ratio: on the H200 ncu
// added 12-16 s to the 1b example's 3.9 s and 14.2 s to the same decode after 25 s of loading (31.6 s), its
// injection and the interception of the warm-up's launches, where a ratio learnt on one (x4.3) planned the
// other at 189 s a pass. Without timings, what ncu spent beyond one replay per pass, per row.
struct NcuCostMeasurement {
  std::optional<double> seconds_per_launch;
  std::optional<double> start_up_overhead_s;
};

NcuCostMeasurement measure_ncu_cost(const NcuPlan& plan, const NcuPlanCheck& check, double stage_s);

}  // namespace llmprof::detail
