// The timeline report as a JSON object: written alone by timeline_json() and as the "timeline" member
// of analysis/report.json, from one builder so the two never differ.
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>

#include "llmprof/timeline.hpp"

namespace llmprof::detail {

// report.json keeps every instance of the stages the report charts (the selection's loop stage and the stages
// directly inside it, e.g. decode and decode_step) and the first `kept` of any other stage: a two-GPU run's
// report.json held 4,096 all_reduce instances per rank, 3.1 MB. analysis/instances.csv has them all.
struct InstanceCap {
  std::string loop_stage;  // qualified name; "" caps every stage
  std::size_t kept = 512;
};

// `cap`: nullopt writes every instance (timeline_json()).
boost::json::object timeline_json_object(const TimelineReport& report, const std::optional<InstanceCap>& cap = {});

}  // namespace llmprof::detail
