// A KernelSelection as JSON: the one serialisation behind report.json's top_kernel_selection and the
// pipeline's nsys/selection.json, so the two never describe a selection differently.
#pragma once

#include <boost/json/object.hpp>
#include <filesystem>

#include "llmprof/kernel_selection.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

// stage, domain, source, name_base, n, coverage, stage totals, kernel_regex, launch_count, kernels,
// also_matched, rule ({kind: top_n, n} or {kind: coverage, target, max_kernels, capped}), more_coverage
// ([{target, reachable, kernels, more_kernels}]) and collectives_left_out ({count, total_time_ns, share, names}).
boost::json::object kernel_selection_json(const KernelSelection& selection);

// The reverse, for the analysis: the select stage's MAIN/nsys/selection.json as the selection it wrote, so that
// report.json's kernels are the kernels ncu profiled (the analysis used to select again, from another
// stage under run.on_empty_gate = discover). Strict: a missing field or one of the wrong type is a parse_error
// naming the file and the field. Files written before stage_kernel_instances and the collectives' own figures
// were recorded read with those at 0 (the figures the analysis takes from a selection are the kernels).
Result<KernelSelection> read_kernel_selection(const std::filesystem::path& file);
Result<KernelSelection> kernel_selection_from_json(const boost::json::object& object, const std::string& where);

}  // namespace llmprof::detail
