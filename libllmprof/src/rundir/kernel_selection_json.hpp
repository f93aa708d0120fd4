// The kernel selection (llmprof/kernel_selection_record.hpp's KernelSelection) as JSON: one field table per type
// writes the pipeline's MAIN/nsys/selection.json and report.json's top_kernel_selection, and reads both back, with
// each figure's bound in its row. The select stage and the analysis write it; the analysis, the report and compare read
// it; none of them names a key of its own.
#pragma once

#include <boost/json/object.hpp>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/figure_checks.hpp"
#include "llmprof/kernel_selection_record.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

// stage, domain, n, kernel_regex, coverage, name_base, launch_count, source, the stage's totals, kernels,
// also_matched, rule ({kind: top_n, n} or {kind: coverage, target, max_kernels, capped}), more_coverage
// ([{target, reachable, kernels, more_kernels}]) and collectives_left_out ({count, total_time_ns, share, names,
// kernels}), in that order.
boost::json::object kernel_selection_json(const KernelSelection& selection);
// MAIN/nsys/selection.json's text: the record, then its schema ("llmprof.kernel_selection/1").
std::string kernel_selection_file(const KernelSelection& selection);

// The select stage's MAIN/nsys/selection.json as the selection it wrote, so that report.json's kernels are the
// kernels ncu profiled. Strict: a key the table marks required that is missing, a key of the wrong type, or a
// figure outside its row's bound (a coverage of 1.7, a negative time) is a parse_error naming `where` (the file)
// and the key. Files written before stage_kernel_instances and the collectives' own figures were recorded read
// with those at 0; files written before the coverage rule (no "rule") read as the top-N selections they were.
Result<KernelSelection> read_kernel_selection(const std::filesystem::path& file);
Result<KernelSelection> kernel_selection_from_json(const boost::json::object& object, const std::string& where);

// report.json's top_kernel_selection, read through the same table but leniently, as report.json's other records
// are: absent keys keep their defaults (report.json files of other tools give only stage, n, kernel_regex and
// coverage); a key of the wrong type throws JsonFieldError naming `where` + the key.
KernelSelection read_top_kernel_selection(const boost::json::object& object, const std::string& where);

// Withholds each figure of the selection that breaks its row's bound (the coverage, the shares, the steps'
// targets: fractions; times and launches: >= 0), with a warning from `check` naming the figure and `file`. A plain
// number falls back to 0 (FigureChecker::apply); `check.any_withheld()` says whether one did.
void withhold_impossible_figures(KernelSelection& selection, FigureChecker& check, std::string_view file);

}  // namespace llmprof::detail
