// The runs root's record of what ncu cost (runs_root/ncu-launch-cost.json): per ncu set and command, the cost per
// profiled launch and what ncu added to the start-up the nsys capture measured. The next plan of the same command
// estimates with its own figures; a command the runs root has not seen takes the cost per launch of the last run
// with the same set (its start-up overhead is the workload's own, so it is never carried across commands).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

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
  std::string source;                         // "measured by run <id> of this command" / "... of `<command>`"
};

// What the record says for this set and command; nullopt without a usable figure (no file, another set, a file
// this version cannot read: the estimate then uses the configuration's figures, and the next run rewrites it).
std::optional<MeasuredNcuCost> find_ncu_launch_cost(const std::filesystem::path& file, const std::string& set,
                                                    const std::string& workload);

// Adds or replaces the entry of (set, workload), keeping the most recent 64 entries. Best effort: a runs root that
// cannot take the file only loses the next estimate's precision, so a failure is returned for a warning.
bool record_ncu_launch_cost(const std::filesystem::path& file, const NcuLaunchCost& cost);

}  // namespace llmprof::detail
