// Schema llmprof.ncu_launch_cost/2: {"schema", "entries": [{set, workload, run, seconds_per_launch,
// start_up_overhead_s?}, ...]}, oldest first. /1 (one run's figures at the top level) is read as one entry.
// Per command (ncu_launch_cost.hpp says why).
#include "pipeline/ncu_launch_cost.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/file_text.hpp"
#include "core/json_fields.hpp"

namespace llmprof::detail {
namespace {

constexpr std::size_t kMaxEntries = 64;

std::optional<double> positive_or_zero(const boost::json::value* value) {
  if (!value || !value->is_number()) return std::nullopt;
  const double number = value->to_number<double>();
  if (!std::isfinite(number) || number < 0) return std::nullopt;
  return number;
}

std::string string_field(const boost::json::object& object, std::string_view key) {
  const auto* value = object.if_contains(key);
  return value && value->is_string() ? std::string(value->as_string()) : std::string();
}

// An entry without a positive cost per launch or a set is skipped: it can plan nothing.
std::optional<NcuLaunchCost> entry_from(const boost::json::object& object) {
  NcuLaunchCost cost;
  cost.set = string_field(object, "set");
  cost.workload = string_field(object, "workload");
  cost.run = string_field(object, "run");
  const auto seconds = positive_or_zero(object.if_contains("seconds_per_launch"));
  if (cost.set.empty() || !seconds || *seconds <= 0) return std::nullopt;
  cost.seconds_per_launch = *seconds;
  // Written only beside the command it belongs to (in /1 too).
  if (!cost.workload.empty()) cost.start_up_overhead_s = positive_or_zero(object.if_contains("start_up_overhead_s"));
  return cost;
}

std::vector<NcuLaunchCost> read_entries(const std::filesystem::path& file) {
  std::vector<NcuLaunchCost> entries;
  const std::string text = read_text(file);
  if (text.empty()) return entries;
  auto object = parse_json_object(text, file);
  if (!object) return entries;
  const std::string schema = string_field(*object, "schema");
  if (schema == "llmprof.ncu_launch_cost/1") {
    if (auto entry = entry_from(*object)) entries.push_back(std::move(*entry));
  } else if (schema == "llmprof.ncu_launch_cost/2") {
    const auto* list = object->if_contains("entries");
    if (!list || !list->is_array()) return entries;
    for (const auto& value : list->as_array())
      if (value.is_object())
        if (auto entry = entry_from(value.as_object())) entries.push_back(std::move(*entry));
  }
  return entries;
}

}  // namespace

std::optional<MeasuredNcuCost> find_ncu_launch_cost(const std::filesystem::path& file, const std::string& set,
                                                    const std::string& workload) {
  const std::vector<NcuLaunchCost> entries = read_entries(file);
  for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry)
    if (entry->set == set && entry->workload == workload && !workload.empty())
      return MeasuredNcuCost{entry->seconds_per_launch, entry->start_up_overhead_s,
                             "measured by run " + entry->run + " of this command"};
  return std::nullopt;
}

bool record_ncu_launch_cost(const std::filesystem::path& file, const NcuLaunchCost& cost) {
  std::vector<NcuLaunchCost> entries = read_entries(file);
  std::erase_if(entries, [&](const NcuLaunchCost& entry) {
    return entry.set == cost.set && entry.workload == cost.workload;
  });
  entries.push_back(cost);
  if (entries.size() > kMaxEntries) entries.erase(entries.begin(), entries.end() - kMaxEntries);
  boost::json::array list;
  for (const auto& entry : entries) {
    boost::json::object object{{"set", entry.set},
                               {"workload", entry.workload},
                               {"run", entry.run},
                               {"seconds_per_launch", entry.seconds_per_launch}};
    if (entry.start_up_overhead_s) object["start_up_overhead_s"] = *entry.start_up_overhead_s;
    list.push_back(std::move(object));
  }
  const boost::json::object document{{"schema", "llmprof.ncu_launch_cost/2"}, {"entries", std::move(list)}};
  return static_cast<bool>(write_file_atomically(file, boost::json::serialize(document) + "\n"));
}

NcuCostMeasurement measure_ncu_cost(const NcuPlan& plan, const NcuPlanCheck& check, double stage_s) {
  NcuCostMeasurement measured;
  double after_first_s = 0;
  double first_s = 0;
  std::int64_t timed = 0;
  for (const auto& timing : check.pass_timings) {
    if (!timing.first_launch_seconds) continue;
    after_first_s += std::max(timing.measured_seconds - *timing.first_launch_seconds, 0.0);
    first_s += *timing.first_launch_seconds;
    ++timed;
  }
  // A progress line comes once its launch is profiled: the first one's profiling is in first_s, not after it.
  if (timed > 0 && check.rows > timed && after_first_s > 0) {
    const double per_launch = after_first_s / double(check.rows - timed);
    measured.seconds_per_launch = per_launch;
    const double start_up_s = (first_s - double(timed) * per_launch) / double(timed);
    if (plan.start_up_seconds > 0) measured.start_up_overhead_s = std::max(start_up_s - plan.start_up_seconds, 0.0);
    return measured;
  }
  const double workload_s = double(plan.passes.size()) * plan.seconds_per_pass;
  if (check.rows > 0 && stage_s > workload_s) measured.seconds_per_launch = (stage_s - workload_s) / double(check.rows);
  return measured;
}

}  // namespace llmprof::detail
