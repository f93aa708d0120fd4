// KernelSelection -> JSON (see kernel_selection_json.hpp).
#include "analysis/kernel_selection_json.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

namespace llmprof::detail {
namespace {

boost::json::value rule_json(const KernelSelection& selection) {
  if (!selection.coverage_target) return {{"kind", "top_n"}, {"n", selection.kernels.size()}};
  return {{"kind", "coverage"},
          {"target", *selection.coverage_target},
          {"max_kernels", selection.max_kernels},
          {"capped", selection.capped}};
}

boost::json::array coverage_steps_json(const std::vector<CoverageStep>& steps) {
  boost::json::array array;
  for (const auto& step : steps) {
    array.emplace_back(boost::json::object{{"target", step.target},
                                           {"reachable", step.reachable},
                                           {"kernels", step.kernels},
                                           {"more_kernels", step.more_kernels}});
  }
  return array;
}

boost::json::value collectives_json(const KernelSelection& selection) {
  boost::json::array names;
  for (const auto& kernel : selection.collectives_left_out) names.emplace_back(kernel.name);
  return {{"count", selection.collectives_left_out.size()},
          {"total_time_ns", selection.collective_time_ns},
          {"share", selection.collective_share},
          {"names", std::move(names)}};
}

boost::json::array strings_json(const std::vector<std::string>& strings) {
  boost::json::array array;
  for (const auto& text : strings) array.emplace_back(text);
  return array;
}

}  // namespace

boost::json::object kernel_selection_json(const KernelSelection& selection) {
  boost::json::object object;
  object["stage"] = selection.stage;
  object["domain"] = selection.domain;
  object["n"] = selection.kernels.size();
  object["kernel_regex"] = selection.kernel_regex;
  object["coverage"] = selection.coverage;
  object["name_base"] = to_string(selection.name_base);
  object["launch_count"] = selection.launch_count;
  object["source"] = selection.source;
  object["stage_kernel_time_ns"] = selection.stage_kernel_time_ns;
  object["stage_kernel_count"] = selection.stage_kernel_count;
  boost::json::array kernels;
  for (const auto& kernel : selection.kernels) {
    kernels.emplace_back(boost::json::object{{"name", kernel.name},
                                             {"match_name", kernel.match_name},
                                             {"share", kernel.share},
                                             {"total_time_ns", kernel.total_time_ns},
                                             {"instances", kernel.instances}});
  }
  object["kernels"] = std::move(kernels);
  object["also_matched"] = strings_json(selection.also_matched);
  object["rule"] = rule_json(selection);
  object["more_coverage"] = coverage_steps_json(selection.more_coverage);
  object["collectives_left_out"] = collectives_json(selection);
  return object;
}

}  // namespace llmprof::detail
