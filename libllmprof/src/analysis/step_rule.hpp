// What counts as a step, for step kinds, range discovery and the cross-rank view alike: a closed NVTX range
// instance that no other instance of the same range encloses on its thread. A `decode_batch` opened inside a
// `decode_batch` (a helper that opens the range again) is part of the outer step, not a second one; a range
// left open at exit has no end in the export and never becomes an instance (NsysSqliteReader::read_nvtx_ranges
// counts it as unclosed). Also where each instance's enclosing range is found, since a range's first instance
// need not sit where most of its instances do.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/timeline.hpp"

namespace llmprof::detail {

struct RangeSpan {
  std::int64_t thread = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// For each span of one range, whether it is outermost: no other span of the list on its thread encloses it.
std::vector<bool> outermost_spans(const std::vector<RangeSpan>& spans);

struct StepInstances {
  std::vector<const TimelineInstance*> counted;  // outermost instances, in CPU start order
  std::int64_t nested = 0;                       // set aside: inside another instance of the same range
};
StepInstances step_instances(const TimelineStage& stage);

// The one line a report gives the rule when it set something aside; "" when it set nothing aside.
std::string step_rule_note(std::int64_t nested, std::int64_t unclosed);

// Per stage (by qualified name), how many of its instances each enclosing stage holds (the innermost instance of
// another stage on the same thread that contains it); instances at the top level are not counted.
using EnclosingCounts = std::map<std::string, std::map<std::string, std::int64_t>>;
EnclosingCounts enclosing_stages(const TimelineReport& timeline);

// The enclosing stage that holds most of `stage`'s instances (the first by name on a tie); nullopt when every
// instance is at the top level.
std::optional<std::string> main_enclosing_stage(const EnclosingCounts& counts, const std::string& stage);

}  // namespace llmprof::detail
