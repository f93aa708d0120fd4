// KernelSelection -> JSON (see kernel_selection_json.hpp).
#include "analysis/kernel_selection_json.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "llmprof/choice.hpp"

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

boost::json::object selected_kernel_json(const SelectedKernel& kernel) {
  return boost::json::object{{"name", kernel.name},
                             {"match_name", kernel.match_name},
                             {"share", kernel.share},
                             {"total_time_ns", kernel.total_time_ns},
                             {"instances", kernel.instances}};
}

boost::json::value collectives_json(const KernelSelection& selection) {
  boost::json::array names;
  boost::json::array kernels;
  for (const auto& kernel : selection.collectives_left_out) {
    names.emplace_back(kernel.name);
    kernels.emplace_back(selected_kernel_json(kernel));
  }
  return {{"count", selection.collectives_left_out.size()},
          {"total_time_ns", selection.collective_time_ns},
          {"share", selection.collective_share},
          {"names", std::move(names)},
          {"kernels", std::move(kernels)}};
}

SelectedKernel selected_kernel_from(const boost::json::object& object, const std::string& where) {
  SelectedKernel kernel;
  kernel.name = required_field(json_string(object, "name", where + ".name"), where + ".name");
  kernel.match_name = json_string(object, "match_name", where + ".match_name").value_or(kernel.name);
  kernel.share = required_field(json_number(object, "share", where + ".share"), where + ".share");
  kernel.total_time_ns =
      required_field(json_integer(object, "total_time_ns", where + ".total_time_ns"), where + ".total_time_ns");
  kernel.instances = required_field(json_integer(object, "instances", where + ".instances"), where + ".instances");
  return kernel;
}

bool json_bool(const boost::json::object& object, std::string_view key, const std::string& where) {
  const auto* value = object.if_contains(key);
  if (value == nullptr || value->is_null()) return false;
  if (!value->is_bool()) throw JsonFieldError{where};
  return value->as_bool();
}

std::size_t json_count(const boost::json::object& object, std::string_view key, const std::string& where) {
  const auto value = json_integer(object, key, where);
  if (value && *value < 0) throw JsonFieldError{where};
  return value ? static_cast<std::size_t>(*value) : 0;
}

void read_rule(const boost::json::object& object, const std::string& where, KernelSelection& selection) {
  const auto* rule = object.if_contains("rule");
  if (rule == nullptr) return;  // written before the coverage rule existed: the top-N rule, the only one then
  if (!rule->is_object()) throw JsonFieldError{where + ".rule"};
  const auto& fields = rule->as_object();
  const std::string kind = required_field(json_string(fields, "kind", where + ".rule.kind"), where + ".rule.kind");
  if (kind == "coverage") {
    selection.coverage_target =
        required_field(json_number(fields, "target", where + ".rule.target"), where + ".rule.target");
    selection.max_kernels = json_count(fields, "max_kernels", where + ".rule.max_kernels");
    selection.capped = json_bool(fields, "capped", where + ".rule.capped");
  } else if (kind != "top_n") {
    throw JsonFieldError{where + ".rule.kind"};
  }
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
  object["stage_kernel_instances"] = selection.stage_kernel_instances;
  object["stage_kernel_count"] = selection.stage_kernel_count;
  boost::json::array kernels;
  for (const auto& kernel : selection.kernels) kernels.emplace_back(selected_kernel_json(kernel));
  object["kernels"] = std::move(kernels);
  object["also_matched"] = strings_json(selection.also_matched);
  object["rule"] = rule_json(selection);
  object["more_coverage"] = coverage_steps_json(selection.more_coverage);
  object["collectives_left_out"] = collectives_json(selection);
  return object;
}

Result<KernelSelection> kernel_selection_from_json(const boost::json::object& object, const std::string& where) {
  try {
    KernelSelection selection;
    selection.stage = required_field(json_string(object, "stage", where + ".stage"), where + ".stage");
    selection.domain = json_string(object, "domain", where + ".domain").value_or("");
    selection.source = json_string(object, "source", where + ".source").value_or("");
    const std::string base =
        required_field(json_string(object, "name_base", where + ".name_base"), where + ".name_base");
    const auto parsed_base = parse_choice<KernelNameBase>(base);
    if (!parsed_base) throw JsonFieldError{where + ".name_base"};
    selection.name_base = *parsed_base;
    for (const auto& kernel : json_objects(object, "kernels", where + ".kernels"))
      selection.kernels.push_back(selected_kernel_from(kernel, where + ".kernels[]"));
    selection.stage_kernel_time_ns = required_field(json_integer(object, "stage_kernel_time_ns",
                                                                 where + ".stage_kernel_time_ns"),
                                                    where + ".stage_kernel_time_ns");
    selection.stage_kernel_instances =
        json_integer(object, "stage_kernel_instances", where + ".stage_kernel_instances").value_or(0);
    selection.stage_kernel_count = json_count(object, "stage_kernel_count", where + ".stage_kernel_count");
    selection.coverage = required_field(json_number(object, "coverage", where + ".coverage"), where + ".coverage");
    read_rule(object, where, selection);
    for (const auto& step : json_objects(object, "more_coverage", where + ".more_coverage")) {
      CoverageStep read;
      read.target = required_field(json_number(step, "target", where + ".more_coverage[].target"),
                                   where + ".more_coverage[].target");
      read.reachable = json_bool(step, "reachable", where + ".more_coverage[].reachable");
      read.kernels = json_count(step, "kernels", where + ".more_coverage[].kernels");
      read.more_kernels = json_count(step, "more_kernels", where + ".more_coverage[].more_kernels");
      selection.more_coverage.push_back(read);
    }
    if (const auto* collectives = object.if_contains("collectives_left_out");
        collectives != nullptr && collectives->is_object()) {
      const auto& fields = collectives->as_object();
      for (const auto& kernel : json_objects(fields, "kernels", where + ".collectives_left_out.kernels"))
        selection.collectives_left_out.push_back(selected_kernel_from(kernel, where + ".collectives_left_out.kernels[]"));
      selection.collective_time_ns =
          json_integer(fields, "total_time_ns", where + ".collectives_left_out.total_time_ns").value_or(0);
      selection.collective_share = json_number(fields, "share", where + ".collectives_left_out.share").value_or(0);
    }
    selection.kernel_regex =
        required_field(json_string(object, "kernel_regex", where + ".kernel_regex"), where + ".kernel_regex");
    selection.also_matched = json_strings(object, "also_matched", where + ".also_matched");
    selection.launch_count = json_integer(object, "launch_count", where + ".launch_count").value_or(0);
    return selection;
  } catch (const JsonFieldError& error) {
    return make_error(ErrorCode::parse_error, where + ": the field " + error.field + " is missing or of the wrong type",
                      "the select stage writes this file; run `deep-profile run --resume MAIN` from select, or delete "
                      "it to have the analysis select again",
                      where);
  }
}

Result<KernelSelection> read_kernel_selection(const std::filesystem::path& file) {
  const auto text = read_file_text(file);
  if (!text) {
    return make_error(ErrorCode::not_found, "cannot read the kernel selection " + file.string(),
                      "the select stage writes it (nsys/selection.json)", file.string());
  }
  auto object = parse_json_object(*text, file);
  if (!object) return object.error();
  return kernel_selection_from_json(object.value(), file.string());
}

}  // namespace llmprof::detail
