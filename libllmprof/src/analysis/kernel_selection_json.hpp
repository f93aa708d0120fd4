// A KernelSelection as JSON: the one serialisation behind report.json's top_kernel_selection and the
// pipeline's nsys/selection.json, so the two never describe a selection differently.
#pragma once

#include <boost/json/object.hpp>

#include "llmprof/kernel_selection.hpp"

namespace llmprof::detail {

// stage, domain, source, name_base, n, coverage, stage totals, kernel_regex, launch_count, kernels,
// also_matched, rule ({kind: top_n, n} or {kind: coverage, target, max_kernels, capped}), more_coverage
// ([{target, reachable, kernels, more_kernels}]) and collectives_left_out ({count, total_time_ns, share, names}).
boost::json::object kernel_selection_json(const KernelSelection& selection);

}  // namespace llmprof::detail
